"""What a perturbation may look at besides its item: all cases, chains, fact pools, images."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from medr2.errors import BadInput
from medr2.imageio import ImageRef, ImageStore, load_image
from medr2.perturb.facts import FactPools
from medr2.perturb.registry import derive_seed
from medr2.records import Case, Item

_LRU = 8


@dataclass
class PerturbContext:
    root: Path
    images: ImageStore
    seed: int
    cases: dict[str, Case]
    chains: dict[str, list[Item]]
    pools: FactPools
    _arrays: OrderedDict[tuple[str, str | None], np.ndarray] = field(default_factory=OrderedDict, repr=False)
    _rendered: dict[tuple[object, ...], ImageRef] = field(default_factory=dict, repr=False)
    memo: dict[tuple[object, ...], Any] = field(default_factory=dict, repr=False)

    @cached_property
    def cases_by_modality(self) -> dict[str, list[Case]]:
        """Cases per modality, each list sorted by case id."""
        out: dict[str, list[Case]] = {}
        for c in sorted(self.cases.values(), key=lambda c: c.case_id):
            out.setdefault(c.modality, []).append(c)
        return out

    @classmethod
    def build(cls, root: Path, cases: Sequence[Case], clean_items: Sequence[Item], seed: int,
              images: ImageStore) -> PerturbContext:
        chains: dict[str, list[Item]] = {}
        for it in clean_items:
            if it.chain_id and it.step is not None and it.variant == "clean":
                chains.setdefault(it.chain_id, []).append(it)
        for steps in chains.values():
            steps.sort(key=lambda it: (it.step, it.item_id))
        return cls(Path(root), images, seed, {c.case_id: c for c in cases}, chains, FactPools(cases))

    # ---- seeds
    def item_seed(self, item: Item, code: str) -> int:
        """Seed of one variant item: a stable hash of (bench seed, parent item id, code)."""
        return derive_seed(self.seed, item.item_id, code)

    def image_seed(self, image_rel: str, code: str) -> int:
        """Seed of an image-level transform: the same for every question shown that image."""
        return derive_seed(self.seed, image_rel, code)

    # ---- images
    def load(self, rel: str, mode: str | None = None) -> np.ndarray:
        key = (rel, mode)
        arr = self._arrays.get(key)
        if arr is None:
            arr = load_image(self.images.path(rel), mode=mode)
            arr.setflags(write=False)
            self._arrays[key] = arr
            while len(self._arrays) > _LRU:
                self._arrays.popitem(last=False)
        else:
            self._arrays.move_to_end(key)
        return arr

    def mask(self, rel: str, width: int, height: int, *, record: str) -> np.ndarray:
        m = self.load(rel, "L") > 127
        if m.shape != (height, width):
            raise BadInput(f"mask is {m.shape[1]}x{m.shape[0]}, image is {width}x{height}", file=rel,
                           record=record, field="mask")
        return m

    def render(self, key: tuple[object, ...], make: Callable[[], np.ndarray]) -> ImageRef:
        """Write the image ``make()`` once per ``key`` (memoised within this process)."""
        ref = self._rendered.get(key)
        if ref is None:
            ref = self.images.put_array(make())
            self._rendered[key] = ref
        return ref

    def clear_rendered(self) -> None:
        self._rendered.clear()
