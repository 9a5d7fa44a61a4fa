"""V12 look-alike pairs (docs/variants.md; MediConfusion's image pairs a vision encoder confuses): a clean item's
question asked, with the same options, of the image (as it is) of another case that looks most like the item's
image and whose right answer to that question is another option. The variant and its clean parent are one pair
(role ``pairs``), scored "both right" (``metrics.json`` ``pairs``: :func:`medr2.scoring.metrics.pairs`).

How alike two images look is :func:`medr2.imaging.similarity.look_alike` (SSIM of grey thumbnails, offline on the
CPU). The other case is drawn from the cases of the same modality and split and of another patient (up to
``candidates`` of them, drawn with the bench seed and the case id: bounded work at any bench size); of those whose
answer to the question is known exactly (:func:`medr2.perturb.shown.answer_for_shown`, the rule V2 answers
another case's image by) and differs from the parent's, the most alike, where it is at least ``min_similarity``.
Its answer is the option naming what the other image shows; its lure is the parent's answer (the answer of a
reader who does not tell the two apart).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from medr2.imaging.similarity import look_alike, thumbnail
from medr2.perturb.context import CaseRef, PerturbContext
from medr2.perturb.registry import Perturbation, Skip, answer_changed_meta, derive_item, derive_seed
from medr2.perturb.shown import answer_for_shown
from medr2.perturb.visual import _image_fields, _need_image
from medr2.records import Case, Item
from medr2.renders import RenderSpec

THUMB_CACHE = 50_000  # thumbnails kept per process (≈ 256 B each)
_THUMBS: dict[tuple[str, str], np.ndarray] = {}


class LookAlikePair(Perturbation):
    """V12: the most alike image of another case whose answer differs, scored as a pair with its parent."""

    code = "V12"
    title = "look-alike pair (the most alike image of another case, another answer; scored both right)"
    roles = frozenset({"pairs", "augments"})
    defaults = {"candidates": 24, "min_similarity": 0.5}

    def related_cases(self, case: Case, ctx: PerturbContext) -> list[str]:
        return [c.case_id for c in self._candidates(case, ctx)]

    def _candidates(self, case: Case, ctx: PerturbContext) -> list[CaseRef]:
        """Other cases of the case's modality, split and of other patients, each image once (a look-alike never
        shows an image of another split: a training pair would teach a held-out image): every such case where the
        modality has at most twice ``candidates`` cases, else ``candidates`` of them drawn (the first distinct of
        four times as many seeded draws)."""
        key = (self.code, "candidates", case.case_id)
        if key in ctx.memo:
            return list(ctx.memo[key])
        k = int(self.params["candidates"])
        group = ctx.others_for(case).get(case.modality, [])

        def eligible(c: CaseRef) -> bool:
            return c.patient_id != case.patient_id and c.image_sha256 != case.image_sha256

        if len(group) <= 2 * k:
            ok = [c for c in group if eligible(c)]
        else:
            rng = np.random.default_rng(derive_seed(ctx.seed, case.case_id, self.code))
            ok = [c for c in (group[int(i)] for i in rng.integers(len(group), size=4 * k)) if eligible(c)]
        chosen: list[CaseRef] = []
        for c in ok:
            if c.image_sha256 not in {o.image_sha256 for o in chosen}:
                chosen.append(c)
            if len(chosen) == k and len(group) > 2 * k:
                break
        ctx.memo[key] = tuple(chosen)
        return chosen

    def _thumb(self, rel: str, ctx: PerturbContext) -> np.ndarray:
        """The thumbnail of the bench image ``rel``, made once per process: the build's variant pass makes a fresh
        context per case, and the same candidates' images are compared for many cases. ``rel`` names its content
        (``images/<identity>.png``), so a thumbnail kept under (bench folder, ``rel``) is the one it would make."""
        key = (str(ctx.root), rel)
        got = _THUMBS.get(key)
        if got is None:
            got = _THUMBS[key] = thumbnail(ctx.load(rel))
            if len(_THUMBS) > THUMB_CACHE:
                _THUMBS.pop(next(iter(_THUMBS)))  # the oldest (a 16-px thumbnail is 256 bytes: the bound is small)
        return got

    def _partner(self, item: Item, case: Case, rel: str, ctx: PerturbContext,
                 seed: int) -> tuple[Case, float, tuple[list[str], str], int]:
        """(other case, similarity, (options, answer) for its image, candidates compared) of the most alike
        candidate whose exact answer differs from the parent's (ties: the smaller case id)."""
        mine = self._thumb(rel, ctx)
        best: tuple[float, str] | None = None
        found: dict[str, tuple[Case, float, tuple[list[str], str]]] = {}
        for ref in sorted(self._candidates(case, ctx), key=lambda c: c.case_id):
            other = ctx.case(ref.case_id)
            got = answer_for_shown(item, case, other, np.random.default_rng(derive_seed(seed, other.case_id)))
            if got is None or got[1] == item.answer:
                continue
            sim = look_alike(mine, self._thumb(other.image, ctx))
            found[other.case_id] = (other, sim, got)
            if best is None or sim > best[0]:  # equals: the first, the smaller case id
                best = (sim, other.case_id)
        if best is None:
            raise Skip("no candidate case has another exact answer to the question")
        if best[0] < float(self.params["min_similarity"]):
            raise Skip("no case with another answer looks alike (similarity below min_similarity)")
        other, sim, got = found[best[1]]
        return other, sim, got, len(found)

    def apply(self, item: Item, case: Case, ctx: PerturbContext) -> list[Item]:
        if item.form not in ("mcq", "yesno"):
            raise Skip(f"form {item.form} has no exact answer for another case's image")
        if item.cue is not None:
            raise Skip("the cue marks a place in the clean item's image, not in another case's")
        rel = _need_image(item)
        seed = ctx.item_seed(item, self.code)
        other, sim, (options, answer), compared = self._partner(item, case, rel, ctx, seed)
        # the other case's image as it is (its own size: a look-alike is not stretched to the clean one's shape)
        spec = RenderSpec("fit", other.image, {"size": [other.width, other.height]})
        ref = ctx.render_spec((self.code, other.image), spec, record=case.case_id)
        meta = answer_changed_meta(item, answer)
        meta["similarity"] = sim
        params: dict[str, Any] = {"other_case": other.case_id, "similarity": sim, "compared": compared,
                                  "options_changed": options != item.options}
        return [derive_item(item, variant=self.code, params=params, seed=seed, meta=meta,
                            options=options, answer=answer, lure=item.answer, **_image_fields(ref))]

