"""Fine-tuning exports of items of several images (issue 49): every SFT format carries each image in order (one
``<image>`` place per image where the format has them), and a train item one of whose images another split uses
is held out (``TrainSource``), whether the items are read from the bench folder or held in memory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import medr2
from medr2.bench.format import write_bench
from medr2.bench.table import BenchTable
from medr2.images import ImageStore
from medr2.train.formats import FORMATS
from medr2.train.source import TrainSource
from tests.multi_image_fixtures import make_multi_bench, with_second_image
from tests.run_fixtures import make_items


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return make_multi_bench(tmp_path_factory.mktemp("multi") / "bench")


def _two_image_train(bench: Any) -> dict[str, list[str]]:
    return {it.item_id: [r.path for r in it.images] for it in bench.items
            if it.split == "train" and len(it.images) == 2 and it.variant == "clean"}


def test_swift_and_llamafactory_carry_both_images(bench: Any, tmp_path: Path) -> None:
    want = _two_image_train(bench)
    assert want
    medr2.export(bench.root, "swift", tmp_path / "swift")
    rows = [json.loads(line) for f in sorted((tmp_path / "swift").glob("*.jsonl"))
            if not f.name.startswith("medr2_export") for line in f.read_text().splitlines()]
    two = [r for r in rows if len(r["images"]) == 2]
    assert two and all(r["messages"][0 if r["messages"][0]["role"] == "user" else 1]["content"].count("<image>") == 2
                       for r in two)
    assert {tuple(Path(p).name for p in r["images"]) for r in two} <= {
        tuple(Path(p).name for p in paths) for paths in want.values()}
    medr2.export(bench.root, "llamafactory", tmp_path / "lf")
    files = [f for f in sorted((tmp_path / "lf").glob("*.json"))
             if f.name != "dataset_info.json" and not f.name.startswith("medr2_export")]
    data = [r for f in files for r in json.loads(f.read_text())]
    assert any(len(r["images"]) == 2 for r in data)


def test_every_sft_format_is_covered() -> None:
    assert {"llamafactory", "swift", "hf"} <= set(FORMATS.names())


def test_train_item_with_a_test_image_held_out(tmp_path: Path) -> None:
    """A train item whose prior is the image a test item asks about leaks that image: held out and counted."""
    store = ImageStore(tmp_path / "b")
    cases, items = make_items(store, 4)
    test_item = next(it for it in items if it.split == "test" and not it.images and it.variant == "clean")
    train_item = next(it for it in items if it.split == "train" and not it.images and it.variant == "clean")
    leaky_prior = test_item.image_list()[0].model_copy(update={"role": "prior", "interval_days": 30})
    leaky = with_second_image(train_item, leaky_prior, {})
    write_bench(tmp_path / "b", cases, [*items, leaky], {"name": "leak"})
    folder = BenchTable(tmp_path / "b")
    for table in (folder, BenchTable.held(folder.root, folder.manifest, [*items, leaky])):
        with TrainSource(table) as src:
            kept = list(src.items())
            assert leaky.item_id not in {it.item_id for it in kept} and train_item in kept
            assert src.select_counts(False)[1]["image shared with a non-train split"] == 1
