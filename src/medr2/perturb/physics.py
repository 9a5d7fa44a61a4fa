"""V11 physics-true degradations (docs/variants.md): CT low dose in the projection domain, CT metal streaks, MR
ghosting, Gibbs ringing, bias field and undersampling, X-ray under-exposure and grid lines
(``medr2.imaging.physics``), each at three severities, for the modalities they are physical for.

It goes through the one gate of every degrading variant (:class:`medr2.perturb.degraded.DegradingPerturbation`):
every item records the SSIM of its image to the image its parent shows (``meta["ssim"]``) and within the
lesions (``meta["evidence_ssim"]``: the lowest over the case's findings; the whole image where it has none). The
parent's answer is kept as exact only where the evidence the question reads survives
(:func:`medr2.perturb.degraded.evidence_survives`: the lesions' SSIM for a lesion question, the whole image's for
one on the image's content, nothing for one on the acquisition); elsewhere the item is scored as a probe (no
exact answer for what is shown), so accuracy per kind and severity counts only items whose evidence is still
there, and ``n`` says how many. A report reference names the artefact.
"""

from __future__ import annotations

from medr2.imaging.physics import (
    ARTEFACT_LABELS,
    MIN_EVIDENCE_SSIM,
    PHYSICS,
    PHYSICS_VERSION,
    SEVERITIES,
    SSIM_DIGITS,
    kinds_for,
)
from medr2.perturb.context import PerturbContext
from medr2.perturb.degraded import DegradingPerturbation
from medr2.perturb.registry import Skip
from medr2.perturb.visual import _cue_spec
from medr2.records import Case, Item
from medr2.renders import RenderSpec

__all__ = ["SSIM_DIGITS", "PhysicsDegradation"]


class PhysicsDegradation(DegradingPerturbation):
    """V11: physics-true CT/MRI/X-ray degradations at graded severities, with SSIM recorded per item."""

    code = "V11"
    title = "physics-true degradations (CT dose and metal, MR ghost/Gibbs/bias/aliasing, X-ray exposure/grid)"
    defaults = {"kinds": "one", "severities": SEVERITIES, "min_evidence_ssim": MIN_EVIDENCE_SSIM}
    artefact_labels = ARTEFACT_LABELS

    def kinds(self, rel: str, case: Case, ctx: PerturbContext) -> list[str]:
        names = kinds_for(case.modality)
        if not names:
            raise Skip(f"no physics degradation is defined for modality {case.modality}")
        kinds = self.params["kinds"]
        if kinds == "all":
            return names
        if kinds == "one":
            return [names[ctx.image_seed(rel, "V11-kind") % len(names)]]
        unknown = [k for k in kinds if k not in PHYSICS]
        if unknown:
            raise Skip(f"unknown physics degradation kinds {unknown}")
        return [k for k in kinds if k in names]

    def spec(self, kind: str, severity: int, rel: str, item: Item, case: Case,
             ctx: PerturbContext) -> tuple[str, RenderSpec]:
        return f"V11-{kind}-{severity}", RenderSpec(
            "physics", rel, {"kind": kind, "severity": severity, "seed": ctx.image_seed(rel, f"V11-{kind}"),
                             "v": PHYSICS_VERSION},
            **_cue_spec(item.cue, case))
