"""The train split read column-wise (``medr2.train.source``): the same examples and counts as planning from the
whole bench's records, for every strategy, with and without variants, and a train item sharing an image with a
test item held out as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from medr2.bench.format import load_bench, write_bench
from medr2.train.export import STRATEGIES, plan_dpo, plan_examples
from medr2.train.source import read_train_split
from tests.train_fixtures import quadrant_records


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
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


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
@pytest.mark.parametrize("with_variants", [False, True])
def test_split_plans_equal_whole_bench_plans(root: Path, strategy: str, with_variants: bool) -> None:
    bench = load_bench(root)
    split = read_train_split(root)
    assert split.name == bench.name and split.checksum == bench.checksum
    assert len(split.items) < len(bench.items)  # test items never became records
    want = plan_examples(bench.items, bench.cases, strategy=strategy, with_variants=with_variants, seed=3)
    got = plan_examples((), (), strategy=strategy, with_variants=with_variants, seed=3, split=split)
    assert got.examples == want.examples and got.summary() == want.summary()
    assert want.skipped["image shared with a non-train split"] >= 1
    dpo_want = plan_dpo(bench.items, bench.cases, strategy=strategy, with_variants=with_variants, seed=3)
    dpo_got = plan_dpo((), (), strategy=strategy, with_variants=with_variants, seed=3, split=split)
    assert dpo_got.examples == dpo_want.examples and dpo_got.summary() == dpo_want.summary()


def test_a_bad_train_record_is_refused_naming_file_record_and_field(tmp_path: Path) -> None:
    """A train item that a buggy tool wrote with an unknown form (checksums fixed up): refused as load_bench
    refuses it, naming items.parquet, the item and the field."""
    from medr2.errors import BadInput
    from tests.test_reliability_inputs import _rewrite_items

    root = tmp_path / "bench"
    cases, items = quadrant_records(root, 4, 0)
    write_bench(root, cases, items, {"name": "quadrant"})
    bad = next(it.item_id for it in items if it.split == "train")
    _rewrite_items(root, lambda rows: [{**r, "form": "essay"} if r["item_id"] == bad else r for r in rows])
    with pytest.raises(BadInput) as e:
        read_train_split(root)
    assert e.value.file == str(root / "items.parquet") and e.value.record == bad and e.value.field == "form"


def test_old_style_bench_gives_the_same_split(root: Path, tmp_path: Path) -> None:
    """A bench whose items table is unsorted and without statistics (as older releases wrote it): no row group
    is skipped, and the train split read through the columnar reader is the same."""
    from tests.test_run_columnar import _old_style

    old = _old_style(root, tmp_path / "old")
    want, got = read_train_split(root), read_train_split(old)
    assert sorted(it.item_id for it in got.items) == sorted(it.item_id for it in want.items)
    for with_variants in (False, True):
        w_items, w_skipped = want.select(with_variants)
        g_items, g_skipped = got.select(with_variants)
        assert g_skipped == w_skipped and {it.item_id: it for it in g_items} == {it.item_id: it for it in w_items}
    # the new table's own order: the items of the train split in the order of the (sorted) file
    bench = load_bench(root)
    assert [it.item_id for it in want.items] == [it.item_id for it in bench.items if it.item_id in
                                                  {i.item_id for i in want.items}]
