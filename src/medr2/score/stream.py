"""Streaming pieces of ``medr2 score``: Parquet files written row group by row group, and the per-row columns
that the metrics read, collected batch by batch without the answers' texts.

:func:`medr2.score.scorer.score_run` reads the answers that count from the run's store in batches ordered as
``scores.parquet`` is (``Store.counted_rows``: SQLite groups and sorts), scores each batch, hands its rows to a
:class:`RowGroupWriter` and keeps only what the metrics read (:class:`TidyColumns`): no raw answer, no
prediction or score record outlives its batch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

# rows per Parquet row group: pyarrow's default for ``write_table`` (1024 * 1024), so a file written here in
# batches has the same bytes as the whole table written at once
ROW_GROUP_ROWS = 1024 * 1024
# answers scored per batch (the raw answers of one batch are the only ones held)
BATCH_ROWS = 50_000


class RowGroupWriter:
    """A Parquet file (zstd, in memory) written from tables that arrive in row order: buffered until a row
    group (``ROW_GROUP_ROWS``) is full, each written as one contiguous table (the bytes ``pq.write_table`` of
    the concatenated table gives)."""

    def __init__(self, schema: pa.Schema, row_group_rows: int = ROW_GROUP_ROWS) -> None:
        self.schema = schema
        self.rows = 0
        self._group = row_group_rows
        self._sink = pa.BufferOutputStream()
        self._writer = pq.ParquetWriter(self._sink, schema, compression="zstd")
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
            self._pending = [rest] if rest.num_rows else []
            self._pending_rows = rest.num_rows

    def close(self) -> bytes:
        """Write what is left (or, for no rows at all, the empty table ``write_table`` writes); the bytes."""
        if self._pending_rows or self.rows == 0:
            whole = pa.concat_tables(self._pending) if self._pending else self.schema.empty_table()
            self._writer.write_table(whole.combine_chunks(), row_group_size=self._group)
        self._pending = []
        self._writer.close()
        return bytes(self._sink.getvalue().to_pybytes())


@dataclass
class TidyColumns:
    """Per scored row, the fields :func:`medr2.score.table.build_table_columns` and the metrics read (item id,
    model key, mode, verdict, parsed answer, method, IoU, text metrics, reason, rationale audit counts), and
    ``first``: where the row's first answer was stored, which orders the tidy table as scoring always has.
    Strings that repeat (ids, modes, verdicts) are the one object the items or the batch already hold."""

    item_ids: list[str] = field(default_factory=list)
    model_keys: list[str] = field(default_factory=list)
    modes: list[str] = field(default_factory=list)
    verdicts: list[str] = field(default_factory=list)
    parsed: list[str | None] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)
    ious: list[float | None] = field(default_factory=list)
    text_metrics: list[dict[str, float]] = field(default_factory=list)
    reasons: list[str | None] = field(default_factory=list)
    audit: dict[str, list[int]] = field(default_factory=dict)
    first: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.item_ids)

    def to_stored_order(self) -> None:
        """Reorder the rows, in place and one column at a time, by ``first`` (the order of the store's first
        answer per key, which the tidy table has always had)."""
        order = np.argsort(np.asarray(self.first, dtype=np.int64), kind="stable").tolist()
        columns: list[list[Any]] = [self.item_ids, self.model_keys, self.modes, self.verdicts, self.parsed,
                                    self.methods, self.ious, self.text_metrics, self.reasons, *self.audit.values(),
                                    self.first]
        for values in columns:
            values[:] = [values[i] for i in order]
