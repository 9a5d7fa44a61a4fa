"""Shared fixtures. ``sample_bench``: a bench built once per session from the bundled sample source
(``medr2 build --source sample --cases 40 --seed 0``); skipped with the reason when it cannot be built.
``build_sample``: the same build, with other options, into a folder of the test's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# No per-example time limit in property tests: a deadline is a timing assertion, and on a loaded 2-core
# machine a slow example is noise, not a failure (performance is measured in bench/, not asserted).
settings.register_profile("medr2", deadline=None)
settings.load_profile("medr2")


@pytest.fixture(scope="session")
def build_sample() -> Callable[..., Path]:
    """``build_sample(out, **build_bench_options)``: the bundled sample source built (seed 0) into ``out``;
    the test skips, with the reason, where the sample source is not available."""
    from medr2 import BadInput

    try:
        from medr2.sources.base import get_source

        get_source("sample")
    except (ImportError, BadInput) as e:
        pytest.skip(f"sample source not available: {e}")
    from medr2.builder.pipeline import build_bench

    def build(out: Path, **kw: Any) -> Path:
        build_bench("sample", out, seed=0, **kw)
        return out

    return build


@pytest.fixture(scope="session")
def sample_bench_dir(tmp_path_factory: pytest.TempPathFactory, build_sample: Callable[..., Path]) -> Path:
    return build_sample(tmp_path_factory.mktemp("sample") / "bench", n_cases=40)


@pytest.fixture(scope="session")
def sample_bench(sample_bench_dir: Path):  # type: ignore[no-untyped-def]
    """The loaded (and validated) sample bench: ``medr2.bench.Bench``."""
    from medr2.bench import load_bench

    return load_bench(sample_bench_dir)
