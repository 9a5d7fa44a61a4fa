"""Degradation variants (docs/variants.md): V8 acquisition-like degradations and, through the same base, V11
physics-true ones (:mod:`medr2.perturb.physics`). One gate for every variant that degrades the image a question is
asked of (:class:`DegradingPerturbation`):

- the answer is kept exact only where the evidence the question reads survives (:func:`evidence_survives`, by the
  task's contract): for a question on the lesion evidence (``evidence_readable``) the SSIM of the degraded image to
  the image the parent shows, within each lesion (``meta["evidence_ssim"]``, the lowest over the case's findings; the
  whole image where it has none), for a question on the image's content (``readable`` only) the whole image's SSIM
  (``meta["ssim"]``), each at least ``min_evidence_ssim``; a question on the acquisition (modality, plane, sequence,
  region) stays exact; elsewhere the item is scored as a probe (no exact answer for what is shown) and does not
  preserve the answer;
- a report reference describes the image as shown (:func:`shown_report`): the sentence on image quality names
  the artefacts the image now carries (the case's own and the variant's) and the quality they leave, not the case's
  artefact alone.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from medr2.imaging.degrade import ARTEFACT_LABELS, DEGRADATIONS, QUALITY_BY_SEVERITY, SEVERITIES
from medr2.imaging.physics import MIN_EVIDENCE_SSIM, evidence_ssim
from medr2.perturb.context import PerturbContext
from medr2.perturb.registry import Perturbation, Skip, answer_changed_meta, derive_item
from medr2.perturb.visual import _cue_key, _cue_spec, _image_fields, base_image
from medr2.records import Case, Item
from medr2.renders import RenderSpec

ANSWER_DEPENDS_ON_QUALITY = ("s1.quality", "s1.artefact")
# the sentence of a report that states image quality (medr2.sources.sample.report writes it so)
_QUALITY_SENTENCE = re.compile(r"\s*Image quality is [^.\n]*\.")


def _artefact_list(labels: list[str]) -> str:
    text = labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]
    return f"{text} artefact" + ("s" if len(labels) > 1 else "")


def shown_report(report: str, case: Case, artefact: str, severity: int) -> str:
    """``report`` (the case's reference report) rewritten for its image degraded by ``artefact`` at ``severity``:
    its sentence on image quality (where it has one) replaced by one naming the case's own artefact (if any) and
    ``artefact``, with the quality of the worse severity; the sentence goes at the end of the FINDINGS section."""
    labels = [a for a in (case.artefact, artefact) if a and a != "none"]
    labels = list(dict.fromkeys(labels))
    worst = max(severity, case.artefact_severity or 0)
    sentence = f"Image quality is {QUALITY_BY_SEVERITY[min(worst, max(QUALITY_BY_SEVERITY))]}, limited by " \
               f"{_artefact_list(labels)}."
    text = _QUALITY_SENTENCE.sub("", report)
    cut = text.find("\nIMPRESSION:")
    if cut < 0:
        return f"{text.rstrip()} {sentence}"
    return f"{text[:cut].rstrip()} {sentence}{text[cut:]}"


def is_report_reference(item: Item, case: Case) -> bool:
    """Whether ``item``'s reference answer is the case's report (a free-text report item)."""
    return item.form == "text" and bool(case.report) and item.answer.strip() == str(case.report).strip()


def evidence_survives(task_id: str, whole: float, local: float, floor: float) -> bool:
    """Whether what ``task_id``'s question reads survives a degradation (:func:`medr2.tasks.contract.question_evidence`
    of its contract): the lesions' SSIM (``local``) for a question on the lesion evidence, the whole image's
    (``whole``) for one on the image's content, nothing for one on the acquisition (the modality of a bias-fielded
    MRI stays readable however much of its lesion the bias field hides)."""
    from medr2.tasks.contract import question_evidence, task_requires

    needed = question_evidence(task_requires(task_id))
    if needed == "none":
        return True
    return (local if needed == "lesion" else whole) >= floor


class DegradingPerturbation(Perturbation):
    """A variant that degrades the shown image (kinds x severities); subclasses say which kinds apply
    (:meth:`kinds`), how each is rendered (:meth:`spec`) and what artefact it is (:meth:`artefact`). ``apply``
    is the one gate: SSIM measured per item, the answer exact only where the evidence survives, a report
    reference rewritten for the image as shown."""

    roles = frozenset({"preserves_answer"})
    artefact_labels: ClassVar[dict[str, str]] = {}

    def kinds(self, rel: str, case: Case, ctx: PerturbContext) -> list[str]:
        raise NotImplementedError

    def spec(self, kind: str, severity: int, rel: str, item: Item, case: Case,
             ctx: PerturbContext) -> tuple[str, RenderSpec]:
        raise NotImplementedError

    def artefact(self, kind: str) -> str:
        return self.artefact_labels.get(kind, kind.replace("_", " "))

    def apply(self, item: Item, case: Case, ctx: PerturbContext) -> list[Item]:
        if item.task in ANSWER_DEPENDS_ON_QUALITY:
            raise Skip("the degradation changes the answer of this task")
        rel = base_image(item, case)
        kinds = self.kinds(rel, case, ctx)
        assert item.image is not None
        shown = ctx.load(item.image)
        same = (shown.shape[1], shown.shape[0]) == (case.width, case.height)
        boxes = [f.box for f in case.findings] if same else []
        seed = ctx.item_seed(item, self.code)
        report = is_report_reference(item, case)
        out = []
        for kind in kinds:
            for sev in self.params["severities"]:
                variant, spec = self.spec(kind, sev, rel, item, case, ctx)
                key = (variant, rel, _cue_key(item.cue))
                measured = ctx.memo.get(("evidence-ssim", *key, item.image))
                if measured is None:
                    ref, arr = ctx.render_spec_pixels(key, spec, record=case.case_id)
                    whole, local = evidence_ssim(arr, shown, boxes) if arr.shape == shown.shape else (0.0, 0.0)
                    measured = ctx.memo[("evidence-ssim", *key, item.image)] = (ref, whole, local)
                ref, whole, local = measured
                survives = evidence_survives(item.task, whole, local, float(self.params["min_evidence_ssim"]))
                answer = shown_report(item.answer, case, self.artefact(kind), sev) if report else item.answer
                meta = answer_changed_meta(item, answer, scoring="exact" if survives else "probe")
                # a report's findings and impression stay: its reference only gains the artefact now shown
                meta.update(ssim=whole, evidence_ssim=local, evidence_survives=survives, answer_preserving=survives)
                params: dict[str, Any] = {"kind": kind, "severity": sev}
                updates: dict[str, Any] = {"answer": answer} if answer != item.answer else {}
                out.append(derive_item(item, variant=variant, params=params, seed=seed, meta=meta, **updates,
                                       **_image_fields(ref)))
        return out


class Degradation(DegradingPerturbation):
    """V8: acquisition-like degradations at three severities (``medr2.imaging.degrade``)."""

    code = "V8"
    title = "acquisition-like degradations"
    defaults = {"kinds": "one", "severities": SEVERITIES, "min_evidence_ssim": MIN_EVIDENCE_SSIM}
    artefact_labels = ARTEFACT_LABELS

    def kinds(self, rel: str, case: Case, ctx: PerturbContext) -> list[str]:
        kinds = self.params["kinds"]
        names = list(DEGRADATIONS)
        if kinds == "all":
            return names
        if kinds == "one":
            return [names[ctx.image_seed(rel, "V8-kind") % len(names)]]
        unknown = [k for k in kinds if k not in DEGRADATIONS]
        if unknown:
            raise Skip(f"unknown degradation kinds {unknown}")
        return list(kinds)

    def spec(self, kind: str, severity: int, rel: str, item: Item, case: Case,
             ctx: PerturbContext) -> tuple[str, RenderSpec]:
        variant = f"V8-{kind}-{severity}"
        return variant, RenderSpec("degrade", rel, {"kind": kind, "severity": severity,
                                                    "seed": ctx.image_seed(rel, variant)}, **_cue_spec(item.cue, case))
