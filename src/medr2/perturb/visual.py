"""Visual variants V1–V7 and V9 (docs/variants.md; V8 in :mod:`medr2.perturb.degraded`): the image changes,
written as new content-addressed PNGs.

Image-level randomness (which other case V2/V3 shows, where V6 puts its decoy, the V8 noise, the V4
texture) is seeded by (bench seed, shown image, code), so every question about one image sees the
same perturbed image, and that image is rendered and stored once. Items whose cue is drawn are
re-rendered from their undrawn base image (``item.meta["base_image"]`` or the case image) with the
cue drawn last, so a degradation never smears the cue and a flip moves it with its box.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
from scipy import ndimage

from medr2.images import ImageRef
from medr2.imaging.draw import box_mask, draw_cue, iou, make_cue
from medr2.imaging.sites import salient_mask, tissue_mask
from medr2.perturb.context import CaseRef, PerturbContext
from medr2.perturb.facts import NONE_OPTION, ZERO_OPTION, lesion_words, norm, option_index
from medr2.perturb.inpaint import inpaint
from medr2.perturb.registry import Perturbation, Skip, answer_changed_meta, derive_item, derive_seed
from medr2.perturb.shown import KEY_HOLDS_SHOWN, KEY_UNKNOWN_SHOWN, opposite, shown_answer
from medr2.records import Box, Case, Cue, Finding, Item, Region, canonical_json, jsonable, letter, letter_index
from medr2.renders import RenderSpec
from medr2.tasks.contract import anatomical, outline_shown

NO_FINDING_OPTION = "No finding (normal tissue)"


# --------------------------------------------------------------------------- shared helpers
def _need_image(item: Item) -> str:
    if item.image is None:
        raise Skip("text-only item (no image)")
    return item.image


def base_image(item: Item, case: Case) -> str:
    """The image a visual variant starts from: the shown image, or for a drawn cue its undrawn base."""
    rel = _need_image(item)
    if item.cue is not None and item.cue.drawn:
        return str(item.meta.get("base_image") or case.image)
    return rel


def _same_size_as_case(item: Item, case: Case) -> None:
    if (item.image_width, item.image_height) != (case.width, case.height):
        raise Skip("shown image size differs from the case image (annotations do not apply)")


def _image_fields(ref: ImageRef) -> dict[str, Any]:
    return {"image": ref.path, "image_sha256": ref.sha256, "image_width": ref.width, "image_height": ref.height}


def _cue_key(cue: Cue | None) -> str:
    return canonical_json(jsonable(cue)) if cue is not None else ""


def cue_mask_path(cue: Cue, case: Case) -> str | None:
    """The mask a contour/mask cue follows: ``cue.style["mask"]``, else the mask of the structure or
    finding of the case whose box is the cue's box."""
    if cue.kind not in ("contour", "mask"):
        return None
    if cue.style.get("mask"):
        return str(cue.style["mask"])
    regions: list[Region] = [*case.structures, *case.findings]
    for region in regions:
        if region.mask and tuple(region.box) == tuple(cue.box):
            return region.mask
    return None


def _redraw(arr: np.ndarray, cue: Cue | None, ctx: PerturbContext, case: Case, *, flip: bool = False) -> np.ndarray:
    """Draw ``cue`` on ``arr`` when it is a drawn cue (the shown image had it drawn). With ``flip``
    the cue's box is already mirrored and its mask is mirrored here."""
    if cue is None or not cue.drawn:
        return arr
    h, w = arr.shape[:2]
    rel = cue_mask_path(cue, case) if not flip else cue_mask_path(
        cue.model_copy(update={"box": flip_box(cue.box, w)}), case)
    mask = ctx.mask(rel, w, h, record=case.case_id) if rel else None
    if mask is not None and flip:
        mask = np.ascontiguousarray(mask[:, ::-1])
    return draw_cue(arr, cue, mask)


def _cue_spec(cue: Cue | None, case: Case, flip_width: int | None = None) -> dict[str, Any]:
    """The cue part of a :class:`RenderSpec`: what :func:`_redraw` draws (nothing for no cue or an undrawn
    one), with the mask it follows resolved here, where the case is known. ``flip_width``: the cue's box is
    mirrored in an image this wide, and so is its mask (V9)."""
    if cue is None or not cue.drawn:
        return {}
    flip = flip_width is not None
    rel = cue_mask_path(cue, case) if flip_width is None else cue_mask_path(
        cue.model_copy(update={"box": flip_box(cue.box, flip_width)}), case)
    return {"cue": jsonable(cue), "mask": rel, "mask_flip": flip and rel is not None}


def _width(rel: str, ctx: PerturbContext) -> int:
    """The width of the image ``rel`` (what :func:`_redraw` mirrors a cue's mask box with)."""
    return int(ctx.load(rel).shape[1])


def _finding_region(f: Finding, ctx: PerturbContext, case: Case) -> np.ndarray:
    if f.mask:
        return ctx.mask(f.mask, case.width, case.height, record=case.case_id)
    return box_mask(f.box, case.width, case.height)


# --------------------------------------------------------------------------- V1
class BlankImage(Perturbation):
    """V1: a uniform image (the mean colour of the original, same size); an image-sensitivity probe."""

    code = "V1"
    title = "blank image"
    roles = frozenset({"probe"})

    def apply(self, item: Item, case: Case, ctx: PerturbContext) -> list[Item]:
        rel = base_image(item, case)

        def make() -> np.ndarray:
            arr = ctx.load(rel)
            mean = np.rint(arr.reshape(-1, 1 if arr.ndim == 2 else 3).mean(axis=0)).astype(np.uint8)
            blank = np.broadcast_to(mean.reshape((1, 1) + arr.shape[2:]), arr.shape).copy()
            return _redraw(blank, item.cue, ctx, case)

        ref = ctx.render(("V1", rel, _cue_key(item.cue)), make)
        return [derive_item(item, variant="V1", params={"fill": "mean"}, seed=ctx.item_seed(item, self.code),
                            meta=answer_changed_meta(item, item.answer, scoring="probe"), **_image_fields(ref))]


# --------------------------------------------------------------------------- V2 / V3
SWAP_DRAWS = 32  # cases drawn per choice of another case


class _OtherCase(Perturbation):
    same_modality: bool

    def related_cases(self, case: Case, ctx: PerturbContext) -> list[str]:
        try:
            return [self._pick(case, ctx).case_id]
        except Skip:
            return []

    def _pick(self, case: Case, ctx: PerturbContext) -> CaseRef:
        key = (self.code, case.case_id)
        if key not in ctx.memo:
            ctx.memo[key] = self._choose(case, ctx)
        return ctx.memo[key]

    def _choose(self, case: Case, ctx: PerturbContext) -> CaseRef:
        rng = np.random.default_rng(derive_seed(ctx.seed, case.case_id, self.code))
        by_mod = ctx.others_for(case)
        if self.same_modality:
            group = by_mod.get(case.modality, [])
        else:  # spread over the other modalities evenly, then over their cases
            mods = [m for m in sorted(by_mod) if m != case.modality]
            if not mods:
                raise Skip("no case of another modality")
            group = by_mod[mods[int(rng.integers(len(mods)))]]

        def ok(c: CaseRef, other_patient: bool) -> bool:
            return (c.case_id != case.case_id and c.image_sha256 != case.image_sha256
                    and (not other_patient or c.patient_id != case.patient_id))

        me = CaseRef.of(case)
        for other_patient in (True, False):
            # up to SWAP_DRAWS draws (O(1) per case at any bench size); of the acceptable ones, the first
            # that differs from this case in the most facts its questions ask about, so that a reader of the
            # image has a different right answer to give on as many of the probe's questions as possible
            drawn = [group[int(rng.integers(len(group)))] for _ in range(SWAP_DRAWS)] if group else []
            cands = [c for c in drawn if ok(c, other_patient)]
            if not cands:
                cands = [c for c in group if ok(c, other_patient)]
                cands = [cands[int(rng.integers(len(cands)))]] if cands else []
            if cands:
                return max(cands, key=me.differences)  # max keeps the first of equals: the draw order
        raise Skip("no other case of the same modality" if self.same_modality else "no case of another modality")

    def apply(self, item: Item, case: Case, ctx: PerturbContext) -> list[Item]:
        rel = base_image(item, case)
        other = ctx.case(self._pick(case, ctx).case_id)
        w, h = item.image_width or case.width, item.image_height or case.height
        seed = ctx.item_seed(item, self.code)
        verdict = shown_answer(item, case, other, np.random.default_rng(seed))
        if verdict.holds is None:  # the one gate (issue 40 kind 6): no image that may answer as the parent's
            raise Skip(KEY_UNKNOWN_SHOWN)
        if verdict.holds:
            raise Skip(KEY_HOLDS_SHOWN)

        spec = RenderSpec("fit", other.image, {"size": [w, h]}, **_cue_spec(item.cue, case))
        ref = ctx.render_spec((self.code, rel, other.case_id, w, h, _cue_key(item.cue)), spec, record=case.case_id)
        updates: dict[str, Any] = {}
        scoring = "probe"
        if verdict.exact is not None:
            scoring = "exact"
            options, shown = verdict.exact
            if options != item.options or shown != item.answer:
                updates = {"options": options, "answer": shown}
            if shown != item.answer:
                updates["lure"] = item.answer
        answer = updates.get("answer", item.answer)
        params = {"other_case": other.case_id, "other_modality": other.modality, "resized": [w, h]}
        return [derive_item(item, variant=self.code, params=params, seed=seed,
                            meta=answer_changed_meta(item, answer, scoring=scoring), **updates, **_image_fields(ref))]


class OtherCaseSameModality(_OtherCase):
    """V2: the image of another case of the same modality (fitted to the shown size, its aspect kept)."""

    code = "V2"
    title = "image of another case, same modality"
    roles = frozenset({"augments"})
    same_modality = True


class OtherModality(_OtherCase):
    """V3: the image of a case of another modality (fitted to the shown size, its aspect kept)."""

    code = "V3"
    title = "image of another modality"
    roles = frozenset({"augments"})
    same_modality = False


# --------------------------------------------------------------------------- V4
def normal_without_findings(case: Case) -> bool:
    """Whether removing every annotated lesion leaves a normal image: only where the source declares the
    finding list complete (:func:`medr2.tasks.contract.labels_complete`, the tasks' answerability contract);
    an undeclared list is unknown, and the image may keep findings nobody labelled."""
    from medr2.tasks.contract import labels_complete

    return labels_complete(case, "findings")


def _needs_normal(case: Case) -> None:
    if not normal_without_findings(case):
        raise Skip("case may stay abnormal without its annotated lesions")


def _cf_abnormal(item: Item, case: Case) -> str:
    _needs_normal(case)
    return opposite(item.answer)  # the true claim and its twin both flip


def _cf_option(pattern: re.Pattern[str], what: str) -> Any:
    def rule(item: Item, case: Case) -> str:
        _needs_normal(case)
        idx = next((i for i, o in enumerate(item.options) if pattern.match(o)), None)
        if idx is None:
            raise Skip(f"no '{what}' option for the counterfactual answer")
        return letter(idx)

    return rule


def _cf_absent(item: Item, case: Case) -> str:
    """'Is there F?': an absent F stays absent; the twin naming a present finding becomes 'no'."""
    if item.answer == "yes":
        _needs_normal(case)
    return "no"


# task -> rule giving the exact answer once every lesion is removed
COUNTERFACTUALS: dict[str, Any] = {
    "s3.abnormal": _cf_abnormal,
    "s3.finding_type": _cf_option(NONE_OPTION, "no finding"),
    "s3.count": _cf_option(ZERO_OPTION, "zero"),
    "s4.multilabel": _cf_option(NONE_OPTION, "none"),
    "s3.absent_finding": _cf_absent,
}


def removal_region(case: Case, ctx: PerturbContext, dilate_px: int, image: np.ndarray | None = None) -> np.ndarray:
    """Every lesion of the case (mask, else box), dilated by ``dilate_px``: the pixels V4 replaces; given the
    ``image`` they are drawn on, each lesion's halo measured there is covered too (:func:`lesion_removal_region`)."""
    lesions = [_finding_region(f, ctx, case) for f in case.findings]
    if image is None:
        union = np.zeros((case.height, case.width), bool)
        for m in lesions:
            union |= m
        return ndimage.binary_dilation(union, iterations=dilate_px) if dilate_px > 0 else union
    return lesion_removal_region(lesions, image, dilate_px)


def lesion_removal_region(lesions: list[np.ndarray], image: np.ndarray, dilate_px: int) -> np.ndarray:
    """The pixels V4 replaces: each lesion mask dilated by ``dilate_px`` or by one pixel more than its halo measured
    on ``image`` (:func:`medr2.perturb.inpaint.halo_px`: a rim's oedema, an ill-defined margin's tail), whichever
    is more, so that no outline of the lesion is left round the removed region."""
    from medr2.perturb.inpaint import halo_px

    union = np.zeros(image.shape[:2], bool)
    for m in lesions:
        union |= m
    gray = image.astype(np.float64) if image.ndim == 2 else image.astype(np.float64).mean(axis=2)
    tissue = tissue_mask(image)
    region = np.zeros_like(union)
    for m in lesions:
        keep = tissue & ~ndimage.binary_dilation(union & ~m, iterations=2)
        grow = max(dilate_px, halo_px(gray, m, keep) + 1)
        region |= ndimage.binary_dilation(m, iterations=grow)
    return region


def removal_shows(after: np.ndarray, case: Case, ctx: PerturbContext, region: np.ndarray) -> str | None:
    """Why V4's removal of the case's lesions still shows in the rendered image ``after``, or None where it does
    not: a lesion not wholly inside the removed ``region``, or a removed region whose trace
    (:func:`medr2.perturb.trace.removal_traces`: contrast, texture, border edge, outline against the tissue round
    it) is above a limit of :data:`medr2.perturb.trace.LIMITS`. The one check every V4 image goes through."""
    from medr2.perturb.trace import removal_traces

    for f in case.findings:
        if not (_finding_region(f, ctx, case) <= region).all():
            return "a lesion lies outside the removed region"
    failed = sorted({k for t in removal_traces(after, region, tissue_mask(after)) for k in t.failed()})
    return f"the removal still shows ({', '.join(failed)})" if failed else None


class EvidenceRemoval(Perturbation):
    """V4: every lesion inpainted from the surrounding tissue (its halo included, :func:`removal_region`); the answer
    becomes the counterfactual. The answer of "no lesion" holds only where the rendered image shows none: the fill
    is drawn again (another texture patch, up to ``attempts`` draws in all, seeded by the image) while its trace
    shows (:func:`removal_shows`), and a removal whose trace a reader would still see skips the case, counted with
    what shows."""

    code = "V4"
    title = "evidence removed"
    roles = frozenset({"augments"})
    defaults = {"dilate_frac": 0.01, "max_fraction": 0.25, "attempts": 3}

    def apply(self, item: Item, case: Case, ctx: PerturbContext) -> list[Item]:
        rel = _need_image(item)
        if not case.findings:
            raise Skip("case has no lesion to remove")
        rule = COUNTERFACTUALS.get(item.task)
        if rule is None:
            raise Skip(f"counterfactual answer not exact for task {item.task}")
        if item.cue is not None and item.cue.drawn:
            raise Skip("item carries a drawn cue")
        _same_size_as_case(item, case)
        answer = rule(item, case)
        dilate = max(2, round(self.params["dilate_frac"] * min(case.width, case.height)))

        key = ("V4", rel, dilate)
        if key not in ctx.memo:  # rendered and checked once per image; every item of it shares the check
            before = ctx.load(rel)
            region = removal_region(case, ctx, dilate, before)
            if region.mean() > self.params["max_fraction"]:
                ctx.memo[key] = (None, "lesion region too large to inpaint")
            else:
                seed = ctx.image_seed(rel, self.code)
                for attempt in range(int(self.params["attempts"])):  # another draw of the texture patch
                    rng = np.random.default_rng(seed if attempt == 0 else [seed, attempt])
                    after = inpaint(before, region, rng)
                    shows = removal_shows(after, case, ctx, region)
                    if shows is None:
                        break
                ctx.memo[key] = (None if shows else ctx.render(key, lambda: after), shows)
        ref, why = ctx.memo[key]
        if ref is None:
            raise Skip(str(why))
        params = {"removed": [f.label for f in case.findings], "dilate_px": dilate}
        meta = answer_changed_meta(item, answer)
        meta["counterfactual"] = True
        return [derive_item(item, variant="V4", params=params, seed=ctx.item_seed(item, self.code), answer=answer,
                            meta=meta, **_image_fields(ref))]


# --------------------------------------------------------------------------- V5 / V6 / V7
def _marked(item: Item, case: Case) -> tuple[str, int]:
    """Which cue question family the item supports, and the index of the finding it is about."""
    if not case.findings:
        raise Skip("case has no lesion")
    if item.form == "box":
        raise Skip("the cue would give away the box answer")
    labels = [norm(f.label) for f in case.findings]
    if item.form == "mcq" and item.options and norm(item.answer_text) in labels:
        return "label", labels.index(norm(item.answer_text))
    if item.task == "s3.abnormal" and item.answer == "yes":
        return "abnormal", 0
    if item.stage >= 3:
        idx = item.meta.get("finding")
        if isinstance(idx, int) and 0 <= idx < len(case.findings):
            return "lesion", idx
        if len(case.findings) == 1:
            return "lesion", 0
        raise Skip("several lesions and the item does not name one")
    raise Skip("the question is not about a lesion")


def _label_options(item: Item, ctx: PerturbContext) -> tuple[list[str], int]:
    """The item's options with a 'no finding' option (an existing one, else in place of a distractor)."""
    options = list(item.options)
    idx = next((i for i, o in enumerate(options) if NONE_OPTION.match(o)), None)
    if idx is None:
        rng = np.random.default_rng(ctx.item_seed(item, "cue-options"))
        wrong = [i for i in range(len(options)) if letter(i) != item.answer]
        if not wrong:
            raise Skip("no distractor to replace with a 'no finding' option")
        idx = wrong[int(rng.integers(len(wrong)))]
        options[idx] = NO_FINDING_OPTION
    return options, idx


class _CueVariant(Perturbation):
    defaults = {"kind": "box"}

    def _cue_kind(self, f: Finding) -> str:
        kind = str(self.params["kind"])
        if kind not in ("box", "contour", "mask", "point"):
            raise Skip(f"unknown cue kind {kind}")
        return kind if kind in ("box", "point") or f.mask else "box"

    def _target(self, item: Item, case: Case) -> tuple[str, str, int]:
        """The shown image, the cue question family and the finding the item is about."""
        rel = _need_image(item)
        if item.cue is not None:
            raise Skip("item already carries a cue")
        _same_size_as_case(item, case)
        family, fi = _marked(item, case)
        return rel, family, fi

    def _render(self, item: Item, case: Case, ctx: PerturbContext, cue: Cue, mask: np.ndarray | None,
                rel: str) -> ImageRef:
        return ctx.render((self.code, rel, _cue_key(cue)), lambda: draw_cue(ctx.load(rel), cue, mask))


def _one_lesion(case: Case) -> str:
    """The lesion a cue marks, named in agreement with the case's lesions: "The lesion" of its only one, "One of
    the lesions" of several (:func:`medr2.perturb.facts.lesion_words`)."""
    words = lesion_words(case)
    return "One of the lesions" if words["is"] == "are" else words["The_lesion"]


def _cue_question(family: str, item: Item, where: str) -> str:
    if family == "label":
        return f"Which finding is present in {where}?"
    if family == "abnormal":
        return f"Is there an abnormality in {where}?"
    return item.question


class CorrectCue(_CueVariant):
    """V5: a cue drawn on the true lesion; the question refers to the marked region."""

    code = "V5"
    title = "correct cue"
    roles = frozenset({"keeps_facts"})

    def apply(self, item: Item, case: Case, ctx: PerturbContext) -> list[Item]:
        rel, family, fi = self._target(item, case)
        f = case.findings[fi]
        kind = self._cue_kind(f)
        cue = make_cue(kind, f.box, case.width, case.height, image=ctx.load(rel))
        mask = _finding_region(f, ctx, case) if kind in ("contour", "mask") else None
        ref = self._render(item, case, ctx, cue, mask, rel)
        updates: dict[str, Any] = {"cue": cue, **_image_fields(ref)}
        if family == "label":
            options, _ = _label_options(item, ctx)
            updates.update(options=options, question=_cue_question(family, item, "the marked region"))
        elif family == "abnormal":
            updates["question"] = _cue_question(family, item, "the marked region")
        else:
            updates["question"] = f"{_one_lesion(case)} is marked on the image. {item.question}"
        return [derive_item(item, variant="V5", params={"family": family, "kind": kind, "finding": fi},
                            seed=ctx.item_seed(item, self.code), meta=answer_changed_meta(item, item.answer),
                            **updates)]


def decoy_gap(size: tuple[float, float]) -> float:
    """The least distance a decoy of ``size`` keeps from a lesion box or a salient structure: a quarter of its size."""
    return 0.25 * max(size)


def salient_structures(case: Case, ctx: PerturbContext, arr: np.ndarray, gap: float) -> np.ndarray:
    """The pixels of ``arr`` (the case's image as shown) that a decoy must not touch
    (:func:`medr2.imaging.sites.salient_mask`): the case's landmarks and instances with the zone round them, and the
    border of each structure whose outline the image shows (the case's measure,
    :func:`medr2.tasks.contract.outline_shown`). Structures as the tasks know them
    (:func:`medr2.tasks.contract.anatomical`): a tissue class's border (grey against white matter) runs through the
    whole organ and is no structure a reader takes for a finding."""
    h, w = arr.shape[:2]
    parts = [(s.kind, ctx.mask(s.mask, w, h, record=case.case_id), outline_shown(case, s))
             for s in anatomical(case).structures if s.mask]
    return salient_mask((h, w), parts, gap)


def place_decoy(arr: np.ndarray, lesion_boxes: list[Box], size: tuple[float, float], rng: np.random.Generator,
                *, tries: int = 400, min_tissue: float = 0.97, tissue: np.ndarray | None = None,
                avoid: np.ndarray | None = None) -> Box | None:
    """A box of ``size`` on tissue, separated from every lesion box by a gap of a quarter of its size
    (:func:`decoy_gap`) and touching no pixel of ``avoid`` (the salient normal structures,
    :func:`salient_structures`: a decoy on the optic disc's margin is taken for the finding; issue 40)."""
    h, w = arr.shape[:2]
    bw, bh = size
    if bw >= w or bh >= h:
        return None
    tissue = tissue_mask(arr) if tissue is None else tissue
    gray = arr.astype(np.float64) if arr.ndim == 2 else arr.astype(np.float64).mean(axis=2)
    # "on tissue" also means as bright as typical tissue, not a dim pocket (fat, air) inside the body
    floor = float(np.percentile(gray[tissue], 25)) if tissue.any() else 0.0
    gap = decoy_gap(size)
    grown = [(x1 - gap, y1 - gap, x2 + gap, y2 + gap) for x1, y1, x2, y2 in lesion_boxes]
    for _ in range(tries):
        x1 = float(rng.uniform(0, w - bw))
        y1 = float(rng.uniform(0, h - bh))
        box = (x1, y1, x1 + bw, y1 + bh)
        if any(iou(box, g) > 0 for g in grown):
            continue
        inside = box_mask(box, w, h)
        if avoid is not None and avoid[inside].any():
            continue
        if tissue[inside].mean() >= min_tissue and gray[inside].mean() >= floor:
            return box
    return None


class DecoyCue(_CueVariant):
    """V6: the same cue drawn on lesion-free tissue; the truth for the marked region is 'nothing'."""

    code = "V6"
    title = "decoy cue"
    roles = frozenset({"keeps_facts"})

    def apply(self, item: Item, case: Case, ctx: PerturbContext) -> list[Item]:
        rel, family, fi = self._target(item, case)
        if family == "lesion":
            raise Skip("the answer for a lesion-free region is not defined for this question")
        f = case.findings[fi]
        kind = self._cue_kind(f)
        arr = ctx.load(rel)
        rng = np.random.default_rng(ctx.image_seed(rel, f"{self.code}-{fi}"))
        size = (f.box[2] - f.box[0], f.box[3] - f.box[1])
        key = ("V6-decoy", rel, fi)
        if key not in ctx.memo:
            avoid = salient_structures(case, ctx, arr, decoy_gap(size))
            ctx.memo[key] = place_decoy(arr, [g.box for g in case.findings], size, rng, avoid=avoid)
        box = ctx.memo[key]
        if box is None:
            raise Skip("no lesion-free tissue off the salient structures for a decoy of the lesion's size")
        cue = make_cue(kind, box, case.width, case.height, image=arr)
        mask = None
        if kind in ("contour", "mask"):
            dx, dy = round(box[0] - f.box[0]), round(box[1] - f.box[1])
            mask = ndimage.shift(_finding_region(f, ctx, case).astype(np.uint8), (dy, dx), order=0) > 0
        ref = self._render(item, case, ctx, cue, mask, rel)
        updates: dict[str, Any] = {"cue": cue, "question": _cue_question(family, item, "the marked region"),
                                   **_image_fields(ref)}
        if family == "label":
            options, none_idx = _label_options(item, ctx)
            updates.update(options=options, answer=letter(none_idx), lure=item.answer)
        else:
            updates.update(answer="no", lure="yes")
        meta = answer_changed_meta(item, updates["answer"])
        meta["decoy_of"] = f.label
        return [derive_item(item, variant="V6", params={"family": family, "kind": kind, "finding": fi},
                            seed=ctx.item_seed(item, self.code), meta=meta, **updates)]


# the region a V7 question names: the prompt states its coordinates once, before the question, in the box convention
# of the model asked (medr2.run.prompts.question_text: "The region of interest is [...]"), so the question never
# repeats them (issue 40 kind 5: the region was stated twice, once in the bench's pixels)
ROI = "the region of interest"
# wording of drawn-cue questions rewritten for a cue given as coordinates (first match wins per phrase)
_UNDRAW: tuple[tuple[str, str], ...] = (
    (r"\bregion (?:highlighted|marked|outlined|indicated|shown|circled|enclosed) (?:by the drawn "
     r"(?:outline|marker|box|contour|mark|mask)|(?:in|on) the image)\b", "region of interest"),
    (r"\b(?:what|which) (\w+) does the (?:drawn )?marker point to\b", r"which \1 lies in " + ROI),
    (r"\b(?:highlighted|marked|outlined|indicated|shown|circled|enclosed) by the drawn "
     r"(?:outline|marker|box|contour|mark|mask)\b", f"in {ROI}"),
    (r"\bthe drawn (?:outline|marker|box|contour|mark|mask)\b", ROI),
    (r"\b(?:marked|outlined|highlighted|circled|boxed|indicated) (?:in|on) the image\b", f"in {ROI}"),
    (r"\bthe (?:marked|outlined|highlighted|circled|boxed|indicated) (?:region|point|area)\b", ROI),
    (r"\b(?:marked|outlined|highlighted|circled|boxed)\b", "indicated"),
)


class CoordinatesOnly(Perturbation):
    """V7: the true region given as coordinates in the text (the prompt's one "region of interest" line, in the
    model's box convention; the question names :data:`ROI`); nothing is drawn."""

    code = "V7"
    title = "region as coordinates only"
    roles = frozenset({"keeps_facts"})

    def apply(self, item: Item, case: Case, ctx: PerturbContext) -> list[Item]:
        _need_image(item)
        seed = ctx.item_seed(item, self.code)
        if item.cue is not None:
            return [self._undraw(item, case, ctx, seed)]
        _same_size_as_case(item, case)
        family, fi = _marked(item, case)
        f = case.findings[fi]
        where = ROI
        cue = make_cue("coords", f.box, case.width, case.height, image=None, drawn=False)
        updates: dict[str, Any] = {"cue": cue}
        if family == "label":
            options, _ = _label_options(item, ctx)
            updates.update(options=options, question=_cue_question(family, item, where))
        elif family == "abnormal":
            updates["question"] = _cue_question(family, item, where)
        else:
            updates["question"] = f"{_one_lesion(case)} lies in {ROI}. {item.question}"
        return [derive_item(item, variant="V7", params={"family": family, "finding": fi}, seed=seed,
                            meta=answer_changed_meta(item, item.answer), **updates)]

    @staticmethod
    def _undraw(item: Item, case: Case, ctx: PerturbContext, seed: int) -> Item:
        """A cue item: show its undrawn base image and give the cue's box in the text instead."""
        assert item.cue is not None
        if not item.cue.drawn:
            raise Skip("cue is already given as coordinates")
        rel = base_image(item, case)
        if rel == case.image:
            w, h = case.width, case.height
            fields: dict[str, Any] = {"image": case.image, "image_sha256": case.image_sha256}
        else:
            arr = ctx.load(rel)
            w, h = int(arr.shape[1]), int(arr.shape[0])
            fields = {"image": rel, "image_sha256": Path(rel).stem}
        fields.update(image_width=w, image_height=h)
        cue = make_cue("coords", item.cue.box, w, h, image=None, drawn=False)
        text = item.question
        for pattern, repl in _UNDRAW:
            text = re.sub(pattern, repl, text, flags=re.IGNORECASE)
        text = text[:1].upper() + text[1:]
        where = "" if ROI in text else f"; {ROI} is given above"
        question = f"{text} (Nothing is drawn on the image{where}.)"
        return derive_item(item, variant="V7", params={"family": "cue", "from_kind": item.cue.kind}, seed=seed,
                           cue=cue, question=question, meta=answer_changed_meta(item, item.answer), **fields)


# --------------------------------------------------------------------------- V9
_LATERAL = re.compile(r"\b(left|right)\b", re.IGNORECASE)


def swap_sides(text: str) -> str:
    def sub(m: re.Match[str]) -> str:
        word = m.group(0)
        other = "right" if word.lower() == "left" else "left"
        return other.capitalize() if word[0].isupper() else other

    return _LATERAL.sub(sub, text)


def flip_box(box: Box, width: int) -> Box:
    x1, y1, x2, y2 = box
    return (float(width - x2), y1, float(width - x1), y2)


class HorizontalFlip(Perturbation):
    """V9: the image mirrored left-right; laterality answers, boxes and cues mirrored with it."""

    code = "V9"
    title = "horizontal flip"
    roles = frozenset({"preserves_answer"})

    def apply(self, item: Item, case: Case, ctx: PerturbContext) -> list[Item]:
        rel = base_image(item, case)
        answer, options = self._answer(item)
        w = item.image_width or case.width
        cue = item.cue.model_copy(update={"box": flip_box(item.cue.box, w)}) if item.cue is not None else None
        answer_box = flip_box(item.answer_box, w) if item.answer_box is not None else None

        flip_width = _width(rel, ctx) if cue is not None and cue.drawn else None
        spec = RenderSpec("hflip", rel, {}, **_cue_spec(cue, case, flip_width))
        ref = ctx.render_spec(("V9", rel, _cue_key(cue)), spec, record=case.case_id)
        meta = answer_changed_meta(item, answer)
        meta["answer_preserving"] = answer == item.answer and item.form != "box"
        return [derive_item(item, variant="V9", params={"axis": "horizontal"}, seed=ctx.item_seed(item, self.code),
                            answer=answer, options=options, answer_box=answer_box, cue=cue, meta=meta,
                            **_image_fields(ref))]

    @staticmethod
    def _answer(item: Item) -> tuple[str, list[str]]:
        if item.task == "s1.orientation" and item.form == "yesno":
            return ("no" if item.answer == "yes" else "yes"), item.options
        if any(_LATERAL.search(t.question + " " + t.answer) for t in item.context):
            raise Skip("context mentions laterality")
        lateral_q = bool(_LATERAL.search(item.question))
        if item.form in ("mcq", "multi"):
            letters = [a for a in item.answer.split(",") if a]
            new = []
            for a in letters:
                text = item.options[letter_index(a)]
                if not _LATERAL.search(text):
                    if lateral_q:
                        raise Skip("question mentions laterality; its answer under mirroring is not exact")
                    new.append(a)
                    continue
                idx = option_index(item.options, swap_sides(text))
                if idx is None:
                    raise Skip("mirrored answer is not among the options")
                new.append(letter(idx))
            return ",".join(sorted(new)), item.options
        if item.form == "box":
            return item.answer, item.options
        if lateral_q or _LATERAL.search(item.answer):
            raise Skip(f"{item.form} item mentions laterality; its answer under mirroring is not exact")
        return item.answer, item.options
