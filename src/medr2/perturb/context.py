"""What a perturbation may look at besides its item: its case and the cases it asked for, chains, fact
pools, an index of all cases by modality, images.

The build hands the variants pass one case at a time (:meth:`PerturbContext.for_case`): a
perturbation that shows another case declares it up front (``Perturbation.related_cases``), and only
those cases travel with the job. What every case shares (fact pools, the index) is small: a few
strings per case, not the cases themselves.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from medr2.errors import BadInput
from medr2.images import ImageRef, ImageStore, load_image
from medr2.perturb.facts import FactPools, swap_facts
from medr2.perturb.registry import derive_seed
from medr2.records import Case, Item
from medr2.renders import RenderSpec, render

_LRU = 8


@dataclass(frozen=True, slots=True)
class CaseRef:
    """What choosing another case looks at: its id, patient, image hash, modality, the values of the
    facts its questions ask about (:func:`medr2.perturb.facts.swap_facts`) and its split (None before splits are
    assigned)."""

    case_id: str
    patient_id: str
    image_sha256: str | None
    modality: str
    facts: tuple[str | None, ...] = ()
    split: str | None = None

    @classmethod
    def of(cls, case: Case) -> CaseRef:
        return cls(case.case_id, case.patient_id, case.image_sha256, case.modality, swap_facts(case), case.split)

    def differences(self, other: CaseRef) -> int:
        """How many facts known for both cases differ."""
        return sum(a is not None and b is not None and a != b for a, b in zip(self.facts, other.facts, strict=True))


class CaseIndex:
    """References to every case of the bench per modality, each list sorted by case id."""

    def __init__(self, cases: Iterable[Case] = ()) -> None:
        self._by_mod: dict[str, list[CaseRef]] = {}
        self._by_split: dict[str, dict[str, list[CaseRef]]] = {}
        self._sorted = True
        for c in cases:
            self.add(c)

    def add(self, case: Case) -> None:
        self.add_ref(CaseRef.of(case))

    def add_ref(self, ref: CaseRef) -> None:
        self._by_mod.setdefault(ref.modality, []).append(ref)
        self._sorted = False

    @property
    def by_modality(self) -> dict[str, list[CaseRef]]:
        if not self._sorted:
            for refs in self._by_mod.values():
                refs.sort(key=lambda r: r.case_id)
            self._by_split = {}
            self._sorted = True
        return self._by_mod

    def of_split(self, split: str | None) -> dict[str, list[CaseRef]]:
        """The cases of ``split`` per modality, each list sorted by case id (every case where ``split`` is None:
        before splits are assigned). Made once per split."""
        by_mod = self.by_modality
        if split is None:
            return by_mod
        got = self._by_split.get(split)
        if got is None:
            got = {m: kept for m, refs in by_mod.items() if (kept := [r for r in refs if r.split == split])}
            self._by_split[split] = got
        return got


def chains_of(clean_items: Iterable[Item]) -> dict[str, list[Item]]:
    """The clean steps of each chain, in step order."""
    chains: dict[str, list[Item]] = {}
    for it in clean_items:
        if it.chain_id and it.step is not None and it.variant == "clean":
            chains.setdefault(it.chain_id, []).append(it)
    for steps in chains.values():
        steps.sort(key=lambda it: (it.step, it.item_id))
    return chains


@dataclass
class PerturbContext:
    root: Path
    images: ImageStore
    seed: int
    cases: dict[str, Case]  # the cases a perturbation may read in full (all, or one case and its related ones)
    chains: dict[str, list[Item]]
    pools: FactPools
    index: CaseIndex
    _arrays: OrderedDict[tuple[str, str | None], np.ndarray] = field(default_factory=OrderedDict, repr=False)
    _rendered: dict[tuple[object, ...], ImageRef] = field(default_factory=dict, repr=False)
    memo: dict[tuple[object, ...], Any] = field(default_factory=dict, repr=False)

    def others_for(self, case: Case) -> dict[str, list[CaseRef]]:
        """The cases a variant of ``case`` may show the image of, per modality, each list sorted by case id: those of
        ``case``'s split (every case before splits are assigned). The one door to other cases' images (V2, V3, V12):
        a training item never shows a held-out image, a test item never a training one."""
        return self.index.of_split(case.split)

    def case(self, case_id: str) -> Case:
        """A case this context holds in full (its own case, or one its perturbations declared)."""
        return self.cases[case_id]

    @classmethod
    def build(cls, root: Path, cases: Sequence[Case], clean_items: Sequence[Item], seed: int,
              images: ImageStore) -> PerturbContext:
        """A context over a whole bench held in memory."""
        return cls(Path(root), images, seed, {c.case_id: c for c in cases}, chains_of(clean_items),
                   FactPools(cases), CaseIndex(cases))

    def for_case(self, case: Case, clean_items: Iterable[Item], related: Iterable[Case] = ()) -> PerturbContext:
        """A fresh context for one case: the shared pools and index, the case, the ``related`` cases its
        perturbations declared, the chains of its ``clean_items``, and empty image caches."""
        cases = {c.case_id: c for c in related}
        cases[case.case_id] = case
        return PerturbContext(self.root, self.images, self.seed, cases, chains_of(clean_items), self.pools,
                              self.index)

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

    def render_spec(self, key: tuple[object, ...], spec: RenderSpec, *, record: str) -> ImageRef:
        """Render ``spec`` (:func:`medr2.renders.render`, the function a reader of a deferred image calls)
        once per ``key``; the store writes the image or, deferring, records ``spec`` under its hash."""
        ref = self._rendered.get(key)
        if ref is None:
            ref = self.images.put_render(render(spec, _ContextLoader(self, record)), spec.to_json())
            self._rendered[key] = ref
        return ref

    def render_spec_pixels(self, key: tuple[object, ...], spec: RenderSpec, *,
                           record: str) -> tuple[ImageRef, np.ndarray]:
        """:meth:`render_spec` that also returns the pixels rendered (for a variant that measures its image,
        e.g. V11's SSIM); rendered again where ``key`` was rendered before (the pixels are not kept)."""
        arr = render(spec, _ContextLoader(self, record))
        ref = self._rendered.get(key)
        if ref is None:
            ref = self.images.put_render(arr, spec.to_json())
            self._rendered[key] = ref
        return ref, arr

    def clear_rendered(self) -> None:
        self._rendered.clear()


class _ContextLoader:
    """:class:`medr2.renders.Loader` over a context's image cache; a bad mask names ``record``."""

    def __init__(self, ctx: PerturbContext, record: str) -> None:
        self.ctx, self.record = ctx, record

    def load(self, rel: str, mode: str | None = None) -> np.ndarray:
        return self.ctx.load(rel, mode)

    def mask(self, rel: str, width: int, height: int) -> np.ndarray:
        return self.ctx.mask(rel, width, height, record=self.record)
