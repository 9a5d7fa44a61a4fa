"""Rows sorted out of core by DuckDB, stably: the one sort of the bench writer and the export plans.

:class:`Sorter` appends Arrow tables to a DuckDB table with an explicit insertion number (the column
:data:`SEQ`), and reads every row back ``ORDER BY`` the caller's keys, each ``ASC NULLS LAST``, then that
number, as Arrow record batches: the order is total (rows of equal keys keep the order they were added in)
and spelled out in the query, not left to the engine. DuckDB holds the rows in its buffer manager under
``memory_limit`` (:data:`SORT_MEMORY`) and spills both the table and the sort to a temporary folder it is
given inside the caller's folder, removed on :meth:`Sorter.close` (a ``with`` block closes it on success and
on error). The bench writer sorts ``items.parquet`` with it (key: split, clean first, variant,
:data:`medr2.bench.format.ITEM_ORDER`); exports order their examples with it (key: a block, a bucket and each
example's order hash, see :mod:`medr2.train.stream`).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from medr2.errors import WorkFailed

SEQ = "_medr2_seq"  # the insertion number of every row: the last sort key, so equal keys keep their order
# DuckDB's memory limit for one sort; above it the rows and the sort spill to disk. Its floor grows with the width
# of a row: 64 MiB sorts 380 MB of 200-byte rows, 128 MiB fails on 1 kB rows, 256 MiB sorts 1.5 GB of them (an
# item row is about 850 B as Arrow; docs/benchmarks.md)
SORT_MEMORY = "256MiB"
SORT_THREADS = 1  # the sort's threads (medr2's own workers are the parallelism; measured in docs/benchmarks.md)
BATCH_ROWS = 8_192  # rows per record batch read back
FOLDER_PREFIX = ".medr2-sort-"  # the temporary folder of a sort, inside the caller's folder


def quoted(column: str) -> str:
    """A column name as a DuckDB identifier (for keys that are plain columns)."""
    return '"' + column.replace('"', '""') + '"'


def remove_stale(folder: Path) -> None:
    """Remove the temporary folders (and spill files) that killed sorts left in ``folder``."""
    for stale in folder.glob(FOLDER_PREFIX + "*"):
        shutil.rmtree(stale, ignore_errors=True)


def connect(spill: Path, memory_limit: str, threads: int = SORT_THREADS, *, database: Path | None = None,
            read_only: bool = False) -> Any:
    """The one way medr2 opens DuckDB for out-of-core work: its memory held to ``memory_limit``, the rest spilled
    under ``spill``, ``threads`` threads, insertion order not kept (every order medr2 needs is written in its
    query), no progress bar on the console (nothing there but medr2's own lines). ``database``: a database file
    (default: in memory), opened ``read_only`` by as many processes as read it."""
    import duckdb

    con = duckdb.connect(":memory:" if database is None else str(database), read_only=read_only,
                         config={"memory_limit": memory_limit, "temp_directory": str(spill), "threads": threads,
                                 "preserve_insertion_order": False})
    try:
        con.execute("SET enable_progress_bar = false")
    except BaseException:
        con.close()
        raise
    return con


@contextmanager
def _engine() -> Iterator[None]:
    """DuckDB running out of its memory limit as medr2's error."""
    import duckdb

    try:
        yield
    except duckdb.OutOfMemoryException as e:
        raise WorkFailed(f"the out-of-core sort needs more than its memory limit ({SORT_MEMORY}, "
                         f"medr2.bench.sorting.SORT_MEMORY) for rows this wide: {e}") from e


class Sorter:
    """Rows added as Arrow tables, read back sorted by ``order_by`` (DuckDB expressions over the columns, each
    ascending with nulls last) then by the order they were added in; the rows read back have the columns and
    types of ``schema`` (default: the first table added)."""

    def __init__(self, folder: Path, order_by: Sequence[str], *, schema: pa.Schema | None = None) -> None:
        self.order_by = list(order_by)
        self.schema = schema
        self._n = 0
        self.folder = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX, dir=folder))
        try:
            self._con: Any = connect(self.folder / "spill", SORT_MEMORY)
        except BaseException:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise

    def __enter__(self) -> Sorter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add(self, table: pa.Table) -> None:
        if not table.num_rows:
            return
        if self.schema is None:
            self.schema = table.schema
        seq = pa.array(np.arange(self._n, self._n + table.num_rows, dtype=np.int64))
        rows = table.select(self.schema.names).append_column(SEQ, seq)
        verb = "INSERT INTO rows SELECT * FROM" if self._n else "CREATE TABLE rows AS SELECT * FROM"
        self._con.register("_added", rows)
        try:
            with _engine():
                self._con.execute(f"{verb} _added")
        finally:
            self._con.unregister("_added")
        self._n += table.num_rows

    def __len__(self) -> int:
        return self._n

    def batches(self, rows: int | None = None) -> Iterator[pa.RecordBatch]:
        """Every row added, sorted, as record batches of up to ``rows`` rows (default :data:`BATCH_ROWS`; the
        engine holds the rest)."""
        if not self._n:
            return
        assert self.schema is not None
        keys = ", ".join([f"{k} ASC NULLS LAST" for k in self.order_by] + [f"{SEQ} ASC"])
        with _engine():
            reader = self._con.sql(f"SELECT * EXCLUDE ({SEQ}) FROM rows ORDER BY {keys}").to_arrow_reader(
                rows or BATCH_ROWS)
            for batch in reader:
                yield batch if batch.schema.equals(self.schema) else batch.cast(self.schema)

    def groups(self, columns: Sequence[str], rows: int | None = None) -> Iterator[pa.Table]:
        """Every row added, sorted, as one table per run of rows equal in ``columns`` (a prefix of the sort
        keys: each value's rows whole; one group held at a time)."""
        parts: list[pa.RecordBatch] = []
        key: tuple[Any, ...] | None = None
        for batch in self.batches(rows):
            keys = list(zip(*(batch.column(c).to_pylist() for c in columns), strict=True))
            start = 0
            for end in [i for i in range(1, len(keys)) if keys[i] != keys[i - 1]] + [len(keys)]:
                if parts and keys[start] != key:
                    yield pa.Table.from_batches(parts)
                    parts = []
                key = keys[start]
                parts.append(batch.slice(start, end - start))
                start = end
        if parts:
            yield pa.Table.from_batches(parts)

    def close(self) -> None:
        """Drop the rows and remove the temporary folder (spill files included)."""
        try:
            self._con.close()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
