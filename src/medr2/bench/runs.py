"""Out-of-core sorting by a few key columns: runs of rows sorted in memory and spilled to Arrow IPC files.

:class:`RunSorter` groups rows by a key (one value per row, a tuple of key columns), stably: rows of one key
keep the order they were added in. Memory is bounded by ``run_rows`` while adding and by one key's rows of one
run while reading back. The bench writer sorts ``items.parquet`` with it (key: split, clean first, variant);
exports order their examples with it (key: a block and a prefix of each example's order hash, see
:mod:`medr2.train.stream`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

KeyColumns = Callable[[pa.Table], list[pa.Array]]  # the key columns of a table's rows (comparable values)


class RunSorter:
    """Sorts rows by the key of ``key_columns``, stably, in memory bounded by ``run_rows``: each run of rows is
    sorted and spilled to a temporary Arrow IPC file (``folder/<prefix><n>.arrow``), one record batch per key;
    :meth:`keyed_tables` then reads, key by key, that key's batch of every run in run order (a k-way merge that
    never holds more than one batch)."""

    def __init__(self, folder: Path, key_columns: KeyColumns, run_rows: int, *, prefix: str,
                 schema: pa.Schema | None = None) -> None:
        self.folder = folder
        self.key_columns = key_columns
        self.run_rows = run_rows
        self.prefix = prefix
        self.schema = schema
        self._tables: list[pa.Table] = []
        self._n = 0
        self._runs: list[tuple[Path, dict[tuple[Any, ...], int]]] = []  # file, key -> batch index

    def add(self, table: pa.Table) -> None:
        if not table.num_rows:
            return
        self._tables.append(table)
        self._n += table.num_rows
        if self._n >= self.run_rows:
            self._spill()

    def _spill(self) -> None:
        import pyarrow.ipc as ipc

        if not self._n:
            return
        table = pa.concat_tables(self._tables)
        self._tables, self._n = [], 0
        schema = self.schema or table.schema
        keys = self.key_columns(table)
        names = [f"k{j}" for j in range(len(keys))]
        order = pa.table({**dict(zip(names, keys, strict=True)), "i": pa.array(range(table.num_rows))})
        idx = order.sort_by([(n, "ascending") for n in (*names, "i")])
        table = table.take(idx.column("i"))
        key_rows = list(zip(*(idx.column(n).to_pylist() for n in names), strict=True))
        path = self.folder / f"{self.prefix}{len(self._runs)}.arrow"
        index: dict[tuple[Any, ...], int] = {}
        opts = ipc.IpcWriteOptions(compression="zstd")
        with ipc.new_file(str(path), schema, options=opts) as w:
            start = 0
            n = table.num_rows
            while start < n:
                key = key_rows[start]
                end = start + 1
                while end < n and key_rows[end] == key:
                    end += 1
                index[key] = len(index)
                w.write_table(table.slice(start, end - start), max_chunksize=end - start)
                start = end
        self._runs.append((path, index))

    def keyed_tables(self) -> Iterator[tuple[tuple[Any, ...], pa.Table]]:
        """Every row added, sorted, as (key, table of that key's rows of one run), keys ascending."""
        import pyarrow.ipc as ipc

        self._spill()
        readers = [ipc.open_file(pa.memory_map(str(path))) for path, _ in self._runs]
        for key in sorted({k for _, index in self._runs for k in index}):
            for reader, (_, index) in zip(readers, self._runs, strict=True):
                if key in index:
                    yield key, pa.Table.from_batches([reader.get_batch(index[key])])

    def sorted_tables(self) -> Iterator[pa.Table]:
        """Every row added, sorted, as tables of one key and one run each."""
        for _, table in self.keyed_tables():
            yield table

    def key_groups(self) -> Iterator[tuple[tuple[Any, ...], pa.Table]]:
        """Every row added, sorted, as (key, all rows of that key) (one key's rows held at a time)."""
        key: tuple[Any, ...] | None = None
        parts: list[pa.Table] = []
        for k, table in self.keyed_tables():
            if parts and k != key:
                yield key, pa.concat_tables(parts)  # type: ignore[misc]
                parts = []
            key = k
            parts.append(table)
        if parts:
            yield key, pa.concat_tables(parts)  # type: ignore[misc]

    def cleanup(self) -> None:
        self._tables, self._n = [], 0
        for path, _ in self._runs:
            path.unlink(missing_ok=True)
        self._runs = []
