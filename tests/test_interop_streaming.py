"""Every exporter (`medr2 convert --to ...`) writes in bounded memory and never leaves a partial file (issue 50,
point 11): rows are batched by count and bytes (a property of `batches`, checked on generated streams), and an
export that fails half-way (a real missing image, for every registered target) leaves the previous export's files
byte for byte, or no file at all, and no staging folder."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from medr2 import Medr2Error
from medr2.atomic import STAGING
from medr2.bench import load_bench
from medr2.interop.exporters import EXPORTERS, run_export
from medr2.interop.exporters._stream import BATCH_BYTES, BATCH_ROWS, batches

TARGETS = sorted(EXPORTERS.names())


@given(st.lists(st.tuples(st.sampled_from(["train", "val", "test", "all"]), st.integers(0, BATCH_BYTES // 3)),
                max_size=3 * BATCH_ROWS))
def test_batches_are_bounded_and_keep_every_row_in_order(stream: list[tuple[str, int]]) -> None:
    rows = [(split, {"i": i, "image": b"x" * n}) for i, (split, n) in enumerate(stream)]
    seen: dict[str, list[int]] = {}
    biggest = max([n for _, n in stream] + [0])
    for split, batch in batches(iter(rows)):
        assert 0 < len(batch) <= BATCH_ROWS
        assert sum(len(r["image"]) for r in batch) < BATCH_BYTES + biggest
        seen.setdefault(split, []).extend(r["i"] for r in batch)
    for split in {s for s, _ in stream}:
        assert seen[split] == [i for i, (s, _) in enumerate(stream) if s == split]
    assert sum(map(len, seen.values())) == len(stream)


def _snapshot(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def small_bench(tmp_path_factory: pytest.TempPathFactory, build_sample: Callable[..., Path]) -> Path:
    return build_sample(tmp_path_factory.mktemp("stream") / "bench", n_cases=8)


@pytest.fixture
def bench_copy(tmp_path: Path, small_bench: Path) -> Path:
    return Path(shutil.copytree(small_bench, tmp_path / "bench"))


@pytest.mark.parametrize("target", TARGETS)
def test_a_failed_export_leaves_no_partial_file(target: str, bench_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    summary = run_export(target, load_bench(bench_copy), out)
    assert sum(summary["splits"].values()) > 0
    before = _snapshot(out)
    assert before and not (out / STAGING).exists()
    # a real failure half-way through the items: an image file removed while the export runs
    bench = load_bench(bench_copy)
    with_files = [it for it in bench.items if it.image and bench.path(it.image).is_file()]
    victim = bench.path(with_files[len(with_files) // 2].image)
    shutil.copyfile(victim, tmp_path / "kept")
    victim.unlink()
    with pytest.raises((OSError, Medr2Error)):
        run_export(target, bench, out)
    assert _snapshot(out) == before, "a failed export changed the previous export's files"
    fresh = tmp_path / "fresh"
    with pytest.raises((OSError, Medr2Error)):
        run_export(target, bench, fresh)
    assert _snapshot(fresh) == {}, f"a failed export left files: {sorted(_snapshot(fresh))}"
    # and once the image is back, the export is the same bytes as the first
    shutil.copyfile(tmp_path / "kept", victim)
    run_export(target, load_bench(bench_copy), out)
    assert set(_snapshot(out)) == set(before)
