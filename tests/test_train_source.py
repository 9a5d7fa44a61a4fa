"""The train split read column-wise (``medr2.train.source``): a train item sharing an image with a test item held
out and counted, for every strategy, with and without variants, the same whether the items are read from the
bench folder or held in memory; a bad train record refused; an old-style table read the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from medr2 import Item
from medr2.bench.format import load_bench, write_bench
from medr2.train.export import STRATEGIES
from medr2.train.source import TrainSource
from tests.train_fixtures import planned, quadrant_records

LEAKY = "image shared with a non-train split"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bench whose first clean train item and first train variant show a test item's image."""
    root = tmp_path_factory.mktemp("qsplit") / "bench"
    cases, items = quadrant_records(root, 16, 0)
    test_items = [it for it in items if it.split == "test"]
    train = [k for k, it in enumerate(items) if it.split == "train"]
    assert test_items and train
    # one clean train item and one train variant on a test item's image: both must be held out
    clean = next(k for k in train if items[k].variant == "clean")
    variant = next(k for k in train if items[k].variant != "clean")
    for k in (clean, variant):
        items[k] = items[k].model_copy(update={"image": test_items[0].image,
                                               "image_sha256": test_items[0].image_sha256})
    write_bench(root, cases, items, {"name": "quadrant"})
    return root


def _train_items(root: Path) -> list[Item]:
    with TrainSource(root) as src:
        return list(src.items())


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
@pytest.mark.parametrize("with_variants", [False, True])
@pytest.mark.parametrize("dpo", [False, True])
def test_items_on_a_test_image_are_held_out_and_counted(root: Path, tmp_path: Path, strategy: str,
                                                        with_variants: bool, dpo: bool) -> None:
    bench = load_bench(root)
    test_shas = {it.image_sha256 for it in bench.items if it.split != "train"}
    leaky = {it.item_id for it in bench.items if it.split == "train" and it.image_sha256 in test_shas}
    assert len(leaky) == 2
    examples, plan = planned(root, tmp_path, strategy=strategy, with_variants=with_variants, seed=3, dpo=dpo)
    used = {i for ex in examples for i in ex.item_ids}
    assert used and not used & leaky
    assert {bench.items_by_id[i].split for i in used} == {"train"}
    variants = with_variants or strategy == "augmented"
    assert plan.skipped[LEAKY] == (2 if variants else 1)
    assert plan.skipped["split test"] == sum(1 for it in bench.items if it.split == "test")
    assert (plan.skipped["variant (without --with-variants)"] > 0) != variants
    held, held_plan = planned(bench, tmp_path, strategy=strategy, with_variants=with_variants, seed=3, dpo=dpo)
    assert held == examples and held_plan.summary() == plan.summary()  # whatever holds the items
    assert not list(tmp_path.iterdir())  # the sorted runs are removed


def test_a_bad_train_record_is_refused_naming_file_record_and_field(tmp_path: Path) -> None:
    """A train item that a buggy tool wrote with an unknown form (checksums fixed up): refused as load_bench
    refuses it, naming items.parquet, the item and the field."""
    from medr2 import BadInput
    from tests.test_reliability_inputs import _rewrite_items

    root = tmp_path / "bench"
    cases, items = quadrant_records(root, 4, 0)
    write_bench(root, cases, items, {"name": "quadrant"})
    bad = next(it.item_id for it in items if it.split == "train")
    _rewrite_items(root, lambda rows: [{**r, "form": "essay"} if r["item_id"] == bad else r for r in rows])
    with pytest.raises(BadInput) as e:
        _train_items(root)
    assert e.value.file == str(root / "items.parquet") and e.value.record == bad and e.value.field == "form"


def test_old_style_bench_gives_the_same_split(root: Path, tmp_path: Path) -> None:
    """A bench whose items table is unsorted and without statistics (as older releases wrote it): no row group
    is skipped, and the train split read through the columnar reader is the same."""
    from tests.test_run_columnar import _old_style

    old = _old_style(root, tmp_path / "old")
    want, got = _train_items(root), _train_items(old)
    assert sorted(it.item_id for it in got) == sorted(it.item_id for it in want)
    assert {it.item_id: it for it in got} == {it.item_id: it for it in want}
    with TrainSource(root) as w, TrainSource(old) as g:
        assert [w.select_counts(v) for v in (False, True)] == [g.select_counts(v) for v in (False, True)]
    # the new table's own order: the items of the train split in the order of the (sorted) file
    bench = load_bench(root)
    kept = {it.item_id for it in want}
    assert [it.item_id for it in want] == [it.item_id for it in bench.items if it.item_id in kept]
