"""Sample benches for tests that read built benches: skip, saying why, where the sample source cannot load here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


def require_sample() -> None:
    """Skip the calling test (or fixture) where the sample source is not available (its optional backgrounds)."""
    from medr2 import BadInput
    from medr2.sources.base import get_source

    try:
        get_source("sample")
    except (ImportError, BadInput) as e:
        pytest.skip(f"sample source not available: {e}")


def built_benches(tmp_path_factory: pytest.TempPathFactory, name: str, source: str, seeds: tuple[int, ...],
                  **kw: Any) -> list[tuple[Any, Path]]:
    """(bench, root) of ``source`` built once per seed under a fresh temporary folder (``kw``: build options)."""
    from medr2.bench import load_bench
    from medr2.builder.pipeline import build_bench

    out = []
    for seed in seeds:
        root = tmp_path_factory.mktemp(f"{name}-{seed}") / "bench"
        build_bench(source, root, seed=seed, workers=1, **kw)
        out.append((load_bench(root), root))
    return out
