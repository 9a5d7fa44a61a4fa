"""The shared sample bench builds, validates and is reproducible."""

from __future__ import annotations

from pathlib import Path

import pytest

from medr2 import Bench
from medr2.builder.pipeline import build_bench


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


def test_manifest_says_what_is_real_and_synthetic_per_field(sample_bench_dir: Path) -> None:
    """The sample's images are real with synthetic lesions: the console says so per field (never "0 real")."""
    from medr2.bench.format import read_manifest
    from medr2.bench.info import provenance_line

    cases = read_manifest(sample_bench_dir)["cases"]
    by = cases["synthetic_by_field"]
    assert by.get("findings", 0) > 0 and "image" not in by  # lesions drawn into real scans
    line = provenance_line(cases)
    assert line.startswith(f"images real in {cases['n']} of {cases['n']}; synthetic: ") and "findings" in line
    assert provenance_line({"n": 3, "real": 3, "synthetic": 0, "synthetic_by_field": {}}) == (
        "images real in 3 of 3; every field real")
    assert provenance_line({"n": 4, "real": 1, "synthetic": 3}) == "real 1, with synthetic parts 3"  # old benches
