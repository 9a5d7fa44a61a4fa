"""Explicit Arrow schemas for Case and Item, derived once from the record annotations.

Scalar fields (str, int, float, bool, string literals, optionals of these) become typed columns;
everything nested (lists, dicts, boxes, cues, sub-records) becomes a canonical JSON string column.
"""

from __future__ import annotations

import functools
import types
import typing
from dataclasses import dataclass
from typing import Any, Literal, Union

import pyarrow as pa
from pydantic import BaseModel

from medr2 import jsonsafe
from medr2.errors import BadInput
from medr2.records import canonical_json, jsonable

_SCALARS: dict[type, pa.DataType] = {str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_()}


def _scalar_type(annotation: Any) -> pa.DataType | None:
    """Arrow type of a scalar annotation (optionals unwrapped), or None when it is nested."""
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        kinds = {_scalar_type(a) for a in args}
        return kinds.pop() if len(kinds) == 1 and None not in kinds else None
    if origin is Literal:
        values = typing.get_args(annotation)
        return pa.string() if all(isinstance(v, str) for v in values) else None
    if isinstance(annotation, type):
        return _SCALARS.get(annotation)
    return None


@dataclass(frozen=True)
class RecordSchema:
    """Column layout of one record type."""

    model: type[BaseModel]
    schema: pa.Schema
    json_fields: frozenset[str]

    def to_row(self, record: BaseModel) -> dict[str, Any]:
        row: dict[str, Any] = {}
        for name in self.schema.names:
            value = getattr(record, name)
            if name in self.json_fields and value is not None:
                value = canonical_json(jsonable(value))
            row[name] = value
        return row

    def to_table(self, records: typing.Sequence[BaseModel]) -> pa.Table:
        return self.rows_table([self.to_row(r) for r in records])

    def rows_table(self, rows: typing.Sequence[dict[str, Any]]) -> pa.Table:
        """The Arrow table of rows made by :meth:`to_row`."""
        cols = {n: [r[n] for r in rows] for n in self.schema.names}
        return pa.Table.from_pydict(cols, schema=self.schema)

    @functools.cached_property
    def field_names(self) -> frozenset[str]:
        """The record's field names (``model.model_fields`` is slow to look up per row)."""
        return frozenset(self.model.model_fields)

    def decode_row(self, row: dict[str, Any]) -> dict[str, Any]:
        """Turn JSON columns back into structures; raises ValueError(field) on bad JSON."""
        out = dict(row)
        for name in self.json_fields:
            value = out.get(name)
            if value == "[]" or value == "{}":  # the common empty cells, without the decoder
                out[name] = [] if value == "[]" else {}
            elif value is not None:
                try:
                    out[name] = jsonsafe.loads(value)
                except BadInput as e:
                    raise _FieldError(name, f"not valid JSON: {e.reason}") from e
        return out


class _FieldError(ValueError):
    def __init__(self, field: str, reason: str) -> None:
        super().__init__(reason)
        self.field = field
        self.reason = reason


def record_schema(model: type[BaseModel]) -> RecordSchema:
    fields: list[pa.Field] = []
    json_fields: set[str] = set()
    for name, info in model.model_fields.items():
        typ = _scalar_type(info.annotation)
        if typ is None:
            typ = pa.string()
            json_fields.add(name)
        fields.append(pa.field(name, typ, nullable=True))
    return RecordSchema(model, pa.schema(fields), frozenset(json_fields))
