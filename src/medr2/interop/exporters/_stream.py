"""Bounded-memory writing for every exporter: rows are made one item at a time and written in batches
(``BATCH_ROWS`` rows or ``BATCH_BYTES`` of images, whichever comes first), and the files are written into a staging
folder inside the output and published together (:func:`medr2.atomic.staged`), so a killed or failed
export never leaves a partial file under a final name (the previous export's files stay whole until the new set
replaces them). A bench of 80,000+ items with all variants exports in the memory of a few batches, not of every
image at once (docs/benchmarks.md, "convert")."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from medr2.bench.format import Bench
from medr2.interop.exporters._rows import row, split_name

BATCH_ROWS = 256
BATCH_BYTES = 64 << 20


def split_rows(bench: Bench) -> Iterator[tuple[str, dict[str, Any]]]:
    """(split, row) for every item in bench order, each row made when it is asked for (its image read then)."""
    for item in bench.items:
        yield split_name(item), row(bench, item)


def _row_bytes(r: dict[str, Any]) -> int:
    return sum(len(v) for v in r.values() if isinstance(v, bytes | bytearray)) + sum(
        len(b) for v in r.values() if isinstance(v, list) for b in v if isinstance(b, bytes | bytearray))


def batches(rows: Iterator[tuple[str, dict[str, Any]]]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """The rows of each split in bench order, in batches of at most BATCH_ROWS rows and about BATCH_BYTES of
    binary values; a split's batch is given when full, the rest at the end."""
    pending: dict[str, list[dict[str, Any]]] = {}
    size: dict[str, int] = {}
    for split, r in rows:
        pending.setdefault(split, []).append(r)
        size[split] = size.get(split, 0) + _row_bytes(r)
        if len(pending[split]) >= BATCH_ROWS or size[split] >= BATCH_BYTES:
            yield split, pending.pop(split)
            size[split] = 0
    for split in sorted(pending):
        yield split, pending[split]
