"""The export plans (``medr2.train.stream``, the one plan there is): the order each strategy promises (the module
doc), the same plan and the same export bytes whether it is made in one piece or in many (buckets, and batches read
back from the sort, small enough for every plan to be cut into many), a plan iterated once, the finetune dataset
streamed to disk. The sort itself: tests/test_bench_sorting.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from medr2 import Bench, Item
from medr2.bench import sorting
from medr2.bench.format import load_bench
from medr2.train import stream
from medr2.train.dataset import export_dataset
from medr2.train.export import STRATEGIES, _order_key
from medr2.train.formats import FORMATS, hf_features, hf_records
from medr2.train.source import TrainSource
from tests.train_fixtures import planned, write_quadrant_bench


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Bench:
    return load_bench(write_quadrant_bench(tmp_path_factory.mktemp("qstream") / "bench", n_cases=24))


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Buckets of about 4 rows read back in batches of 7: every plan made in many buckets, split across batches."""
    with monkeypatch.context() as m:
        m.setattr(stream, "BUCKET_ROWS", 4)
        m.setattr(sorting, "BATCH_ROWS", 7)
        yield


def _kept(bench: Bench, with_variants: bool) -> list[Item]:
    """The train items a plan reads, in file order."""
    with TrainSource(bench.root) as src:
        return [it for it in src.items() if with_variants or it.variant == "clean"]


def _files(out: Path) -> dict[str, bytes]:
    return {str(f.relative_to(out)): f.read_bytes() for f in sorted(out.rglob("*")) if f.is_file()}


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
@pytest.mark.parametrize("with_variants", [False, True])
def test_a_plan_sorted_in_many_pieces_is_the_plan_sorted_in_one(bench: Bench, tmp_path: Path, strategy: str,
                                                                with_variants: bool,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    kw = {"strategy": strategy, "with_variants": with_variants, "seed": 5}
    whole, whole_plan = planned(bench.root, tmp_path, **kw)
    monkeypatch.setattr(stream, "BUCKET_ROWS", 4)
    monkeypatch.setattr(sorting, "BATCH_ROWS", 7)
    pieces, pieces_plan = planned(bench.root, tmp_path, **kw)
    assert pieces == whole and pieces_plan.summary() == whole_plan.summary()
    assert not list(tmp_path.iterdir())  # no sorted run left behind
    if strategy in ("flat", "augmented"):  # one example per item, by the hash of its id
        keys = [_order_key(5, ex.item_ids[0]) for ex in whole]
        assert keys == sorted(keys) and all(len(ex.item_ids) == 1 for ex in whole)
    if strategy == "flat":
        assert sorted(ex.item_ids[0] for ex in whole) == sorted(it.item_id for it in _kept(bench, with_variants))


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_export_bytes_do_not_depend_on_the_sort_pieces(bench: Bench, tmp_path: Path, fmt: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from datasets import config

    monkeypatch.setattr(config, "MAX_SHARD_SIZE", "20KB")  # hf: several shards
    kw = {"strategy": "chain", "with_variants": True, "seed": 5}
    export_dataset(bench.root, fmt, tmp_path / "one", **kw)  # type: ignore[arg-type]
    monkeypatch.setattr(stream, "BUCKET_ROWS", 4)
    monkeypatch.setattr(sorting, "BATCH_ROWS", 7)
    export_dataset(bench.root, fmt, tmp_path / "many", **kw)  # type: ignore[arg-type]
    one, many = _files(tmp_path / "one"), _files(tmp_path / "many")
    if fmt.startswith("swift"):  # absolute image paths name the export folder
        one = {k: v.replace(str((tmp_path / "one").resolve()).encode(), str((tmp_path / "many").resolve()).encode())
               for k, v in one.items()}
    assert many == one


@pytest.mark.parametrize("replay", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_curriculum_blocks_and_replay_samples(bench: Bench, tmp_path: Path, small: None, replay: float,
                                              seed: int) -> None:
    """One block per stage, ascending: the stage's items and the ``round(replay * block)`` earlier items of
    smallest replay hash, mixed by the block's hash."""
    examples, _ = planned(bench, tmp_path, strategy="curriculum", with_variants=True, seed=seed, replay=replay,
                          answer_style="option-text")
    kept = _kept(bench, True)
    stage_of = {it.item_id: it.stage for it in kept}
    got = [(ex.item_ids[0], ex.stage) for ex in examples]
    assert all(len(ex.item_ids) == 1 for ex in examples)
    earlier: list[str] = []
    pos = 0
    for stage in sorted(set(stage_of.values())):
        block = [i for i, s in stage_of.items() if s == stage]
        n_replay = min(len(earlier), round(replay * len(block)))
        part = got[pos:pos + len(block) + n_replay]
        pos += len(part)
        ids = [i for i, _ in part]
        assert sorted(i for i in ids if stage_of[i] == stage) == sorted(block)
        replayed = sorted(i for i in ids if stage_of[i] != stage)
        assert replayed == sorted(sorted(earlier, key=lambda i, s=stage: _order_key(seed, f"replay{s}:{i}"))[:n_replay])
        keys = [_order_key(seed, f"{stage}:{i}") for i in ids]
        assert keys == sorted(keys)
        earlier += block
    assert pos == len(got) and (replay == 0.0 or len(got) > len(kept))
    assert not list(tmp_path.iterdir())


def test_chains_are_one_example_each_in_step_order(bench: Bench, tmp_path: Path, small: None) -> None:
    examples, _ = planned(bench, tmp_path, strategy="chain", with_variants=True, seed=1)
    by_id = {it.item_id: it for it in bench.items}
    chains = [ex for ex in examples if len(ex.item_ids) > 1]
    assert chains
    for ex in chains:
        items = [by_id[i] for i in ex.item_ids]
        assert len({it.chain_id for it in items}) == 1 and all(it.variant == "clean" for it in items)
        assert [(it.step, it.item_id) for it in items] == sorted((it.step, it.item_id) for it in items)
        assert ex.stage == max(it.stage for it in items)
    keys = [_order_key(1, "|".join(ex.item_ids)) for ex in examples]
    assert keys == sorted(keys)
    assert sorted(i for ex in examples for i in ex.item_ids) == sorted(it.item_id for it in _kept(bench, True))


def test_a_streamed_plan_is_iterated_once(bench: Bench, tmp_path: Path) -> None:
    with TrainSource(bench.root) as src:
        plan = stream.stream_captions(src, seed=4, work=tmp_path)
        assert list(plan) and plan.summary()["counts"]["train_images"] == plan.n_examples
        with pytest.raises(RuntimeError, match="once"):
            list(plan)


def test_finetune_dataset_is_streamed_to_disk_with_the_in_memory_rows(bench: Bench, tmp_path: Path,
                                                                      small: None) -> None:
    from datasets import Dataset

    from medr2.train.finetune import build_dataset, decoded_png

    examples, _ = planned(bench, tmp_path, strategy="chain", with_variants=True, seed=1)
    want = Dataset.from_list(hf_records(examples, bench.root, dpo=False, image_bytes=decoded_png),
                             features=hf_features(False))
    with TrainSource(bench.root) as src:
        streamed = stream.stream_examples(src, strategy="chain", with_variants=True, seed=1, work=tmp_path)
        ds = build_dataset(streamed, bench.root, tmp_path / "cache")
    # the same Arrow rows; the images are stored undecoded and decoded by the dataset's transform, once per image
    assert ds.data.table.equals(want.data.table) and ds.features == hf_features(False, decode=False)
    assert [Path(f["filename"]).parent.parent for f in ds.cache_files] == [tmp_path / "cache"]  # memory-mapped
    got, expected = ds[:], want[:]
    assert got["messages"] == expected["messages"] and got["item_ids"] == expected["item_ids"]
    assert [[np.asarray(im).tobytes() for im in row] for row in got["images"]] == \
        [[np.asarray(im).tobytes() for im in row] for row in expected["images"]]
    seen: dict[bytes, int] = {}
    for row in got["images"]:
        for im in row:
            seen.setdefault(np.asarray(im).tobytes(), id(im))
            assert seen[np.asarray(im).tobytes()] == id(im)  # an image shown twice is decoded once
    assert len(seen) < sum(len(row) for row in got["images"])
    assert streamed.n_examples == len(examples)
