"""V11 physics-true degradations (docs/variants.md): CT low dose in the projection domain, CT metal streaks, MR
ghosting, Gibbs ringing, bias field and undersampling, X-ray under-exposure and grid lines
(``medr2.imaging.physics``), each at three severities, for the modalities they are physical for.

Every item records the SSIM of its image to the image its parent shows (``meta["ssim"]``) and within the
lesions (``meta["evidence_ssim"]``: the lowest over the case's findings; the whole image where it has none). The
parent's answer is kept as exact only where the evidence survives (``evidence_ssim >= min_evidence_ssim``);
elsewhere the item is scored as a probe (no exact answer for what is shown), so accuracy per kind and severity
counts only items whose evidence is still there, and ``n`` says how many.
"""

from __future__ import annotations

from typing import Any

from medr2.imaging.physics import PHYSICS, SEVERITIES, kinds_for, ssim
from medr2.perturb.context import PerturbContext
from medr2.perturb.registry import Perturbation, Skip, answer_changed_meta, derive_item
from medr2.perturb.visual import ANSWER_DEPENDS_ON_QUALITY, _cue_key, _cue_spec, _image_fields, base_image
from medr2.records import Case, Item
from medr2.renders import RenderSpec

SSIM_DIGITS = 4  # SSIM is recorded rounded (same bytes across BLAS builds)


class PhysicsDegradation(Perturbation):
    """V11: physics-true CT/MRI/X-ray degradations at graded severities, with SSIM recorded per item."""

    code = "V11"
    title = "physics-true degradations (CT dose and metal, MR ghost/Gibbs/bias/aliasing, X-ray exposure/grid)"
    roles = frozenset({"preserves_answer"})
    defaults = {"kinds": "one", "severities": SEVERITIES, "min_evidence_ssim": 0.5}

    def _kinds(self, rel: str, modality: str | None, ctx: PerturbContext) -> list[str]:
        names = kinds_for(modality)
        if not names:
            raise Skip(f"no physics degradation is defined for modality {modality}")
        kinds = self.params["kinds"]
        if kinds == "all":
            return names
        if kinds == "one":
            return [names[ctx.image_seed(rel, "V11-kind") % len(names)]]
        unknown = [k for k in kinds if k not in PHYSICS]
        if unknown:
            raise Skip(f"unknown physics degradation kinds {unknown}")
        return [k for k in kinds if k in names]

    def apply(self, item: Item, case: Case, ctx: PerturbContext) -> list[Item]:
        if item.task in ANSWER_DEPENDS_ON_QUALITY:
            raise Skip("the degradation changes the answer of this task")
        rel = base_image(item, case)
        kinds = self._kinds(rel, case.modality, ctx)
        assert item.image is not None
        shown = ctx.load(item.image)
        same = (shown.shape[1], shown.shape[0]) == (case.width, case.height)
        boxes = [f.box for f in case.findings] if same else []
        seed = ctx.item_seed(item, self.code)
        out = []
        for kind in kinds:
            for sev in self.params["severities"]:
                variant = f"V11-{kind}-{sev}"
                spec = RenderSpec("physics", rel, {"kind": kind, "severity": sev,
                                                   "seed": ctx.image_seed(rel, f"V11-{kind}")},
                                  **_cue_spec(item.cue, case))
                key = (variant, rel, _cue_key(item.cue))
                measured = ctx.memo.get(("V11-ssim", *key, item.image))
                if measured is None:
                    ref, arr = ctx.render_spec_pixels(key, spec, record=case.case_id)
                    whole = round(ssim(arr, shown), SSIM_DIGITS)
                    local = min((round(ssim(arr, shown, b), SSIM_DIGITS) for b in boxes), default=whole)
                    measured = ctx.memo[("V11-ssim", *key, item.image)] = (ref, whole, local)
                ref, whole, local = measured
                survives = local >= float(self.params["min_evidence_ssim"])
                meta = answer_changed_meta(item, item.answer, scoring="exact" if survives else "probe")
                meta.update(ssim=whole, evidence_ssim=local, evidence_survives=survives,
                            answer_preserving=survives)
                params: dict[str, Any] = {"kind": kind, "severity": sev}
                out.append(derive_item(item, variant=variant, params=params, seed=seed, meta=meta,
                                       **_image_fields(ref)))
        return out
