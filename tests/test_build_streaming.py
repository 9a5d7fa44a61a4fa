"""Streaming parts of the build: bounded ordered map, case spool, streamed case rows, locality order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from medr2.bench import BenchWriter, load_bench
from medr2.bench.format import item_sort_key
from medr2.builder import parallel
from medr2.builder.parallel import ordered_map
from medr2.builder.pipeline import build_bench
from medr2.builder.spool import CaseSpool
from medr2.images import ImageStore
from tests.build_fixtures import BuildTestSource, Spec, make_case


def _square_plus_state(x: int) -> int:
    return x * x + int(parallel.worker_state(dict)["offset"])


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


VARIANT_CODES = "T1,T4,T8,V1,V2,V3,V8"


def test_streamed_variants_match_the_in_memory_engine_any_workers(tmp_path: Path) -> None:
    """Pass 3 makes variants one case at a time (V2/V3 partners fetched from the spool): the same items
    in the same order as ``generate_variants`` over the whole bench in memory, for 1 and 2 workers."""
    import shutil

    from medr2.perturb.engine import generate_variants

    for w in (1, 2):
        build_bench(BuildTestSource("bad"), tmp_path / f"w{w}", seed=5, n_cases=14, workers=w, name="b",
                    variants=VARIANT_CODES)
    for f in ("items.parquet", "cases.parquet", "manifest.json"):
        assert (tmp_path / "w1" / f).read_bytes() == (tmp_path / "w2" / f).read_bytes(), f
    assert sorted(p.name for p in (tmp_path / "w1" / "images").iterdir()) == \
        sorted(p.name for p in (tmp_path / "w2" / "images").iterdir())
    bench = load_bench(tmp_path / "w1")
    assert not [p for p in (tmp_path / "w1").iterdir() if p.name.endswith(".spool")]
    clean = bench.clean_items()
    streamed = [it for it in bench.items if it.variant != "clean"]
    assert {it.variant.split("-")[0] for it in streamed} >= {"T4", "V1", "V2", "V3", "V8"}
    assert any(it.perturbation and it.perturbation.get("other_case") for it in streamed)  # partners were found
    mem = tmp_path / "mem"
    shutil.copytree(tmp_path / "w1" / "images", mem / "images")
    in_memory, skips = generate_variants(mem, bench.cases, clean, VARIANT_CODES, 5, ImageStore(mem), workers=1)
    in_memory = sorted(in_memory, key=item_sort_key)  # the items table is sorted by split and variant, stably
    assert [it.item_id for it in in_memory] == [it.item_id for it in streamed]
    assert in_memory == streamed
    assert skips == bench.manifest["variants_skipped"]


def test_variant_jobs_are_small_chunks() -> None:
    from medr2.builder.pipeline import VARIANT_CHUNK

    assert parallel.chunk_size(40_000, 2, VARIANT_CHUNK) == VARIANT_CHUNK
    assert parallel.chunk_size(40_000, 2) == parallel.MAX_CHUNK


def test_a_build_removes_the_sort_folders_a_killed_build_left(tmp_path: Path) -> None:
    from medr2.bench.sorting import FOLDER_PREFIX

    b = tmp_path / "b"
    (b / f"{FOLDER_PREFIX}killed" / "spill").mkdir(parents=True)
    (b / f"{FOLDER_PREFIX}killed" / "spill" / "duckdb_temp_storage-0.tmp").write_bytes(b"x" * 1024)
    build_bench(BuildTestSource(None), b, seed=0, n_cases=2, workers=1, name="b")
    assert not [p.name for p in b.iterdir() if p.name.startswith(".")]


def test_item_spool_reads_back_lists_and_leaves_no_file(tmp_path: Path) -> None:
    from medr2.builder.spool import SPOOL_GLOB, ItemSpool

    b = tmp_path / "b"
    build_bench(BuildTestSource(None), b, seed=0, n_cases=4, workers=1, name="b")
    items = load_bench(b).items
    with ItemSpool(tmp_path) as spool:
        spool.put(1, items[3:])
        spool.put(0, items[:3])
        assert spool.get(0) == items[:3] and spool.get(1) == items[3:]
        assert not list(tmp_path.glob(SPOOL_GLOB))  # unnamed while open: a kill leaves nothing behind
    assert not list(tmp_path.glob(SPOOL_GLOB))
