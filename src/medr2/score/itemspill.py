"""The bench's items on disk for ``medr2 score``: the columns scoring reads, written once to two Arrow IPC files
in the run's spill folder and read back a record batch at a time (:class:`SpilledRows`).

Scoring reads its items in two orders: a scoring batch is a range of item ids (``Store.counted_rows`` sorts by
mode, then item id), a chunk of the metrics a range of case ids (:class:`medr2.score.stream.CaseChunks`). So the
items are written twice, zstd-compressed, in record batches of ``batch_rows`` rows: sorted by item id
(``items-by-id.arrow``) and by case id (``items-by-case.arrow``, rows of a case in ``items.parquet`` order);
:meth:`SpilledRows.take` reads the record batches of whichever file holds the wanted rows in fewer batches. Reads
go through ``pread`` (``pa.OSFile``), not a memory map: what a read brings in is Arrow memory freed with the
result (the page cache is the kernel's and never counts in the process's RSS), so no page of the files stays
resident as the whole run touches them.

Per item what stays in memory is the rank of each position in each file (``int32``: 8 B); the sorted ids and
their order are :class:`medr2.score.itemcols.ScoringItems`'. The files are built from ``items.parquet`` one row
group at a time (:func:`spill_items`): each row group's rows go to bucket files by their rank (``bucket_batches``
record batches per bucket, lz4), then each bucket is read back, sorted and appended, so no more than one row group
and one bucket are held.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from medr2 import jsonsafe
from medr2.errors import BadInput

# rows per record batch of the item files: a scoring batch of 50,000 consecutive ids reads ≈ 7-8 of them
ITEM_BATCH_ROWS = 8192
# record batches per bucket while sorting: at most this many rows (≈ 330 B each, plain) held while a bucket sorts
BUCKET_BATCHES = 32
BY_ID, BY_CASE = "items-by-id.arrow", "items-by-case.arrow"
_RANK = "_rank"


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


def _ranks(keys: np.ndarray) -> np.ndarray:
    """Per position its row in the stable sort of ``keys``."""
    order = np.argsort(keys, kind="stable")
    rank = np.empty(len(keys), dtype=index_type(len(keys)))
    rank[order] = np.arange(len(keys), dtype=rank.dtype)
    return rank


def spill_items(parts: Callable[[], Iterator[pa.Table]], schema: pa.Schema, id_rank: np.ndarray,
                case_keys: np.ndarray, folder: Path, *, batch_rows: int = ITEM_BATCH_ROWS,
                bucket_batches: int = BUCKET_BATCHES, check: Callable[[pa.Table, int], None] | None = None
                ) -> SpilledRows:
    """Write the rows ``parts()`` yields (tables of ``schema``, in position order) to the two item files in
    ``folder``: ``id_rank`` is per position its row in id order, ``case_keys`` per position its case's sort key
    (rows of equal keys keep their order). ``check(table, start)`` sees each part first (it may raise)."""
    n = len(id_rank)
    case_rank = _ranks(case_keys)
    ranks = {BY_ID: id_rank, BY_CASE: case_rank}
    bucket_rows = batch_rows * bucket_batches
    with_rank = schema.append(pa.field(_RANK, pa.int64()))
    buckets: dict[tuple[str, int], pa.ipc.RecordBatchStreamWriter] = {}
    lz4 = pa.ipc.IpcWriteOptions(compression="lz4")
    try:
        start = 0
        for part in parts():
            if check is not None:
                check(part, start)
            for name, rank in ranks.items():
                r = rank[start:start + part.num_rows].astype(np.int64)
                which = r // bucket_rows
                for b in np.unique(which).tolist():
                    mask = which == b
                    piece = part.filter(pa.array(mask)).append_column(_RANK, pa.array(r[mask], type=pa.int64()))
                    writer = buckets.get((name, b))
                    if writer is None:
                        writer = buckets[(name, b)] = pa.ipc.new_stream(
                            str(folder / f"{name}.bucket-{b:06d}"), with_rank, options=lz4)
                    writer.write_table(piece)
            start += part.num_rows
    finally:
        for w in buckets.values():
            w.close()
    if start != n:
        raise ValueError(f"{start} rows read, {n} expected")
    zstd = pa.ipc.IpcWriteOptions(compression="zstd")
    for name in ranks:
        with pa.ipc.new_file(str(folder / name), schema, options=zstd) as out:
            for b in range(-(-n // bucket_rows)):
                path = folder / f"{name}.bucket-{b:06d}"
                with pa.OSFile(str(path)) as src:
                    t = pa.ipc.open_stream(src).read_all()
                path.unlink()
                t = t.take(pc.sort_indices(t[_RANK]))
                expected = min(bucket_rows, n - b * bucket_rows)
                got = t[_RANK].to_numpy()
                if len(got) != expected or (len(got) and int(got[0]) != b * bucket_rows):
                    raise ValueError(f"bucket {b} of {name}: {len(got)} rows, {expected} expected")
                t = t.drop_columns([_RANK]).combine_chunks()
                rb = t.to_batches()[0] if t.num_rows else None
                del t
                for s in range(0, expected, batch_rows):
                    assert rb is not None
                    out.write_batch(rb.slice(s, batch_rows))
                del rb
    return SpilledRows(_File(folder / BY_ID, id_rank, schema.names, batch_rows),
                       _File(folder / BY_CASE, case_rank, schema.names, batch_rows), schema)


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
