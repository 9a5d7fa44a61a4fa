"""The bench's items in the columnar engine for ``medr2 score``: the columns scoring reads, loaded once into a
DuckDB database file in the run's spill folder, and the rows a batch of answers or a chunk of cases needs read
back by a join (:class:`EngineRows`).

Scoring reads its items in two orders: a scoring batch is a range of item ids (``Store.counted_rows`` sorts by
mode, then item id), a chunk of the metrics a set of whole cases (:class:`medr2.scoring.stream.CaseChunks`). The
table ``items`` (file :data:`DB_FILE`) holds per row its position (:data:`POS`, the row of ``items.parquet``) and
its rank in item id order (:data:`ID_RANK`), stored in that order (DuckDB sorts it as it loads it, spilling
beyond :data:`ENGINE_MEMORY`): :meth:`EngineRows.take` registers the wanted positions as an Arrow table and joins
it with ``items`` on the position, bounded to the wanted ranks' range (a batch of consecutive ids reads only the
row groups that hold them, by the engine's zone maps; a chunk of cases scans the table). The engine replaced two
Arrow IPC files sorted by id and by case, read back with ``pread`` (issue 38).

Per item what stays in memory is its rank in id order (``int32``: 4 B); the sorted ids and their order are
:class:`medr2.scoring.itemcols.ScoringItems'`. The database is written once and then only read, by a read-only
connection per process, each spilling to its own folder beside the file (the spill folder's owner removes them
all). A connection never crosses a fork (``medr2 score --workers N``): the process closes its connections before
it forks (``os.register_at_fork``) and reopens them when next needed; a worker opens its own.
"""

from __future__ import annotations

import os
import shutil
import weakref
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from medr2 import jsonsafe
from medr2.bench.sorting import connect, quoted
from medr2.errors import BadInput

# the engine's memory (DuckDB's memory_limit, per process; beyond it, it spills to the spill folder)
ENGINE_MEMORY = "128MB"
DB_FILE = "items.duckdb"
POS, ID_RANK = "_pos", "_id_rank"
_LOAD_FOLDER = "engine"  # the load's temporary folder (removed after), and each reader's, with its pid


_OPEN: weakref.WeakSet[EngineRows] = weakref.WeakSet()  # the instances holding a connection in this process


def _close_before_fork() -> None:
    """Every connection this process holds, closed before it forks (reopened after, as needed): a forked worker
    inherits no engine, whose instance it must not use and which would refuse its own connection."""
    for rows in list(_OPEN):
        rows.close()


os.register_at_fork(before=_close_before_fork)


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


class EngineRows:
    """The items' columns in the engine's table (see the module); rows are addressed by position (row of
    ``items.parquet``)."""

    def __init__(self, database: Path, schema: pa.Schema, id_rank: np.ndarray) -> None:
        self.database, self.schema, self.id_rank = database, schema, id_rank
        self.num_rows = len(id_rank)
        self._con: Any = None

    def _connection(self) -> Any:
        """This process's read-only connection, opened when first needed (closed before a fork: a forked
        worker opens its own)."""
        if self._con is None:
            self._con = connect(self.database.parent / f"{_LOAD_FOLDER}-{os.getpid()}", ENGINE_MEMORY, threads=1,
                                database=self.database, read_only=True)
            _OPEN.add(self)
        return self._con

    def take(self, positions: np.ndarray, columns: Sequence[str]) -> pa.Table:
        """Those rows (in that order) of those columns: the wanted positions joined with the table."""
        pos = np.asarray(positions, dtype=np.int64)
        cols = list(columns)
        if not len(pos):
            return self.schema.empty_table().select(cols)
        rank = self.id_rank[pos]
        wanted = pa.table({"pos": pa.array(pos, type=pa.int64()), "k": pa.array(np.arange(len(pos)))})
        con = self._connection()
        con.register("_wanted", wanted)
        try:
            got = con.sql(f"SELECT {', '.join('i.' + quoted(c) for c in cols)} FROM _wanted w JOIN items i "
                          f"ON i.{POS} = w.pos WHERE i.{ID_RANK} BETWEEN {int(rank.min())} AND {int(rank.max())} "
                          "ORDER BY w.k").to_arrow_table()
        finally:
            con.unregister("_wanted")
        return _typed(got, pa.schema([self.schema.field(c) for c in cols]))

    def column(self, name: str) -> pa.Array:
        """One whole column in position order, text dictionary-encoded."""
        field = self.schema.field(name)
        got = self._connection().sql(f"SELECT {quoted(name)} FROM items ORDER BY {POS}").to_arrow_table()
        arr = _typed(got, pa.schema([field])).column(0).combine_chunks()
        return pc.dictionary_encode(arr) if pa.types.is_string(field.type) or pa.types.is_large_string(
            field.type) else arr

    def close(self) -> None:
        """Close this process's connection (the spill folder's owner removes the files)."""
        if self._con is not None:
            self._con.close()
        self._con = None
        _OPEN.discard(self)


def ranks(keys: np.ndarray) -> np.ndarray:
    """Per position its row in the stable sort of ``keys``."""
    order = np.argsort(keys, kind="stable")
    rank = np.empty(len(keys), dtype=index_type(len(keys)))
    rank[order] = np.arange(len(keys), dtype=rank.dtype)
    return rank


def load_items(batches: Iterable[pa.RecordBatch], schema: pa.Schema, id_rank: np.ndarray, folder: Path
               ) -> EngineRows:
    """Load the rows ``batches`` yields (of ``schema``, in position order) into the engine's table in ``folder``
    (``id_rank``: per position its row in id order), stored in id order; an error of the batches' own (a read
    refused) is raised as it is, after the engine has stopped."""
    import duckdb

    failed: list[BaseException] = []

    def ranked() -> Iterator[pa.RecordBatch]:
        start = 0
        try:
            for batch in batches:
                end = start + batch.num_rows
                yield pa.RecordBatch.from_arrays(
                    [*batch.columns, pa.array(np.arange(start, end), type=pa.int64()),
                     pa.array(id_rank[start:end], type=pa.int64())], schema=with_keys)
                start = end
        except Exception as e:  # the engine would wrap it: kept, and raised as it is below
            failed.append(e)
            raise
        if start != len(id_rank):
            failed.append(ValueError(f"{start} rows read, {len(id_rank)} expected"))

    with_keys = schema.append(pa.field(POS, pa.int64())).append(pa.field(ID_RANK, pa.int64()))
    temp = folder / _LOAD_FOLDER
    database = folder / DB_FILE
    for old in (database, database.with_name(DB_FILE + ".wal")):  # an earlier load's, in the same folder
        old.unlink(missing_ok=True)
    con = connect(temp, ENGINE_MEMORY, threads=1, database=database)
    try:
        try:
            con.register("loaded_rows", pa.RecordBatchReader.from_batches(with_keys, ranked()))
            con.execute(f"CREATE TABLE items AS SELECT * FROM loaded_rows ORDER BY {ID_RANK}")
            con.unregister("loaded_rows")
        except duckdb.Error:
            if failed:
                raise failed[0] from None
            raise
        if failed:
            raise failed[0]
    finally:
        con.close()
        shutil.rmtree(temp, ignore_errors=True)
    return EngineRows(database, schema, id_rank)


def _typed(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """The engine's rows in ``schema``'s types (its types mapped back: a null column, ...)."""
    cols = [table.column(i).cast(f.type) for i, f in enumerate(schema)]
    return pa.Table.from_arrays(cols, schema=schema)


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
