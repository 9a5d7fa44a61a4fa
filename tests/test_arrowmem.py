"""``medr2.arrowmem``: the Arrow pool the long columnar commands choose, and table files read through it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from medr2.arrowmem import open_parquet

SRC = Path(__file__).resolve().parents[1] / "src"


def _fds() -> int:
    return len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0


def test_open_parquet_reads_the_file_and_closes_it(tmp_path: Path) -> None:
    table = pa.table({"a": list(range(1_000)), "b": [str(i % 7) for i in range(1_000)]})
    path = tmp_path / "t.parquet"
    pq.write_table(table, path, row_group_size=300)
    before = _fds()
    for _ in range(20):
        with open_parquet(path, read_dictionary=["b"]) as f:
            assert f.num_row_groups == 4
            got = pa.concat_tables([f.read_row_group(rg) for rg in range(f.num_row_groups)])
            assert got.column("a").to_pylist() == table.column("a").to_pylist()
            assert pa.types.is_dictionary(got.schema.field("b").type)
        assert f.closed
    assert _fds() <= before  # every file opened was closed


def test_use_lean_pool_sets_the_process_default() -> None:
    """In a fresh process (the setting is process-wide): jemalloc where this pyarrow has it, else the system pool."""
    code = ("import pyarrow as pa\nfrom medr2.arrowmem import use_lean_pool\nname = use_lean_pool()\n"
            "assert pa.default_memory_pool().backend_name == name, name\nprint(name)")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(SRC)},
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out in ("jemalloc", "system")
