"""Streaming pieces of ``medr2 score``: Parquet files written row group by row group, and the per-row columns
that the metrics read, spilled batch by batch to disk by chunk of cases without the answers' texts.

:func:`medr2.scoring.scorer.score_run` reads the answers that count from the run's store in batches ordered as
``scores.parquet`` is (``Store.counted_rows``: along the store's (item, mode) index), scores each batch, hands
its rows to a :class:`RowGroupWriter` and spills what the metrics read (:class:`CaseChunks`): no raw answer, no
prediction or score record outlives its batch, and the metrics read one chunk of cases at a time.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from medr2 import jsonsafe
from medr2.scoring.items import ItemLike

if TYPE_CHECKING:
    from medr2.scoring.itemcols import ScoringItems

# rows per Parquet row group of ``claims.parquet``: pyarrow's default for ``write_table`` (1024 * 1024), so a file
# written here in batches has the bytes of the whole table written at once (its sha256 is in ``metrics.json``)
ROW_GROUP_ROWS = 1024 * 1024
# rows per row group of ``scores.parquet``: the scored rows held before they are written (≈ 250 B each in Arrow,
# so ≈ 16 MiB); a file of at most this many rows has the bytes of ``write_table``'s, a longer one the same table
# in more row groups
SCORES_ROW_GROUP_ROWS = 64 * 1024
# answers scored per batch (the raw answers of one batch are the only ones held)
BATCH_ROWS = 50_000
# scored rows per chunk of whole cases that the metrics read at once (medr2.scoring.aggregate)
CHUNK_ROWS = 100_000


class RowGroupWriter:
    """A Parquet file (zstd) written from tables that arrive in row order, to ``path`` as it goes (or, with no
    path, in memory: :meth:`getvalue`): buffered until a row group (``row_group_rows``) is full, each written as
    one contiguous table (the bytes ``pq.write_table`` of the concatenated table gives with that row group
    size). Only the rows of the row group being filled are held."""

    def __init__(self, schema: pa.Schema, row_group_rows: int = ROW_GROUP_ROWS, path: Path | None = None) -> None:
        self.schema = schema
        self.rows = 0
        self.path = path
        self._group = row_group_rows
        self._sink: pa.BufferOutputStream | None = None
        if path is None:
            self._sink = pa.BufferOutputStream()
            self._writer = pq.ParquetWriter(self._sink, schema, compression="zstd")
        else:
            self._writer = pq.ParquetWriter(str(path), schema, compression="zstd")
        self._pending: list[pa.Table] = []
        self._pending_rows = 0

    def write(self, table: pa.Table) -> None:
        if table.num_rows == 0:
            return
        self._pending.append(table)
        self._pending_rows += table.num_rows
        self.rows += table.num_rows
        while self._pending_rows >= self._group:
            whole = pa.concat_tables(self._pending)
            self._writer.write_table(whole.slice(0, self._group).combine_chunks(), row_group_size=self._group)
            rest = whole.slice(self._group)
            # the rest copied out, so the written group's buffers are freed now
            self._pending = [rest.combine_chunks()] if rest.num_rows else []
            self._pending_rows = rest.num_rows
            del whole, rest

    def close(self) -> None:
        """Write what is left (or, for no rows at all, the empty table ``write_table`` writes) and finish the
        file."""
        if self._pending_rows or self.rows == 0:
            whole = pa.concat_tables(self._pending) if self._pending else self.schema.empty_table()
            self._writer.write_table(whole.combine_chunks(), row_group_size=self._group)
        self._pending = []
        self._writer.close()

    def getvalue(self) -> bytes:
        """The file's bytes (an in-memory writer, after :meth:`close`)."""
        if self._sink is None:
            raise ValueError("this writer wrote to a file")
        return bytes(self._sink.getvalue().to_pybytes())


class CaseChunks:
    """The scored rows, spilled batch by batch to Arrow files in ``folder``, one per chunk of whole cases
    (contiguous ranges of the sorted case ids, about ``chunk_rows`` rows each for ``n_rows`` in all), then
    read back a chunk at a time in stored order (:meth:`paths`, :meth:`read`): what :class:`medr2.scoring.aggregate.
    MetricsAccumulator` adds. Per row only what the tidy table needs beside the item: item (its position among
    ``items``), mode, model key, verdict, parsed answer, method, IoU, text metrics (JSON), reason, rationale
    audit counts and ``first`` (where its first answer was stored). When some item's parent, yes/no twin or
    chain step lies in another case (the metrics pair them), every row goes to one chunk. ``items`` is read by
    columns (:class:`medr2.scoring.itemcols.ScoringItems`; records are converted)."""

    def __init__(self, folder: Path, items: Mapping[str, ItemLike], n_rows: int, chunk_rows: int = CHUNK_ROWS
                 ) -> None:
        from medr2.scoring.itemcols import ScoringItems

        self.folder = folder
        self.items = items if isinstance(items, ScoringItems) else ScoringItems.from_mapping(items)
        case_idx, cases = self.items.codes("case_id")
        n_cases = max(1, len(cases))
        k = max(1, min(n_cases, -(-n_rows // max(1, chunk_rows)))) if _pairs_within_cases(self.items, case_idx) \
            else 1
        self._chunk = (case_idx * k // n_cases).astype(np.int32)  # per item: 4 B (a bench of 12.7 M items)
        self.n_chunks = k
        self._writers: dict[int, pa.ipc.RecordBatchStreamWriter] = {}

    @staticmethod
    def rows(codes: np.ndarray, model_keys: Sequence[str], modes: Sequence[str], first: Sequence[int],
             scored: Sequence[Any], audit: Mapping[str, Sequence[int]] | None) -> pa.Table:
        """The spilled columns of one batch of scored rows (what :meth:`write` takes)."""
        cols: dict[str, pa.Array] = {
            "item": pa.array(codes, type=pa.int64()), "mode": pa.array(modes, type=pa.string()),
            "model_key": pa.array(model_keys, type=pa.string()),
            "verdict": pa.array([r.verdict for r in scored], type=pa.string()),
            "parsed": pa.array([r.parsed for r in scored], type=pa.string()),
            "method": pa.array([r.method for r in scored], type=pa.string()),
            "iou": pa.array([r.iou for r in scored], type=pa.float64()),
            "text_metrics": pa.array([json.dumps(r.text_metrics) if r.text_metrics else None for r in scored],
                                     type=pa.string()),
            "reason": pa.array([r.reason for r in scored], type=pa.string()),
            "first": pa.array(first, type=pa.int64()),
        }
        for c, v in (audit or {}).items():
            cols[c] = pa.array(v, type=pa.int64())
        return pa.table(cols)

    def write(self, codes: np.ndarray, table: pa.Table) -> None:
        """Spill one batch's rows (:meth:`rows`; ``codes``: their items' positions) to their chunks' files."""
        chunk = self._chunk[codes]
        for c in np.unique(chunk).tolist():
            part = table.filter(pa.array(chunk == c)) if self.n_chunks > 1 else table
            writer = self._writers.get(c)
            if writer is None:
                writer = self._writers[c] = pa.ipc.new_stream(str(self._path(c)), table.schema)
            writer.write_table(part)

    def _path(self, chunk: int) -> Path:
        return self.folder / f"chunk-{chunk:05d}.arrow"

    def paths(self) -> list[Path]:
        """The chunks' files, in chunk order, finished (read each with :meth:`read`; the caller removes it)."""
        for w in self._writers.values():
            w.close()
        return [self._path(c) for c in sorted(self._writers)]

    @staticmethod
    def read(path: Path) -> pa.Table:
        """One chunk's rows (a file of :meth:`paths`) in stored order (``first``)."""
        with pa.memory_map(str(path)) as src:
            table = pa.ipc.open_stream(src).read_all()
        return table.take(pc.sort_indices(table["first"]))

    @staticmethod
    def text_metrics(values: Sequence[str | None]) -> list[dict[str, float]]:
        """Per row its text metrics (the spilled JSON read back; one shared empty dict where there are none)."""
        return [jsonsafe.loads(v, field="text_metrics") if v else _NO_TEXT_METRICS for v in values]


_NO_TEXT_METRICS: dict[str, float] = {}


def _pairs_within_cases(items: ScoringItems, case_idx: np.ndarray) -> bool:
    """Every parent, yes/no twin and chain step an item names lies in its own case (``case_idx``: per row its
    case's code)."""
    parents = items.column_positions("parent_id")
    named = parents >= 0
    if np.any(case_idx[parents[named]] != case_idx[named]):
        return False
    for name in ("pair_id", "chain_id"):
        group = items.column(name)
        if group.null_count == len(group):
            continue
        if pa.types.is_dictionary(group.type):
            group = group.indices
        t = pa.table({"g": group, "c": pa.array(case_idx, type=pa.int64())}).filter(pc.is_valid(group))
        if t.num_rows and pc.max(t.group_by("g").aggregate([("c", "count_distinct")])["c_count_distinct"]).as_py() > 1:
            return False
    return True
