"""The bench items as ``medr2 score`` holds them: the columns it reads, kept as Arrow arrays, with records
(:class:`~medr2.scoring.items.ScoringItem`) made only for the items a batch or chunk of cases needs.

A record of every item would take ≈ 1.6 KiB each; :class:`ScoringItems` keeps the
columns column-wise (repeated strings and JSON dictionary-encoded: ≈ 130 B per item) plus the item ids as one
sorted fixed-width byte array for lookups, and is a ``Mapping[str, ScoringItem]``: :meth:`ScoringItems.load`
makes the records of a set of rows (the *window*, kept until the next ``load``), a lookup outside the window
makes that one record. Item positions (``positions``) are row numbers of ``items.parquet``. It is the one
reader of the bench's items for scoring (issue 38: the row reader ``load_scoring_items`` beside it is gone).
Every JSON value is checked once at open (per distinct value), a bad one naming its first row.

Given a folder (``medr2 score``'s spill folder), :func:`open_scoring_items` does not hold the columns: it loads
them into the columnar engine there (:mod:`medr2.scoring.itemengine`: a DuckDB table, the rows a batch or a chunk
needs read back by a join) and keeps only the sorted ids, their order and per item its rank in id order (≈ 24 B
per item for 16-character ids).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from medr2 import jsonsafe
from medr2.errors import BadInput
from medr2.scoring.itemengine import EngineRows, json_failure, load_items, ranks, sorted_codes
from medr2.scoring.items import _BY_VALUE, _COLUMNS, _DEFAULTS, _JSON, ItemLike, ScoringItem

if TYPE_CHECKING:
    from medr2.bench.table import BenchTable
    from medr2.records import Item

_ITER_ROWS = 65_536  # ids converted to Python strings at a time when iterating
_READ_BY_VALUE = ("answer", "parent_id", "pair_id")  # text read dictionary-encoded beside ``_BY_VALUE``


def _is_text(t: pa.DataType) -> bool:
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t))


def _fixed_bytes(ids: pa.Array) -> np.ndarray:
    """Strings as a numpy fixed-width bytes array (``S<n>``; the UTF-8 bytes, NUL-padded), without Python
    strings when every value has the same length (hex ids)."""
    ids = ids.cast(pa.string()) if not pa.types.is_string(ids.type) else ids
    n = len(ids)
    if n == 0:
        return np.zeros(0, dtype="S1")
    lengths = pc.binary_length(ids).fill_null(0).to_numpy(zero_copy_only=False)
    width = max(1, int(lengths.max()))
    if ids.null_count == 0 and int(lengths.min()) == width:
        offsets = np.frombuffer(ids.buffers()[1], dtype=np.int32, count=n + 1, offset=ids.offset * 4)
        data = ids.buffers()[2]
        start = int(offsets[0])
        return np.frombuffer(data, dtype=f"S{width}", count=n, offset=start).copy()
    return np.array([(v or "").encode() for v in ids.to_pylist()], dtype=f"S{width}")


class _TableRows:
    """The items' columns held in memory (one table, rows in position order)."""

    def __init__(self, table: pa.Table) -> None:
        self.table = table
        self.num_rows = int(table.num_rows)

    def take(self, positions: np.ndarray, columns: Sequence[str]) -> pa.Table:
        return self.table.select(list(columns)).take(pa.array(positions, type=pa.int64()))

    def column(self, name: str) -> pa.Array:
        col = self.table.column(name)
        return col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)

    def close(self) -> None:
        pass


class ScoringItems(Mapping[str, ScoringItem]):
    """A bench's items for scoring, held by columns (see the module): in memory, or in the run's spill folder
    (:mod:`medr2.scoring.itemengine`, what :func:`open_scoring_items` makes when given a folder)."""

    def __init__(self, rows: _TableRows | EngineRows, keys: np.ndarray, path: Path,
                 order: np.ndarray | None = None) -> None:
        self.path = path
        self._rows = rows
        self._order = np.argsort(keys, kind="stable") if order is None else order
        self._sorted = keys[self._order]
        self._width = keys.dtype.itemsize
        # every id fills the width (no NUL padding to strip): the sorted ids give the ids back exactly
        self._exact = bool(len(keys) and int(np.char.str_len(self._sorted).min()) == self._width)
        self._window: dict[str, ScoringItem] = {}

    @classmethod
    def of_table(cls, table: pa.Table, path: Path) -> ScoringItems:
        """The items of a table (columns ``_COLUMNS``, repeated text dictionary-encoded) held in memory."""
        ids = table.column("item_id").combine_chunks() if table.num_rows else pa.array([], pa.string())
        if ids.null_count:
            raise BadInput("an item without item_id", file=str(path), field="item_id")
        return cls(_TableRows(table), _fixed_bytes(ids), path)

    @classmethod
    def from_mapping(cls, items: Mapping[str, ItemLike]) -> ScoringItems:
        """The same items, held by columns (for callers that built records themselves)."""
        cols: dict[str, list[Any]] = {c: [] for c in _COLUMNS}
        for it in items.values():
            for c in _COLUMNS:
                v = getattr(it, c)
                if c in _JSON:
                    v = json.dumps(list(v) if c == "answer_box" and v is not None else v)
                cols[c].append(v)
        types = {"step": pa.int64(), "stage": pa.int64(), "chance": pa.float64(), "image_width": pa.int64(),
                 "image_height": pa.int64()}
        table = pa.table({c: pa.array(v, type=types.get(c, pa.string())) for c, v in cols.items()})
        return cls.of_table(_encode(table), Path("<records>"))

    def close(self) -> None:
        """Close the engine's connection (an instance in the engine; the folder's owner removes its files)."""
        self._window = {}
        self._rows.close()

    # -- Mapping ------------------------------------------------------------------------------------

    def __len__(self) -> int:
        return int(self._rows.num_rows)

    def __iter__(self) -> Iterator[str]:
        n = len(self)
        for start in range(0, n, _ITER_ROWS):
            yield from self.ids(np.arange(start, min(n, start + _ITER_ROWS), dtype=np.int64))

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and (key in self._window or int(self.positions([key])[0]) >= 0)

    def __getitem__(self, key: str) -> ScoringItem:
        got = self._window.get(key)
        if got is not None:
            return got
        pos = int(self.positions([key])[0]) if isinstance(key, str) else -1
        if pos < 0:
            raise KeyError(key)
        return self.records(np.asarray([pos]))[key]

    # -- by position ---------------------------------------------------------------------------------

    def positions(self, ids: Sequence[str | None]) -> np.ndarray:
        """The row of each id (``int64``; -1 for an id that is not in the bench, or None)."""
        out = np.full(len(ids), -1, dtype=np.int64)
        if not len(ids) or not len(self._sorted):
            return out
        keys = _fixed_bytes(pa.array(ids, type=pa.string()))
        fits = np.asarray([v is not None for v in ids]) & (np.char.str_len(keys) <= self._width)
        keys = keys.astype(self._sorted.dtype)  # longer ids are cut here, and refused by ``fits``
        at = np.minimum(np.searchsorted(self._sorted, keys), len(self._sorted) - 1)
        hit = fits & (self._sorted[at] == keys)
        out[hit] = self._order[at[hit]]
        return out

    def column_positions(self, name: str) -> np.ndarray:
        """Per row the position of the item its column ``name`` names (``parent_id``; -1: none or unknown),
        looked up once per distinct value."""
        col = self.column(name)
        if not pa.types.is_dictionary(col.type):
            return self.positions(col.to_pylist())
        at = np.append(self.positions(col.dictionary.to_pylist()), -1)
        return at[col.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)]  # type: ignore[no-any-return]

    def ids(self, positions: np.ndarray) -> list[str]:
        """The item ids of those rows."""
        if isinstance(self._rows, EngineRows) and self._exact:  # from the ids held, not the engine
            at = self._rows.id_rank[np.asarray(positions, dtype=np.int64)]
            return np.char.decode(self._sorted[at], "utf-8").tolist()  # type: ignore[no-any-return]
        return self._rows.take(np.asarray(positions, dtype=np.int64), ("item_id",)).column(0).to_pylist()  # type: ignore[no-any-return]

    def column(self, name: str) -> pa.Array:
        """One column, as one array in position order (dictionary-encoded for repeated values)."""
        return self._rows.column(name)

    def codes(self, name: str) -> tuple[np.ndarray, list[Any]]:
        """(per row the index of its value among the sorted distinct values, those values); None sorts last."""
        return sorted_codes(self.column(name))

    def load(self, positions: np.ndarray) -> dict[str, ScoringItem]:
        """Make the records of those rows; they are the window that lookups read until the next ``load``."""
        self._window = {}
        self._window = self.records(positions)
        return self._window

    def records(self, positions: np.ndarray) -> dict[str, ScoringItem]:
        """The records of those rows, by item id (rows once each, in the order given)."""
        pos = np.asarray(positions, dtype=np.int64)
        if len(pos) > 1:
            _, first = np.unique(pos, return_index=True)
            pos = pos[np.sort(first)]
        sub = self._rows.take(pos, _COLUMNS)
        cols = [_values(_by_value(sub.column(c), c), c) for c in _COLUMNS]
        out: dict[str, ScoringItem] = {}
        for row in zip(*cols, strict=True):
            out[row[0]] = ScoringItem(*row)
        return out


def _by_value(column: pa.ChunkedArray, name: str) -> pa.ChunkedArray:
    """A text column whose values repeat dictionary-encoded (as the columns held in memory are), so that
    :func:`_values` converts each distinct value once."""
    if (name in _BY_VALUE or name in _READ_BY_VALUE) and _is_text(column.type):
        return pa.chunked_array([pc.dictionary_encode(column.combine_chunks())])
    return column


def _values(column: pa.ChunkedArray, name: str) -> list[Any]:
    """A column of some rows as Python values: dictionary-encoded ones decoded once per distinct value used."""
    arr = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if not pa.types.is_dictionary(arr.type):
        values = arr.to_pylist()
        if name in _JSON or name in _DEFAULTS:  # a column not stored as text (all null): missing takes the default
            fill = _DEFAULTS.get(name)
            return [fill if v is None else _decode(v, name) for v in values]
        return values  # type: ignore[no-any-return]
    idx = arr.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    used = np.unique(idx[idx >= 0])
    lookup = np.empty(len(arr.dictionary) + 1, dtype=object)
    lookup[-1] = _DEFAULTS.get(name)
    for k, v in zip(used.tolist(), arr.dictionary.take(pa.array(used, type=pa.int64())).to_pylist(), strict=True):
        lookup[k] = _decode(v, name)
    return lookup[idx].tolist()  # type: ignore[no-any-return]


def _decode(v: Any, name: str) -> Any:
    if name not in _JSON:
        return v
    v = jsonsafe.loads(v, field=name)
    if name == "answer_box" and v is not None:
        v = tuple(float(x) for x in v)
    return v


def _encode(table: pa.Table) -> pa.Table:
    """Repeated text columns dictionary-encoded, one chunk per column, dictionaries unified."""
    cols = {}
    for name in table.column_names:
        col = table.column(name)
        if name in _BY_VALUE and _is_text(col.type):
            col = pc.dictionary_encode(col)
        cols[name] = col
    return pa.table(cols).unify_dictionaries().combine_chunks()


def _filled(table: pa.Table) -> pa.Table:
    """The columns ``_COLUMNS``, a missing one filled with its default."""
    n = table.num_rows
    for name in _COLUMNS:
        if name not in table.column_names:
            fill = _DEFAULTS.get(name)
            table = table.append_column(name, pa.array([None if fill is None else json.dumps(fill)] * n
                                                       if name in _JSON else [fill] * n,
                                                       type=pa.string() if name in _BY_VALUE else pa.null()))
    return table.select(list(_COLUMNS))


def open_scoring_items(bench_root: Path | str, folder: Path | None = None, *, added: Sequence[Item] = ()
                       ) -> tuple[dict[str, Any], ScoringItems]:
    """(bench manifest, its items held by columns), checked (checksums, a missing column: the bench layer's
    refusals; bad JSON: BadInput), read through the bench layer (:meth:`medr2.bench.table.BenchTable.
    column_batches`). With ``folder`` (``medr2 score``'s spill folder) the columns are loaded into the engine
    there and joined as needed (:mod:`medr2.scoring.itemengine`); only the ids and per-item ranks stay in
    memory. ``added``: items held after the table's rows, as its last rows (the review
    fixes a run's ``--reviewed`` selections asked, as ``BenchTable.add_items`` adds them for eval)."""
    from medr2.bench.format import verify_checksums
    from medr2.bench.table import BenchTable

    bench = BenchTable(bench_root)
    verify_checksums(bench.root, bench.manifest)
    try:
        bench.add_items(added)
        names = bench.schema.names
        cols = [c for c in _COLUMNS if c in names]
        # writing errors (a full disk) are the environment's: raised as they are
        items = _in_engine(bench, cols, folder) if folder is not None and bench.count() > 0 else _held(bench, cols)
    finally:
        bench.close()
    pa.default_memory_pool().release_unused()  # the read's buffers, which the pool would keep
    return bench.manifest, items


def _held(bench: BenchTable, cols: list[str]) -> ScoringItems:
    """The items' columns held in memory, read a batch at a time with repeated values dictionary-encoded as read
    (the whole decoded table never exists)."""
    types = bench.schema
    repeated = [c for c in cols if (c in _BY_VALUE or c in _READ_BY_VALUE) and _is_text(types.field(c).type)]
    parts = list(bench.column_batches(cols, read_dictionary=repeated))
    table = pa.Table.from_batches(parts) if parts else types.empty_table().select(cols)
    del parts
    table = _encode(_filled(table))
    for name in _JSON:
        _check_json(table, name, bench.items_path)
    return ScoringItems.of_table(table, bench.items_path)


def _plain(table: pa.Table | pa.RecordBatch) -> pa.Table:
    """Dictionary-encoded columns (a file written from such a table reads back so) decoded: the engine's table
    holds plain values, one type per column whatever a row group's encoding."""
    table = pa.Table.from_batches([table]) if isinstance(table, pa.RecordBatch) else table
    for i, field in enumerate(table.schema):
        if pa.types.is_dictionary(field.type):
            table = table.set_column(i, field.name, table.column(i).cast(field.type.value_type))
    return table


def _in_engine(bench: BenchTable, cols: list[str], folder: Path) -> ScoringItems:
    """:func:`open_scoring_items` into ``folder``: the ids read first (the key of the engine's order), then every
    batch checked and loaded into the engine (:func:`medr2.scoring.itemengine.load_items`); the same refusals, in
    the same order (invalid JSON, then an item without id)."""
    path = bench.items_path
    ids = pa.chunked_array([_plain(b).column(0).combine_chunks() for b in bench.column_batches(["item_id"])],
                           type=pa.string()).combine_chunks()
    null_id = ids.null_count > 0
    keys = _fixed_bytes(ids)
    del ids
    id_rank = ranks(keys)
    order = np.empty(len(keys), dtype=id_rank.dtype)
    order[id_rank] = np.arange(len(keys), dtype=id_rank.dtype)
    first_bad: dict[str, tuple[Exception, str]] = {}
    valid: dict[str, set[str]] = {name: set() for name in _JSON}
    schema = _plain(_filled(bench.schema.empty_table().select(cols))).schema

    def checked() -> Iterator[pa.RecordBatch]:
        for batch in bench.column_batches(cols):
            part = _plain(_filled(pa.Table.from_batches([batch]))).cast(schema)
            for name in _JSON:
                if name not in first_bad and (bad := json_failure(part, name, valid[name])) is not None:
                    first_bad[name] = (bad[0], str(part.column("item_id")[bad[1]]))
            yield from part.combine_chunks().to_batches()

    rows = load_items(checked(), schema, id_rank, folder)
    try:
        for name in _JSON:
            if name in first_bad:
                e, record = first_bad[name]
                raise _json_error(e, path, record, name) from e
        if null_id:
            raise BadInput("an item without item_id", file=str(path), field="item_id")
    except BadInput:
        rows.close()
        raise
    return ScoringItems(rows, keys, path, order=order)


def _check_json(table: pa.Table, name: str, path: Path) -> None:
    """Every distinct value of a JSON column decodes (else BadInput naming the first bad row)."""
    col = table.column(name)
    arr = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    if not pa.types.is_dictionary(arr.type):
        values = arr.to_pylist()
        idx = np.arange(len(values), dtype=np.int64)
    else:
        values = arr.dictionary.to_pylist()
        idx = arr.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    for k, v in enumerate(values):
        if v is None:
            continue
        try:
            jsonsafe.loads(v)
        except BadInput as e:
            first = int(np.argmax(idx == k))
            raise _json_error(e, path, str(table.column("item_id")[first]), name) from e


def _json_error(e: Exception, path: Path, record: str, name: str) -> BadInput:
    """The one message of a JSON cell that does not decode, held in memory or spilled, as the row reader
    gives it: :mod:`medr2.jsonsafe`'s reason (not its text, so no location is named twice)."""
    return BadInput(e.reason if isinstance(e, BadInput) else str(e), file=str(path), record=record, field=name)
