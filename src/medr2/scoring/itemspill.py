"""The bench's items on disk for ``medr2 score``: the columns scoring reads, written once to two Arrow IPC files
in the run's spill folder and read back a record batch at a time (:class:`SpilledRows`).

Scoring reads its items in two orders: a scoring batch is a range of item ids (``Store.counted_rows`` sorts by
mode, then item id), a chunk of the metrics a range of case ids (:class:`medr2.scoring.stream.CaseChunks`). So the
items are written twice, zstd-compressed, in record batches of ``batch_rows`` rows: sorted by item id
(``items-by-id.arrow``) and by case id (``items-by-case.arrow``, rows of a case in ``items.parquet`` order);
:meth:`SpilledRows.take` reads the record batches of whichever file holds the wanted rows in fewer batches. Reads
go through ``pread`` (``pa.OSFile``), not a memory map: what a read brings in is Arrow memory freed with the
result (the page cache is the kernel's and never counts in the process's RSS), so no page of the files stays
resident as the whole run touches them.

Per item what stays in memory is the rank of each position in each file (``int32``: 8 B); the sorted ids and
their order are :class:`medr2.scoring.itemcols.ScoringItems'`. The sorting is the columnar engine's
(:func:`spill_items`, issue 38): DuckDB loads the rows as they are read (each with its two ranks), then sorts
them by each rank (``ORDER BY``, spilling to a folder of its own inside the spill folder beyond
:data:`ENGINE_MEMORY`) and streams the sorted rows out, written a record batch at a time.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from medr2 import jsonsafe
from medr2.bench.sorting import connect
from medr2.errors import BadInput

# rows per record batch of the item files: a scoring batch of 50,000 consecutive ids reads ≈ 7-8 of them
ITEM_BATCH_ROWS = 8192
# the engine's memory while it sorts the items (DuckDB's memory_limit; beyond it, it spills to the spill folder)
ENGINE_MEMORY = "128MB"
BY_ID, BY_CASE = "items-by-id.arrow", "items-by-case.arrow"
_RANKS = ("_id_rank", "_case_rank")


def index_type(n: int) -> type[np.signedinteger[Any]]:
    """The narrowest integer type this module uses for positions among ``n`` rows."""
    return np.int32 if n < 2**31 - 1 else np.int64


def sorted_codes(arr: pa.Array) -> tuple[np.ndarray, list[Any]]:
    """(per row the index of its value among the sorted distinct values, those values); None sorts last."""
    enc = arr if pa.types.is_dictionary(arr.type) else arr.dictionary_encode()
    values = enc.dictionary.to_pylist()
    idx = enc.indices.fill_null(len(values)).to_numpy(zero_copy_only=False).astype(np.int64)
    rank = sorted(range(len(values)), key=lambda k: values[k])
    remap = np.empty(len(values) + 1, dtype=np.int64)
    remap[np.asarray(rank, dtype=np.int64)] = np.arange(len(values), dtype=np.int64)
    remap[len(values)] = len(values)
    return remap[idx], [values[k] for k in rank]


class _File:
    """One item file: its path, per position its row there (``rank``), and a reader per set of columns."""

    def __init__(self, path: Path, rank: np.ndarray, names: Sequence[str], batch_rows: int) -> None:
        self.path, self.rank, self.names, self.batch_rows = path, rank, list(names), batch_rows
        self._source = pa.OSFile(str(path))
        self._readers: dict[tuple[str, ...], pa.ipc.RecordBatchFileReader] = {}

    def reader(self, columns: tuple[str, ...]) -> pa.ipc.RecordBatchFileReader:
        got = self._readers.get(columns)
        if got is None:
            fields = sorted(self.names.index(c) for c in columns)
            got = self._readers[columns] = pa.ipc.open_file(
                self._source, options=pa.ipc.IpcReadOptions(included_fields=fields))
        return got

    def close(self) -> None:
        self._readers.clear()
        self._source.close()


class SpilledRows:
    """The items' columns in two files (see the module); rows are addressed by position (row of
    ``items.parquet``)."""

    def __init__(self, by_id: _File, by_case: _File, schema: pa.Schema) -> None:
        self.files = (by_id, by_case)
        self.schema = schema
        self.num_rows = len(by_id.rank)

    def take(self, positions: np.ndarray, columns: Sequence[str]) -> pa.Table:
        """Those rows (in that order) of those columns, read from the file that holds them in fewer record
        batches."""
        pos = np.asarray(positions, dtype=np.int64)
        cols = tuple(columns)
        if not len(pos):
            return self.schema.empty_table().select(list(cols))
        best, rows = None, None
        for f in self.files:
            r = f.rank[pos].astype(np.int64)
            n_blocks = len(np.unique(r // f.batch_rows))
            if best is None or n_blocks < best[0]:
                best, rows = (n_blocks, f), r
        assert best is not None and rows is not None
        f = best[1]
        reader = f.reader(cols)
        by_row = np.argsort(rows, kind="stable")
        ordered = rows[by_row]
        blocks = ordered // f.batch_rows
        cuts = np.flatnonzero(np.diff(blocks)) + 1
        pieces = []
        for part in np.split(ordered, cuts):
            b = int(part[0] // f.batch_rows)
            batch = reader.get_batch(b)
            pieces.append(batch.take(pa.array(part - b * f.batch_rows, type=pa.int64())).select(list(cols)))
            del batch
        table = pa.Table.from_batches(pieces).combine_chunks()
        del pieces
        back = np.empty(len(by_row), dtype=np.int64)
        back[by_row] = np.arange(len(by_row), dtype=np.int64)
        return table.take(pa.array(back, type=pa.int64()))

    def column(self, name: str) -> pa.Array:
        """One whole column in position order, text dictionary-encoded (one dictionary, built a record batch
        at a time)."""
        f = self.files[0]
        reader = f.reader((name,))
        text = pa.types.is_string(self.schema.field(name).type) or pa.types.is_large_string(
            self.schema.field(name).type)
        chunks = []
        for b in range(reader.num_record_batches):
            arr = reader.get_batch(b).column(0)
            chunks.append(pc.dictionary_encode(arr) if text else arr)
        if not chunks:
            return pa.array([], type=self.schema.field(name).type)
        whole = pa.chunked_array(chunks)
        if text:
            whole = whole.unify_dictionaries()
        arr = whole.combine_chunks()
        del chunks, whole
        return arr.take(pa.array(f.rank, type=pa.int64()))

    def close(self) -> None:
        for f in self.files:
            f.close()


def ranks(keys: np.ndarray) -> np.ndarray:
    """Per position its row in the stable sort of ``keys``."""
    order = np.argsort(keys, kind="stable")
    rank = np.empty(len(keys), dtype=index_type(len(keys)))
    rank[order] = np.arange(len(keys), dtype=rank.dtype)
    return rank


def spill_items(batches: Iterable[pa.RecordBatch], schema: pa.Schema, id_rank: np.ndarray, case_rank: np.ndarray,
                folder: Path, *, batch_rows: int = ITEM_BATCH_ROWS, memory_limit: str = ENGINE_MEMORY
                ) -> SpilledRows:
    """Write the rows ``batches`` yields (of ``schema``, in position order) to the two item files in ``folder``:
    ``id_rank`` / ``case_rank`` are per position its row in id / case order. DuckDB (its memory held to
    ``memory_limit``, the rest spilled to ``folder/engine``, removed after) sorts them; an error of the batches'
    own (a read refused) is raised as it is, after the engine has stopped."""
    import duckdb

    ranks_of = {BY_ID: id_rank, BY_CASE: case_rank}
    failed: list[BaseException] = []

    def ranked() -> Iterator[pa.RecordBatch]:
        start = 0
        try:
            for batch in batches:
                end = start + batch.num_rows
                yield pa.RecordBatch.from_arrays(
                    [*batch.columns, *(pa.array(r[start:end], type=pa.int64()) for r in ranks_of.values())],
                    schema=with_ranks)
                start = end
        except Exception as e:  # the engine would wrap it: kept, and raised as it is below
            failed.append(e)
            raise
        if start != len(id_rank):
            failed.append(ValueError(f"{start} rows read, {len(id_rank)} expected"))

    with_ranks = schema.append(pa.field(_RANKS[0], pa.int64())).append(pa.field(_RANKS[1], pa.int64()))
    temp = folder / "engine"
    con = connect(temp, memory_limit, threads=1)
    try:
        try:
            con.register("spilled_rows", pa.RecordBatchReader.from_batches(with_ranks, ranked()))
            con.execute("CREATE TABLE items AS SELECT * FROM spilled_rows")
            con.unregister("spilled_rows")
        except duckdb.Error:
            if failed:
                raise failed[0] from None
            raise
        if failed:
            raise failed[0]
        zstd = pa.ipc.IpcWriteOptions(compression="zstd")
        for name, key in zip(ranks_of, _RANKS, strict=True):
            rel = con.sql(f"SELECT * EXCLUDE ({', '.join(_RANKS)}) FROM items ORDER BY {key}")
            with rel.to_arrow_reader(batch_size=batch_rows) as sorted_rows, \
                    pa.ipc.new_file(str(folder / name), schema, options=zstd) as out:
                _write_batches(sorted_rows, schema, out, batch_rows)
    finally:
        con.close()
        shutil.rmtree(temp, ignore_errors=True)
    return SpilledRows(_File(folder / BY_ID, id_rank, schema.names, batch_rows),
                       _File(folder / BY_CASE, case_rank, schema.names, batch_rows), schema)


def _write_batches(rows: pa.RecordBatchReader, schema: pa.Schema, out: pa.ipc.RecordBatchFileWriter,
                   batch_rows: int) -> None:
    """The engine's rows written in record batches of exactly ``batch_rows`` rows (the last one shorter), of
    ``schema``'s types (:meth:`SpilledRows.take` finds a row's batch by its rank)."""
    pending: list[pa.RecordBatch] = []
    held = 0
    for batch in rows:
        pending.append(batch)
        held += batch.num_rows
        while held >= batch_rows:
            whole = pa.Table.from_batches(pending).combine_chunks()
            out.write_batch(_typed(whole.slice(0, batch_rows), schema))
            rest = whole.slice(batch_rows)
            pending, held = ([rest.combine_chunks().to_batches()[0]] if rest.num_rows else []), rest.num_rows
    if held:
        out.write_batch(_typed(pa.Table.from_batches(pending).combine_chunks(), schema))


def _typed(table: pa.Table, schema: pa.Schema) -> pa.RecordBatch:
    """One record batch of ``schema`` from the engine's rows (its types mapped back: a null column, ...)."""
    cols = [table.column(i).cast(f.type) for i, f in enumerate(schema)]
    return pa.Table.from_arrays(cols, schema=schema).combine_chunks().to_batches()[0]


_VALID_JSON_MAX = 1 << 16  # distinct valid JSON values remembered (then forgotten and checked again)


def json_failure(table: pa.Table, name: str, valid: set[str] | None = None) -> tuple[Exception, int] | None:
    """The first value of a JSON column that does not decode (in order of first appearance) and its row;
    ``valid`` (values known to decode, added to) spares decoding a value again in the next row group."""
    col = table.column(name)
    arr = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
        enc = pc.dictionary_encode(arr)
        values = enc.dictionary.to_pylist()
        idx = enc.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    elif pa.types.is_dictionary(arr.type):
        values = arr.dictionary.to_pylist()
        idx = arr.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    else:
        values = arr.to_pylist()
        idx = np.arange(len(values), dtype=np.int64)
    for k, v in enumerate(values):
        if v is None or (valid is not None and v in valid):
            continue
        try:
            jsonsafe.loads(v)
        except BadInput as e:
            return e, int(np.argmax(idx == k))
        if valid is not None:
            if len(valid) >= _VALID_JSON_MAX:
                valid.clear()
            valid.add(v)
    return None
