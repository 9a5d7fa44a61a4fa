"""The shared sample bench builds, validates and is reproducible."""

from __future__ import annotations

from pathlib import Path

import pytest

from medr2.bench import Bench
from medr2.build.pipeline import build_bench


def test_sample_bench_valid(sample_bench: Bench) -> None:
    assert len(sample_bench.cases) >= 30
    assert sample_bench.manifest["complete"] is True
    stages = {it.stage for it in sample_bench.items}
    assert stages == {1, 2, 3, 4}
    assert sample_bench.manifest["counts"]["chains"] > 0


@pytest.mark.slow
def test_sample_build_reproducible(sample_bench_dir: Path, tmp_path: Path) -> None:
    build_bench("sample", tmp_path / "again", seed=0, n_cases=40, workers=1)
    assert (tmp_path / "again" / "items.parquet").read_bytes() == (sample_bench_dir / "items.parquet").read_bytes()
