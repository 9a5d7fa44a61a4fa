"""A small bench whose items show several images (issue 49), written with the real bench writer: the run
fixture's bench (every form, chains, variants, cues, context turns, splits) with a prior study added to the items
of cases 0 and 2 (90 days before), a lateral view to those of case 1, and case 3 left with one image."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from medr2 import Bench, Item
from medr2.bench import load_bench, write_bench
from medr2.images import ImageStore
from medr2.records import ImageRef, item_content_id
from tests.run_fixtures import H, W, make_items


def _second(store: ImageStore, c: int) -> ImageRef | None:
    """The second image of case ``c``'s items: a prior, a lateral view, or none."""
    if c % 4 == 3:
        return None
    rng = np.random.default_rng(5000 + c)
    ref = store.put_array(rng.integers(0, 255, (H, W), dtype=np.uint8))
    if c % 4 == 1:
        return ImageRef(path=ref.path, sha256=ref.sha256, width=W, height=H, role="view", label="lateral")
    return ImageRef(path=ref.path, sha256=ref.sha256, width=W, height=H, role="prior", interval_days=90,
                    case_id=f"case{c}-prior")


def with_second_image(item: Item, second: ImageRef, parents: dict[str, str]) -> Item:
    """``item`` showing ``second`` before its own image (a prior first, as a reader compares), with its id made
    again from its content and its parent's new id."""
    fields: dict[str, Any] = item.model_dump(exclude={"item_id"})
    fields["images"] = [second.model_dump(), item.image_list()[0].model_dump()]
    if item.parent_id is not None:
        fields["parent_id"] = parents.get(item.parent_id, item.parent_id)
    fields["item_id"] = item_content_id(fields)
    parents[item.item_id] = fields["item_id"]
    return Item(**fields)


def make_multi_items(store: ImageStore, n_cases: int = 4) -> tuple[list[Any], list[Item]]:
    cases, items = make_items(store, n_cases)
    seconds = {f"case{c}": _second(store, c) for c in range(n_cases)}
    parents: dict[str, str] = {}
    out = []
    for it in items:  # parents come before their variants
        second = seconds[it.case_id]
        out.append(it if second is None or it.image is None else with_second_image(it, second, parents))
        if second is None and it.parent_id in parents:
            raise AssertionError("a variant of a two-image item left with one image")
    return cases, out


def make_multi_bench(root: Path, n_cases: int = 4) -> Bench:
    store = ImageStore(root)
    cases, items = make_multi_items(store, n_cases)
    write_bench(root, cases, items, {"name": "multi-image-test"})
    return load_bench(root)
