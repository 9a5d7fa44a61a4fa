"""Variants of the items that show several images of one patient (issue 49; docs/variants.md): T12 a report of the
prior study in the prompt that contradicts what the prior shows (an indirect premise), V13 the prior swapped with
another patient's study, V14 the order of the images reversed, V15 one companion image (another view, sequence or
the prior) blanked. Each declares its roles in the registry; an item with one image is skipped."""

from __future__ import annotations

from typing import Any

import numpy as np

from medr2.perturb.context import PerturbContext
from medr2.perturb.registry import Perturbation, Skip, answer_changed_meta, derive_item, derive_seed
from medr2.records import Case, ImageRef, Item

ONE_IMAGE = "the item shows one image"
NO_PRIOR = "the item shows no prior study"


def _refs(item: Item) -> list[ImageRef]:
    refs = item.image_list()
    if len(refs) < 2:
        raise Skip(ONE_IMAGE)
    return refs


def _prior_index(refs: list[ImageRef]) -> int:
    idx = next((i for i, r in enumerate(refs) if r.role == "prior"), None)
    if idx is None:
        raise Skip(NO_PRIOR)
    return idx


def _dump(refs: list[ImageRef]) -> list[dict[str, Any]]:
    return [r.model_dump() for r in refs]


# --------------------------------------------------------------------------- T12
# the prior study's report, stating the finding's state on the prior wrongly; ``{x}`` the finding with its article
PRIOR_REPORTS: dict[str, tuple[str, ...]] = {
    "absent": (
        'Report of the prior study: "FINDINGS: No {x_bare} is seen. IMPRESSION: No acute abnormality."',
        'Prior examination, final report: "There is no evidence of {x}."',
        'Earlier study on file, report: "Unremarkable; specifically, no {x_bare}."',
    ),
    "present": (
        'Report of the prior study: "FINDINGS: There is {x}. IMPRESSION: {X} as described."',
        'Prior examination, final report: "{X} is present."',
        'Earlier study on file, report: "Known {x_bare}, noted on this examination."',
    ),
}
# the change a reader who believes the report gives: (claimed prior state, current state) -> answer
_BELIEVED = {("present", "present"): "unchanged", ("absent", "present"): "new", ("present", "absent"): "resolved"}


class ContradictingPriorReport(Perturbation):
    """T12: the report of the prior study quoted before a comparison question, stating the opposite of what the prior
    study shows (its labels: the finding absent where the prior has it, present where it has not). The right answer
    stays the change the two images show; the lure is the change the report would make it."""

    code = "T12"
    title = "prior report contradicting the prior study (indirect premise)"
    roles = frozenset({"misleads", "augments", "keeps_facts"})

    def apply(self, item: Item, case: Case, ctx: PerturbContext) -> list[Item]:
        from medr2.tasks.vocab import indefinite

        _prior_index(_refs(item))
        before, now, finding = item.meta.get("prior_state"), item.meta.get("current_state"), item.meta.get("finding")
        if before not in ("present", "absent") or now not in ("present", "absent") or not finding:
            raise Skip("no finding state of both studies recorded (not a comparison item)")
        claimed = "absent" if before == "present" else "present"
        seed = ctx.item_seed(item, self.code)
        templates = PRIOR_REPORTS[claimed]
        t = int(np.random.default_rng(seed).integers(len(templates)))
        x = indefinite(str(finding))
        report = templates[t].format(x=x, X=x[:1].upper() + x[1:], x_bare=finding)
        from medr2.tasks.compare import CHANGE_TEXT

        believed = CHANGE_TEXT.get(_BELIEVED.get((claimed, now), ""))
        lure = chr(65 + item.options.index(believed)) if believed in item.options else None
        meta = answer_changed_meta(item, item.answer)
        params = {"template": t, "claimed_prior_state": claimed, "finding": finding}
        return [derive_item(item, variant=self.code, params=params, seed=seed, lure=lure, meta=meta,
                            question=f"{report} {item.question}")]


# --------------------------------------------------------------------------- V13
class PriorSwap(Perturbation):
    """V13: the prior study replaced with a study of another patient of the same modality and split (its interval as
    declared): no change between the two has a meaning, so the item is a probe; a model that reads the prior answers
    otherwise than on its parent (``comparison.prior_sensitivity``)."""

    code = "V13"
    title = "prior swapped with another patient's study"
    roles = frozenset({"probe"})

    def related_cases(self, case: Case, ctx: PerturbContext) -> list[str]:
        if not any(c.role == "prior" for c in case.companions):
            return []
        try:
            return [self._pick(case, ctx)]
        except Skip:
            return []

    def _pick(self, case: Case, ctx: PerturbContext) -> str:
        key = (self.code, case.case_id)
        if key not in ctx.memo:
            ctx.memo[key] = self._choose(case, ctx)
        return str(ctx.memo[key])

    def _choose(self, case: Case, ctx: PerturbContext) -> str:
        rng = np.random.default_rng(derive_seed(ctx.seed, case.case_id, self.code))
        group = [c for c in ctx.others_for(case).get(case.modality, []) if c.patient_id != case.patient_id]
        if not group:
            raise Skip("no study of another patient of the same modality and split")
        return group[int(rng.integers(len(group)))].case_id

    def apply(self, item: Item, case: Case, ctx: PerturbContext) -> list[Item]:
        refs = _refs(item)
        i = _prior_index(refs)
        other_id = self._pick(case, ctx)
        if other_id not in ctx.cases:  # the case links no prior (an item made elsewhere): its study was not loaded
            raise Skip("the case links no prior study: no other patient's study loaded")
        other = ctx.case(other_id)
        swapped = refs[i].model_copy(update={"path": other.image, "sha256": other.image_sha256,
                                             "width": other.width, "height": other.height,
                                             "case_id": other.case_id})
        refs[i] = swapped
        params = {"other_case": other.case_id, "prior_case": item.image_list()[i].case_id}
        return [derive_item(item, variant=self.code, params=params, seed=ctx.item_seed(item, self.code),
                            meta=answer_changed_meta(item, item.answer, scoring="probe"), images=_dump(refs))]


# --------------------------------------------------------------------------- V14
class OrderReversed(Perturbation):
    """V14: the item's images shown in the reverse order, each still named by its role (prior, current, view,
    sequence): the answer is the parent's, so a changed answer is an order effect."""

    code = "V14"
    title = "order of the images reversed"
    roles = frozenset({"preserves_answer", "keeps_facts", "augments"})

    def apply(self, item: Item, case: Case, ctx: PerturbContext) -> list[Item]:
        refs = _refs(item)
        reversed_refs = list(reversed(refs))
        order = [r.role for r in reversed_refs]
        return [derive_item(item, variant=self.code, params={"order": order}, seed=ctx.item_seed(item, self.code),
                            meta=answer_changed_meta(item, item.answer), images=_dump(reversed_refs))]


# --------------------------------------------------------------------------- V15
class CompanionBlanked(Perturbation):
    """V15: one image beside the current one (the other view, a sequence, the prior) replaced by a blank image of its
    size (its mean colour): what that image showed is gone, so the item is a probe."""

    code = "V15"
    title = "one view blanked"
    roles = frozenset({"probe"})

    def apply(self, item: Item, case: Case, ctx: PerturbContext) -> list[Item]:
        refs = _refs(item)
        i = next(k for k, r in enumerate(refs) if r.role != "current")
        rel = refs[i].path

        def make() -> np.ndarray:
            arr = ctx.load(rel)
            mean = np.rint(arr.reshape(-1, 1 if arr.ndim == 2 else 3).mean(axis=0)).astype(np.uint8)
            return np.broadcast_to(mean.reshape((1, 1) + arr.shape[2:]), arr.shape).copy()

        ref = ctx.render(("V15", rel), make)
        refs[i] = refs[i].model_copy(update={"path": ref.path, "sha256": ref.sha256})
        params = {"blanked": i, "role": refs[i].role, "fill": "mean"}
        return [derive_item(item, variant=self.code, params=params, seed=ctx.item_seed(item, self.code),
                            meta=answer_changed_meta(item, item.answer, scoring="probe"), images=_dump(refs))]
