"""Arrow memory of the commands that read a bench by columns for a long time (docs/benchmarks.md, "Memory of a
full evaluation").

pyarrow's default pool (mimalloc) keeps much of what a pass over a large table frees: checking the items table of
a 278,897-item bench by columns raised the RSS by ≈ 200 MiB while the pool never held more than 16 MiB, and the
rise grew with the rows read. The system allocator kept less after that pass but fragmented during the run (Arrow
buffers between Python's objects); jemalloc, a heap of its own, did best on both (the measurements are in
docs/benchmarks.md). The choice is process-wide, so it is the command's: ``medr2 eval`` and ``medr2 score`` call
:func:`use_lean_pool` at their start; a library call never changes it.

:func:`open_parquet` opens a table file so that its reads are buffered by pyarrow's current pool (a path opened
by pyarrow itself is read through the C++ default pool, mimalloc, whatever :func:`pyarrow.set_memory_pool`
says), and :func:`release_unused` hands the pool's freed memory back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq


def use_lean_pool() -> str:
    """Make jemalloc pyarrow's default pool for this process (the system allocator where this pyarrow has no
    jemalloc); returns the pool's backend name."""
    try:
        pool = pa.jemalloc_memory_pool()
    except NotImplementedError:
        pool = pa.system_memory_pool()
    pa.set_memory_pool(pool)
    return str(pool.backend_name)


def release_unused() -> None:
    """Hand the memory the default pool keeps but no longer uses back to the system."""
    pa.default_memory_pool().release_unused()


class _OwnedFile(pq.ParquetFile):  # type: ignore[misc]
    """A ParquetFile over a file it opened (and closes) itself."""

    def __init__(self, path: Path | str, **options: Any) -> None:
        source = pa.OSFile(str(path))
        try:
            super().__init__(source, **options)
        except BaseException:
            source.close()
            raise

    def close(self, force: bool = False) -> None:
        super().close(force=True)


def open_parquet(path: Path | str, **options: Any) -> pq.ParquetFile:
    """``pq.ParquetFile(path, **options)``, its reads buffered by pyarrow's current default pool."""
    return _OwnedFile(path, **options)
