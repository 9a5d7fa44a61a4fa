"""The bench items as scoring reads them, loaded column-wise from ``items.parquet`` (no per-item validation).

``medr2 score`` needs a few fields of every item; building and validating a full :class:`medr2.records.Item`
per row dominated scoring time on large benches. :class:`ScoringItem` carries exactly the fields that the
scorer, the tidy table and the judge prompts read (same names and types as on ``Item``), so either can be
passed where items are expected. JSON columns are decoded once per distinct value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa

from medr2 import jsonsafe
from medr2.errors import BadInput
from medr2.records import Box, Item

_JSON = ("options", "answer_box", "meta", "roles")
_COLUMNS = ("item_id", "case_id", "chain_id", "step", "stage", "task", "form", "question", "options", "answer",
            "answer_box", "chance", "pair_id", "image_width", "image_height", "variant", "parent_id", "lure",
            "split", "meta", "roles")
_REQUIRED = ("item_id", "case_id", "stage", "task", "form", "question", "answer", "chance")
_DEFAULTS: dict[str, Any] = {"options": [], "variant": "clean", "meta": {}}
# converted once per distinct value: the JSON columns and the strings that repeat across items
_BY_VALUE = frozenset((*_JSON, "task", "form", "question", "variant", "split", "lure", "chain_id", "case_id"))


@dataclass(slots=True)
class ScoringItem:
    """The fields of an :class:`~medr2.records.Item` that scoring reads. Treated as read-only; not ``frozen``: a
    frozen dataclass's ``__init__`` sets each field through ``object.__setattr__`` (≈ 3.9 µs per record against
    0.3 µs here, measured), and scoring makes a record per item for each batch and each chunk of cases (no
    record is hashable either way: ``meta`` is a dict)."""

    item_id: str
    case_id: str
    chain_id: str | None
    step: int | None
    stage: int
    task: str
    form: str
    question: str
    options: list[str]
    answer: str
    answer_box: Box | None
    chance: float
    pair_id: str | None
    image_width: int | None
    image_height: int | None
    variant: str
    parent_id: str | None
    lure: str | None
    split: str | None
    meta: dict[str, Any] = field(default_factory=dict)
    roles: list[str] | None = None  # None: not recorded (medr2.perturb.registry.item_roles reads it)


class PredictionRow(NamedTuple):
    """The answer that counts for one (item, mode), as scoring reads it from a run's store: the fields of a
    :class:`medr2.records.Prediction` that scoring needs (a named tuple: as light as the row it replaces)."""

    item_id: str
    model_key: str
    mode: str
    status: str
    raw: str | None
    finish_reason: str | None


# What scoring accepts: full records (library API) or the light rows read by ``load_scoring_items``.
ItemLike = Item | ScoringItem


def load_scoring_items(bench_root: Path | str) -> tuple[dict[str, Any], dict[str, ScoringItem]]:
    """(bench manifest, items by id) of a bench folder, read column-wise."""
    from medr2.bench.format import ITEMS_FILE, read_items_table, verified_file

    # the check eval makes: a bench changed after the build is refused
    manifest, path = verified_file(bench_root, ITEMS_FILE)
    try:
        table = read_items_table(bench_root)
    except (OSError, pa.ArrowException) as e:
        raise BadInput(f"cannot read parquet: {e}", file=str(path)) from e
    missing = [c for c in _REQUIRED if c not in table.column_names]
    if missing:
        raise BadInput("missing column(s)", file=str(path), field=",".join(missing))
    n = table.num_rows
    cols: dict[str, list[Any]] = {}
    for name in _COLUMNS:
        if name not in table.column_names:
            cols[name] = [_DEFAULTS.get(name)] * n if name in _BY_VALUE else [None] * n
        elif name in _BY_VALUE:
            cols[name] = _by_value(table.column(name), name, path, table)
        else:
            cols[name] = table.column(name).to_pylist()
    items: dict[str, ScoringItem] = {}
    for row in zip(*(cols[c] for c in _COLUMNS), strict=True):
        it = ScoringItem(*row)
        if it.item_id is None:
            raise BadInput("an item without item_id", file=str(path), field="item_id")
        items[it.item_id] = it
    return manifest, items


def _by_value(column: pa.ChunkedArray, name: str, path: Path, table: pa.Table) -> list[Any]:
    """A column whose values repeat, converted once per distinct value (JSON decoded, or the string itself,
    so equal values share one object); missing values take the column's default."""
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        enc = column.combine_chunks().dictionary_encode()
        distinct = enc.dictionary.to_pylist()
        idx = enc.indices.fill_null(len(distinct)).to_numpy().astype(np.intp, copy=False)
    else:  # not stored as text: distinct values found in Python (a JSON column then fails below, naming the row)
        codes: dict[Any, int] = {}
        raw = [codes.setdefault(v, len(codes)) if v is not None else -1 for v in column.to_pylist()]
        distinct = list(codes)
        idx = np.asarray(raw, dtype=np.intp)
        idx[idx < 0] = len(distinct)
    lookup = np.empty(len(distinct) + 1, dtype=object)
    for k, v in enumerate(distinct):
        if name in _JSON:
            try:
                v = jsonsafe.loads(v)
            except BadInput as e:
                first = int(np.argmax(idx == k))
                raise BadInput(e.reason, file=str(path), record=str(table.column("item_id")[first]),
                               field=name) from e
            if name == "answer_box" and v is not None:
                v = tuple(float(x) for x in v)
        lookup[k] = v
    lookup[len(distinct)] = _DEFAULTS.get(name)
    return lookup[idx].tolist()  # type: ignore[no-any-return]
