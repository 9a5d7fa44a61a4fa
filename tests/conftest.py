"""Shared fixtures. ``sample_bench``: a bench built once per session from the bundled sample source
(``medr2 build --source sample --cases 40 --seed 0``); skipped with the reason when it cannot be built."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

# No per-example time limit in property tests: a deadline is a timing assertion, and on a loaded 2-core
# machine a slow example is noise, not a failure (performance is measured in bench/, not asserted).
settings.register_profile("medr2", deadline=None)
settings.load_profile("medr2")


@pytest.fixture(scope="session")
def sample_bench_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from medr2.errors import BadInput

    try:
        from medr2.sources.base import get_source

        get_source("sample")
    except (ImportError, BadInput) as e:
        pytest.skip(f"sample source not available: {e}")
    from medr2.build.pipeline import build_bench

    out = tmp_path_factory.mktemp("sample") / "bench"
    build_bench("sample", out, seed=0, n_cases=40)
    return out


@pytest.fixture(scope="session")
def sample_bench(sample_bench_dir: Path):  # type: ignore[no-untyped-def]
    """The loaded (and validated) sample bench: ``medr2.bench.Bench``."""
    from medr2.bench import load_bench

    return load_bench(sample_bench_dir)
