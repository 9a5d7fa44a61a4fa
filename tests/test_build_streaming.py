"""Streaming parts of the build: bounded ordered map, case spool, streamed case rows, locality order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from medr2.bench import BenchWriter, load_bench
from medr2.build import parallel
from medr2.build.parallel import ordered_map
from medr2.build.pipeline import build_bench
from medr2.build.spool import CaseSpool
from medr2.imageio import ImageStore
from tests.build_fixtures import BuildTestSource, Spec, make_case


def _square_plus_state(x: int) -> int:
    return x * x + int(parallel.STATE["offset"])


def test_ordered_map_keeps_order_and_bounds_the_window() -> None:
    pulled: list[int] = []

    def gen() -> Any:
        for i in range(4000):
            pulled.append(i)
            yield i

    it = ordered_map(_square_plus_state, gen(), 2, {"offset": 3}, n=4000)
    first = next(it)
    assert first == (0, 3)
    size = parallel.chunk_size(4000, 2)
    assert len(pulled) <= (2 * parallel.CHUNKS_PER_WORKER + 1) * size < 4000  # not the whole input at once
    rest = list(it)
    assert [x for x, _ in [first, *rest]] == list(range(4000))
    assert all(r == x * x + 3 for x, r in [first, *rest])


def test_ordered_map_in_process_for_one_worker() -> None:
    assert list(ordered_map(_square_plus_state, [1, 2, 3], 1, {"offset": 0}, n=3)) == [(1, 1), (2, 4), (3, 9)]


def test_case_spool_reads_back_by_index(tmp_path: Path) -> None:
    images = ImageStore(tmp_path)
    cases = [make_case(Spec(f"case{i:03d}", i), images) for i in range(5)]
    with CaseSpool(tmp_path) as spool:
        for i in (3, 0, 4, 1, 2):  # written in any order
            spool.put(i, cases[i])
        assert 4 in spool and 7 not in spool
        assert [spool.get(i) for i in range(5)] == cases
        path = spool.path
    assert not path.exists()


def test_case_rows_streamed_in_fixed_row_groups(tmp_path: Path) -> None:
    images = ImageStore(tmp_path / "img")
    cases = [make_case(Spec(f"case{i:03d}", i), images) for i in range(7)]
    outs = []
    for name, batches in (("all", [cases]), ("one", [[c] for c in cases])):
        root = tmp_path / name
        ImageStore(root)
        with BenchWriter(root, name="x", case_row_group_size=3) as w:
            for b in batches:
                w.add_cases(b)
            manifest = w.close({})
        outs.append((root / "cases.parquet").read_bytes())
        assert pq.ParquetFile(root / "cases.parquet").metadata.num_row_groups == 3  # 3 + 3 + 1
        assert manifest["cases"]["n"] == 7 and manifest["cases"]["patients"] == 4
        assert [c.case_id for c in load_bench(root, validate=False).cases] == [c.case_id for c in cases]
    assert outs[0] == outs[1]


class _ReversedLocality(BuildTestSource):
    """Hands the work out in reverse plan order (as a source with ``locality`` may)."""

    def locality(self, spec: Spec) -> int:
        return -spec.index


def test_dispatch_order_does_not_change_the_bytes(tmp_path: Path) -> None:
    build_bench(BuildTestSource("bad"), tmp_path / "plain", seed=0, n_cases=20, workers=1, name="b")
    build_bench(_ReversedLocality("bad"), tmp_path / "rev1", seed=0, n_cases=20, workers=1, name="b")
    build_bench(_ReversedLocality("bad"), tmp_path / "rev2", seed=0, n_cases=20, workers=2, name="b")
    def read(name: str, f: str) -> bytes:  # the quarantine names files by absolute path
        return (tmp_path / name / f).read_bytes().replace(str(tmp_path / name).encode(), b"BENCH")

    for f in ("items.parquet", "cases.parquet", "quarantine.jsonl", "manifest.json"):
        assert read("rev1", f) == read("plain", f), f
        assert read("rev2", f) == read("plain", f), f
    assert not list((tmp_path / "rev2").glob(".cases.*.spool"))  # the spool is removed
