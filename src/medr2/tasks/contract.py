"""Answerability contracts: what a case must provide for a task's question to be answerable from its image.

A task declares the requirements it needs (``TaskSpec.requires``, the ``requires=`` of ``@task``), each an
entry of :data:`REQUIREMENTS`; :func:`medr2.tasks.assemble.draft_case` checks them in one place, before the
generator runs, and a requirement that does not hold skips the task for that case with the requirement's
reason (counted in ``manifest.json`` ``skipped`` like any other skip). The contract is written beside each
task in docs/tasks.md (a test compares it with the registry) and shown by ``medr2 info --quality``.

What a case knows comes from its source, never from an assumption: ``Case.meta["findings_complete"]`` and
``Case.meta["structures_complete"]`` (true only where the source declares every finding / structure of the
image labelled), ``Case.meta["one_lesion"]`` (the source images one lesion per image),
``Case.meta["instances_complete"]`` (every instance of each finding label the source gives is labelled) and
``Case.meta["lateralising"]`` (true only where the image shows an anatomical or marker cue
that tells a mirror image from the original), ``Case.meta["discriminable"]`` (the diagnoses the source declares
its image tells apart from the case's own: a generator that renders each class with its own appearance, a
dataset whose classes are defined by what the image shows), ``Case.meta["severity_graded"]`` (the case's
severity is a clinical grade the source carries, not a bin of lesion size or count) and
``Case.meta["malignancy_discriminable"]`` (the case's benign/malignant label is one its image tells apart). An
undeclared flag is unknown, and unknown is not complete.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from medr2 import vocab as clinical
from medr2.records import Case, Finding, Structure
from medr2.registry import Registry
from medr2.tasks import vocab
from medr2.vocab.differential import (
    MALIGNANCY_UNDECIDED,
    discriminable,
    malignancy_decidable,
)

LABEL_KINDS = ("findings", "structures")  # kinds of labels a source may declare complete


@dataclass(frozen=True)
class Requirement:
    """One clause of a task's contract: ``holds(case)`` or the task is skipped with ``reason``."""

    id: str
    text: str  # what the case must provide (docs/tasks.md, medr2 info --quality)
    holds: Callable[[Case], bool]
    reason: str  # the skip reason counted when it does not hold
    # the reason for one case, where a clause fails for more than one cause counted apart (else ``reason``)
    why: Callable[[Case], str] | None = None

    def reason_for(self, case: Case) -> str:
        """The skip reason counted for ``case``, which does not meet this requirement."""
        return self.why(case) if self.why is not None else self.reason


def _check_requirement(req_id: str, req: Requirement) -> None:
    if req.id != req_id:
        raise ValueError(f"requirement {req.id!r} registered under another id {req_id!r}")
    if not req.text or not req.reason:
        raise ValueError(f"requirement {req.id}: needs a text and a skip reason")


REQUIREMENTS: Registry[Requirement] = Registry("answerability requirement", check=_check_requirement)


def register_requirement(req: Requirement) -> Requirement:
    """Register a requirement a task may declare (its id must be free)."""
    return REQUIREMENTS.register(req.id, req)


def labels_complete(case: Case, kind: str) -> bool:
    """Whether the case's source declares its ``kind`` labels (findings / structures) complete; undeclared is
    not complete."""
    if kind not in LABEL_KINDS:
        raise ValueError(f"label kind must be one of {', '.join(LABEL_KINDS)}, not {kind!r}")
    return case.meta.get(f"{kind}_complete") is True


@dataclass(frozen=True)
class Stated:
    """What a case's truth states about presence, the one input of :func:`states_absent` and
    :func:`abnormal_state` (built from a :class:`~medr2.records.Case` by :meth:`of`; the claim checker builds it
    from its own ``Truth``): the labels present (findings, image-level labels, a diagnosis other than normal), the
    labels the source states absent (``Case.absent``), whether the finding labels are complete
    (``meta["findings_complete"]``) and where the image is (modality, body region)."""

    positives: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    complete: bool = False
    modality: str | None = None
    body_region: str | None = None

    @classmethod
    def of(cls, case: Case | Stated) -> Stated:
        if isinstance(case, Stated):
            return case
        raw = case.meta.get("image_labels")
        image_labels = [x for x in (raw if isinstance(raw, list) else []) if isinstance(x, str) and x.strip()]
        return cls(positives=positives(f.label for f in case.findings) + positives(image_labels)
                   + positives([case.diagnosis] if case.diagnosis else []),
                   absent=tuple(case.absent), complete=labels_complete(case, "findings"),
                   modality=case.modality, body_region=case.body_region)


def positives(labels: Iterable[str]) -> tuple[str, ...]:
    """The labels of ``labels`` that say something is present (a normal label, "No Finding", says nothing is)."""
    return tuple(str(x) for x in labels if not vocab.is_normal(x) and vocab.norm(x) != vocab.norm("no finding"))


def _words(label: str) -> tuple[str, ...]:
    return tuple(w[:-1] if len(w) > 3 and w.endswith("s") else w
                 for w in re.sub(r"[\s_\-/]+", " ", str(label).lower()).split())


def _inside(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    return bool(a) and any(b[i:i + len(a)] == a for i in range(len(b) - len(a) + 1))


def compatible(label: str, present: Iterable[str]) -> bool:
    """Whether ``label`` may be true of an image showing ``present``: the same concept as one of them, a synonym,
    sub-type, super-type, part/whole or co-occurring label (:func:`medr2.tasks.vocab.conflicts`), or words that
    occur inside one of them or the reverse ("mass" of a "spiculated mass"; not inside a label that names an
    absence: "not normal, no lung opacity")."""
    w = _words(label)
    return any(vocab.conflicts(label, p) or _sub_type_co_occurs(label, p)
               or (not _NEGATION & set(_words(p)) and (_inside(w, _words(p)) or _inside(_words(p), w)))
               for p in present)


# a label naming what is not there ("not normal, no lung opacity") shares its words with no label it may be
_NEGATION = frozenset({"no", "not", "non", "without"})


def _sub_type_co_occurs(label: str, present: str) -> bool:
    """Whether a sub-type of ``label`` co-occurs with ``present`` (an oedema may be present where a macular oedema
    may: diabetic retinopathy ~ macular oedema)."""
    return _sub_type_co_occurs_of(str(label), str(present), clinical.generation())


@functools.lru_cache(maxsize=4096)
def _sub_type_co_occurs_of(label: str, present: str, generation: tuple[object, ...]) -> bool:
    v = clinical.vocabulary()
    return any((d := v.get(i)) is not None and v.co_occur(d.label, present) for i in v.descendants(label))


def _elsewhere(label: str, body_region: str | None) -> bool:
    """Whether ``label`` belongs only to another part of the body than the imaged one: every location its concept
    always carries (``@ location=``, concepts.txt: hydrocephalus in the brain, a pleural effusion in the pleura)
    shares nothing with the case's body region (:func:`medr2.vocab.overlap` false; unknown is not elsewhere)."""
    if not body_region:
        return False
    sites = clinical.implied(label, "location")
    return bool(sites) and all(_site_elsewhere(c.label, body_region) for c in sites)


def _site_elsewhere(site: str, body_region: str) -> bool:
    """Whether an anatomical site lies in body regions (its part-of ancestors of kind ``body_region``) that all
    share nothing with ``body_region``; a site in no body region (the bones, the skin) lies everywhere."""
    v = clinical.vocabulary()
    regions = [r.label for i in v.ancestors(site) if (r := v.get(i)) is not None and r.kind == "body_region"]
    return bool(regions) and all(clinical.overlap(r, body_region) is False for r in regions)


def site_elsewhere(site: str, body_region: str | None) -> bool:
    """Whether the anatomical structure ``site`` lies only in body regions that share nothing with ``body_region``
    (the brain of a shoulder image; :func:`_site_elsewhere`); unknown region or site: not elsewhere."""
    return bool(body_region) and _site_elsewhere(site, str(body_region))


def states_absent(truth: Case | Stated, label: str) -> bool:
    """Whether a case's truth states the finding or diagnosis ``label`` absent: the one rule of absence every
    consumer reads (the tasks' "no" answers and wrong options, the claim checker's hallucinated findings).

    Never for a label compatible with what the case has (:func:`compatible`). Otherwise true when the label, or
    a concept it is a sub-type of, is one the source states absent (``Case.absent``; a parent of an absent concept
    is not absent: no "pleural effusion" does not say no effusion), when the finding labels are complete (every
    label a complete list does not list is absent), or when the label belongs only to another part of the body
    than the imaged one (:func:`_elsewhere`). A label merely unlisted on an incomplete list is not absent."""
    s = Stated.of(truth)
    if compatible(label, s.positives):
        return False
    if any(vocab.same(label, a) or clinical.is_a(label, a) for a in s.absent):
        return True
    return s.complete or _elsewhere(label, s.body_region)


def abnormal_state(truth: Case | Stated) -> bool | None:
    """Whether the image is abnormal, the one definition of normal: a label present (a finding, an image-level
    label, a diagnosis other than normal) says yes; complete finding labels with none present say no; no
    finding on an incomplete list is unknown (the ``normality_known`` requirement)."""
    s = Stated.of(truth)
    if s.positives:
        return True
    return False if s.complete else None


def normality_known(case: Case) -> bool:
    """Whether the case's normal/abnormal state is known (:func:`abnormal_state`): a finding or an abnormal
    diagnosis says abnormal; a normal (or no) diagnosis is a claim of absence and needs the finding labels
    complete."""
    return abnormal_state(case) is not None


def absence_stated(case: Case) -> bool:
    """Whether the case states some finding absent: complete finding labels, or an explicit negative label
    (``Case.absent``) its own labels do not contradict (a presence question then has a "no" to ask)."""
    s = Stated.of(case)
    return s.complete or any(not compatible(a, s.positives) for a in s.absent)


def one_signal(f: Finding) -> bool:
    """Whether a finding's intensity is one value, so that an intensity may be keyed or denied of it: no texture
    stated, or a homogeneous one. A bright rim round a dark core or a heterogeneous mass makes "mixed signal" as true
    as its core's signal (the third blind review: "hypointense" keyed beside "mixed signal" for a ring lesion)."""
    texture = f.attributes.get("texture")
    return not isinstance(texture, str) or not texture or texture == "homogeneous"


def one_lesion(case: Case) -> bool:
    """Whether "the lesion" names one lesion: the finding labels are complete, or the source images one lesion per
    image (``meta["one_lesion"]``, e.g. a dermoscopy dataset)."""
    return case.meta.get("one_lesion") is True or labels_complete(case, "findings")


def one_per_label(case: Case) -> bool:
    """Whether "the <finding>" names the only instance of its label in the image, for a label the case lists once
    (the generators of the tasks that ask so draw only those: :func:`medr2.tasks.common.unique_findings`):
    :func:`one_lesion`, or the source declares every instance of each finding label it gives labelled
    (``meta["instances_complete"]``: a box list that boxes a labelled finding wherever the image shows it, a
    segmentation label map whose label is every voxel of it), though findings of other labels may go unlabelled.
    Narrower than :func:`one_lesion`: "the nodule" of one boxed nodule holds, "the lesion" or the diagnosis of the
    image does not (another, unlabelled finding may be there)."""
    return one_lesion(case) or case.meta.get("instances_complete") is True


def lateralising(case: Case) -> bool:
    """Whether a mirror image can be told from the original: the source declares a lateralising cue (anatomy such
    as the heart or liver, a side marker, a face on a sagittal slice) in a modality with a left/right display
    convention (:func:`medr2.tasks.vocab.orientation_defined`)."""
    return case.meta.get("lateralising") is True and vocab.orientation_defined(case.modality)





def severity_graded(case: Case) -> bool:
    """Whether the case's severity is a clinical grade carried by the source (``meta["severity_graded"]``), not
    a bin of the generator's lesion size or count."""
    return case.meta.get("severity_graded") is True


def has_companion(case: Case, role: str) -> bool:
    """Whether the case's source links another image of the patient of ``role`` to it (``Case.companions``: a
    prior study, another view, another sequence; issue 49). Whether that image is in the build is the task's to
    find out (:func:`medr2.tasks.companions.resolve`, its note the skip reason)."""
    return any(c.role == role for c in case.companions)


for _req in (
    Requirement("findings_complete", "complete finding labels (the source declares every finding labelled)",
                lambda c: labels_complete(c, "findings"), "finding labels not declared complete by the source"),
    Requirement("absence_stated", "a finding stated absent: complete finding labels, or a negative label the "
                "source states (Case.absent)", absence_stated,
                "no finding stated absent: finding labels not declared complete and no negative label"),
    Requirement("normality_known", "a finding or an abnormal diagnosis, else complete finding labels",
                normality_known, "normal state unknown: finding labels not declared complete by the source"),
    Requirement("one_lesion", "complete finding labels, or a source that images one lesion per image (\"the lesion\" "
                "and the diagnosis are then the image's only ones)", one_lesion,
                "the lesion or diagnosis is not known to be the image's only one"),
    Requirement("one_per_label", "one lesion per image or complete finding labels, or a source that labels every "
                "instance of each finding label it gives (\"the {f}\" of a label the case lists once is then its "
                "only instance)", one_per_label,
                "the named finding is not known to be the image's only one of its label"),
    Requirement("structures_complete", "complete structure labels (the source declares every structure labelled)",
                lambda c: labels_complete(c, "structures"), "structure labels not declared complete by the source"),
    Requirement("lateralising", "a lateralising cue (anatomy or side marker) declared by the source, in a "
                "modality with a left/right display convention", lateralising,
                "no lateralising cue declared for this image"),
    Requirement("discriminable", "diagnoses the source declares the image tells apart from its own (a "
                "differential among mimics the image cannot separate is not asked)", lambda c: bool(discriminable(c)),
                "no diagnosis declared discriminable from this image by the source"),
    Requirement("severity_graded", "a clinical severity grade carried by the source (not a bin of lesion size or "
                "count)", severity_graded, "severity not declared a clinical grade by the source"),
    Requirement("malignancy_decidable", "a benign/malignant label the image decides: every diagnosis it cannot rule "
                "out (the case's own and each compatible mimic) of the label's class in the vocabulary, or a source "
                "that declares the label discriminating (meta.malignancy_discriminable)", malignancy_decidable,
                MALIGNANCY_UNDECIDED),
    Requirement("has_prior", "a prior study of the same patient linked by the source (its own labels)",
                lambda c: has_companion(c, "prior"), "no prior study linked to this case by its source"),
    Requirement("has_views", "another view of the same study linked by the source (its own labels)",
                lambda c: has_companion(c, "view"), "no other view linked to this case by its source"),
    Requirement("has_sequences", "other sequences of the same study linked by the source",
                lambda c: has_companion(c, "sequence"), "no other sequence linked to this case by its source"),
):
    register_requirement(_req)


# patient-side words: a question, option or reference naming one asserts the patient's side; the image's own sides
# ("to the left of" as displayed, "upper left quadrant of the image", "mirrored left-to-right") are no patient side
PATIENT_SIDE = re.compile(r"\b(left|right)\b", re.IGNORECASE)
IMAGE_SIDE = re.compile(r"\bto the (left|right) of\b|\b(left|right) quadrant of the image\b|\bleft-to-right\b",
                        re.IGNORECASE)
SIDES_NOT_SHOWN = "patient side named on an image that does not show it (mirrored, sagittal or no display convention)"


def sides_shown(case: Case) -> bool:
    """Whether the image shows which side of the patient a finding is on: a modality whose display convention fixes
    left and right (:func:`medr2.tasks.vocab.orientation_defined`) or a lateralising cue the source declares (the
    optic disc of a fundus), an image not mirrored (``Case.flipped`` is not true: a silently mirrored image shows
    the other side), and not a single sagittal slice (one sagittal slice shows no hemisphere). Unlike
    ``lateralising`` a radiological image needs no cue in the anatomy: the display convention tells its sides."""
    plane = (case.plane or "").strip().lower()
    told = vocab.orientation_defined(case.modality) or case.meta.get("lateralising") is True
    return told and case.flipped is not True and plane != "sagittal"


def names_patient_side(texts: Iterable[str]) -> bool:
    """Whether a question (its ``texts``: question, options, reference) names a side of the patient: a left/right
    word outside the phrases that name the image's own sides (:data:`IMAGE_SIDE`)."""
    return any(PATIENT_SIDE.search(IMAGE_SIDE.sub(" ", str(t))) for t in texts)


def check_sides(case: Case, texts: Iterable[str]) -> str | None:
    """The skip reason for a question naming a patient side on an image that does not show it (:func:`sides_shown`),
    else None: the one side clause of the contract, checked for every draft of every task
    (:func:`medr2.tasks.assemble.check_options`)."""
    if names_patient_side(texts) and not sides_shown(case):
        return SIDES_NOT_SHOWN
    return None


EVIDENCE_LOST = "the case's own degradation left too little of the lesion evidence to read (evidence SSIM below 0.5)"
LESION_FAINT = "the lesion is drawn below readable contrast against the tissue round it (lesion contrast below 0.1)"


def _lesion_shown(case: Case) -> bool:
    from medr2.imaging.physics import MIN_LESION_CONTRAST

    v = case.meta.get("lesion_contrast")
    return not isinstance(v, int | float) or v >= MIN_LESION_CONTRAST


def _evidence_survives(case: Case) -> bool:
    from medr2.imaging.physics import MIN_EVIDENCE_SSIM

    v = case.meta.get("evidence_ssim")
    return not isinstance(v, int | float) or v >= MIN_EVIDENCE_SSIM


def evidence_readable(case: Case) -> bool:
    """Whether the lesion evidence can be read: the lesion is drawn at readable contrast (its source's declared
    ``meta["lesion_contrast"]``, the median of the faintest lesion's core against that of the tissue round it, as
    drawn, is at least :data:`medr2.imaging.physics.MIN_LESION_CONTRAST`; issue 40) and it survives the degradation
    the source applied to the case's image: its declared ``meta["evidence_ssim"]`` (the lowest SSIM within a lesion
    to the image before, measured with :func:`medr2.imaging.physics.evidence_ssim`, the measure of V8/V11) is at
    least :data:`medr2.imaging.physics.MIN_EVIDENCE_SSIM`; an undeclared value (a lesion its source did not draw,
    an image it did not degrade) is readable.
    A requirement (``evidence_readable``) each task that reads lesion evidence declares, not a rule of its stage:
    a task that needs none (a plugin's, of any stage) is not skipped by it."""
    return _lesion_shown(case) and _evidence_survives(case)


register_requirement(Requirement(
    "evidence_readable", "lesion evidence drawn at readable contrast and left readable by the case's own "
    "degradation (declared lesion contrast at least 0.1 and evidence SSIM at least 0.5, where declared)",
    evidence_readable, EVIDENCE_LOST, why=lambda case: EVIDENCE_LOST if not _evidence_survives(case) else LESION_FAINT))


SIZE_BOUNDARY = "size bin depends on the lesion's boundary: its core and its outer extent (halo, rim) in other bins"
APPEARANCE_NOT_SHOWN = "a drawn lesion's keyed appearance word is not the one measured on its rendering"


def appearance_shown(case: Case) -> bool:
    """Whether the appearance words the case keys of its drawn lesions are those their renderings show (issue 40,
    review 2026-12-07c): for every finding its source measured on the image the model gets
    (``attributes["rendered"]``, :mod:`medr2.tasks.rendered`), its colour word is the nearest to its drawn colour by
    CIELAB ΔE2000, its shape word one its mask admits and its margin word one its drawn edge admits
    (:func:`medr2.tasks.rendered.key_shown`; the fifth review, 2026-12-07e, margins). A finding
    without a measurement (a reader's label) keeps its reader's words. The wrong options and size bins of each
    question go through the same gate (:func:`medr2.tasks.rendered.drop_reason`,
    :func:`~medr2.tasks.rendered.size_reason`)."""
    from medr2.tasks.rendered import key_shown

    return all(key_shown(f, key) for f in case.findings for key in ("shape", "intensity", "margin"))


register_requirement(Requirement(
    "appearance_shown", "the appearance words keyed of a drawn lesion read from its rendering, where its source "
    "measured it (colour word the nearest to its drawn colour by CIELAB ΔE2000, shape word one its mask admits)",
    appearance_shown, APPEARANCE_NOT_SHOWN))



def size_bounded(case: Case) -> bool:
    """Whether the size bin of each drawn lesion does not depend on where its boundary is drawn: its measured core
    (a rim lesion's centre inside its wall) and outer extent (its halo or oedema) fall in the bin of its keyed size
    (:func:`medr2.tasks.rendered.size_reason`; the third review: a 17 mm dark core keyed 41.5 mm with its bright halo,
    "30 to 50 mm"). A finding without a measurement is sized as its source gives it."""
    from medr2.tasks.rendered import size_reason

    return all(size_reason(f) is None for f in case.findings)


register_requirement(Requirement(
    "size_bounded", "a drawn lesion's size bin the same for its core and its outer extent (halo, rim), where its "
    "source measured them", size_bounded, SIZE_BOUNDARY))


NOT_READABLE = "the source grades the image's quality reject (non-diagnostic): its content cannot be read"


def readable(case: Case) -> bool:
    """Whether the image's content can be read: the quality its source states (``Case.quality``) is not "reject"
    (a non-diagnostic image; the sample grades its own degradation so). An image of unstated quality is readable:
    a dataset that does not grade its images has published them as readable. The clause of every task that asks
    what the image shows (orientation, anatomy, boxes, counts, findings, diagnosis, report); a question about the
    acquisition (modality, plane, sequence, region) or the quality itself (quality, artefact) stays answerable on a
    non-diagnostic image and does not declare it."""
    return not (case.quality and vocab.same(case.quality, "reject"))


def report_grounded(case: Case) -> bool:
    """Whether the case's reference report states only what its labels back: a report its source did not compose
    (a reader's own report: ``"report"`` not in ``Case.synthetic_fields``), or one composed from the labels where
    the stage-4 clauses of what it states hold (:func:`one_lesion`: the diagnosis and "single focus" name the
    image's only lesion; :func:`normality_known`: "no abnormality" needs complete finding labels)."""
    return "report" not in case.synthetic_fields or (one_lesion(case) and normality_known(case))


for _req in (
    Requirement("readable", "an image its source does not grade reject (non-diagnostic)", readable, NOT_READABLE),
    Requirement("report_grounded", "a reference report written by a reader of the image, or one composed from the "
                "labels where they back what it states (one lesion per image or complete finding labels, and a "
                "known normal state: the clauses of s4.diagnosis and s3.abnormal)", report_grounded,
                "composed reference report would state a diagnosis or normality the labels do not back"),
):
    register_requirement(_req)


EVIDENCE_KINDS = ("lesion", "image", "none")


def question_evidence(requires: tuple[str, ...]) -> str:
    """What of the image a task's question reads, from its contract: ``"lesion"`` where it declares
    ``evidence_readable`` (the lesion evidence), ``"image"`` where it declares ``readable`` only (the content of the
    whole image: anatomy, orientation), ``"none"`` where it declares neither (the acquisition: modality, plane,
    sequence, region, answerable on a non-diagnostic image). The one rule by which a variant that changes the image
    (V8/V11 degradations) decides whether the question's answer is still exact: by the evidence the question needs,
    never by the lesion's where the question does not read it."""
    if "evidence_readable" in requires:
        return "lesion"
    return "image" if "readable" in requires else "none"


def task_requires(task_id: str) -> tuple[str, ...]:
    """The contract a registered task declares (``TaskSpec.requires``); a task this build does not know (a plugin's
    not installed) is held to the strictest clauses a built-in lesion task declares."""
    from medr2.tasks.spec import TASKS

    spec = TASKS.get(task_id)
    return tuple(spec.requires) if spec is not None else ("readable", "evidence_readable")


OUTLINES = "outline_contrast"  # Case.meta key :func:`measure_outlines` fills: structure mask -> outline contrast
NO_OUTLINE = ("no structure whose outline the image shows (outline contrast below "
              "medr2.imaging.outline.MIN_OUTLINE_CONTRAST, or no mask to measure)")


def measure_outlines(case: Case, load: Callable[[str, str | None], Any]) -> Case:
    """``case`` with the outline contrast of each structure's mask measured on the case's own image, the image a
    model is shown (:func:`medr2.imaging.outline.outline_contrast`), in ``meta["outline_contrast"]`` (mask path ->
    contrast, rounded down to 3 decimals): the one measure of the ``outlines_visible`` clause, taken for every case
    of every source as the build realises it (:func:`medr2.builder.pipeline._realize`: an atlas parcel of the
    sample, a real dataset's segmentation alike) and kept in the case's record, so the clause reads the same on the
    bench as written. ``load(rel, mode)`` decodes an image of the store."""
    from medr2.imaging.outline import outline_contrast

    masks = sorted({s.mask for s in case.structures if s.mask})
    if not masks:
        return case
    image = load(case.image, None)
    measured = {m: math.floor(outline_contrast(image, load(m, "L") > 127) * 1000) / 1000 for m in masks}
    return case.model_copy(update={"meta": {**case.meta, OUTLINES: measured}})


def outline_shown(case: Case, structure: Structure) -> bool:
    """Whether the case's image shows ``structure``'s outline: its mask's contrast, measured on the image
    (:func:`measure_outlines`), is at least :data:`medr2.imaging.outline.MIN_OUTLINE_CONTRAST`. A structure with
    no mask (a box only) or not measured is not shown: what the image does not outline, a reader has to imagine."""
    from medr2.imaging.outline import outline_visible

    return outline_visible(outline_of(case, structure))


def outline_of(case: Case, structure: Structure) -> float | None:
    """The measured outline contrast of ``structure`` (:func:`measure_outlines`), None where not measured."""
    measured = case.meta.get(OUTLINES)
    v = measured.get(structure.mask) if isinstance(measured, dict) and structure.mask else None
    return float(v) if isinstance(v, int | float) else None


register_requirement(Requirement(
    "outlines_visible", "a structure whose outline the image shows (edge contrast along its mask's border at least "
    "1.0, measured on the image; the generator asks only such structures)",
    lambda c: any(outline_shown(c, s) for s in c.structures), NO_OUTLINE))


NOT_ANATOMY = "structure labels that name no anatomy"


def is_anatomy(structure: Structure) -> bool:
    """Whether a structure may be asked about as an organ or region (``s2.organ``, ``s2.organ_box``,
    ``s2.organ_presence``, their distractors, the variants' "structure" fact): an organ or region whose label names
    an anatomy concept of the vocabulary (:func:`medr2.vocab.anatomy_concept`: an organ or body region, its side
    aside). A mask that is no anatomy (a colour-flow threshold "power Doppler flow", a body threshold such as
    "shoulder soft tissue" or "body") is never asked about, offered as a distractor or keyed as a structure. A
    landmark or an instance (a marked point, a counted object such as a nucleus) is what its source declares it."""
    return structure.kind in ("landmark", "instance") or clinical.anatomy_concept(structure.name) is not None


def anatomical(case: Case) -> Case:
    """``case`` with only the structures :func:`is_anatomy` admits: the one gate by which structures enter the tasks
    (:func:`medr2.tasks.assemble.draft_case`), the label pools their distractors come from
    (:func:`medr2.tasks.pools.case_labels`) and the facts the variants ask (:mod:`medr2.perturb.facts`). The case's
    record keeps every structure its source gave."""
    kept = [s for s in case.structures if is_anatomy(s)]
    return case if len(kept) == len(case.structures) else case.model_copy(update={"structures": kept})


def unmet(requires: tuple[str, ...], case: Case) -> Requirement | None:
    """The first requirement of ``requires`` that ``case`` does not meet, or None."""
    for req_id in requires:
        req = REQUIREMENTS[req_id]
        if not req.holds(case):
            return req
    return None


def contract_text(requires: tuple[str, ...]) -> str:
    """The contract as written in docs/tasks.md and ``medr2 info --quality`` ("-" when the task needs nothing)."""
    return "; ".join(REQUIREMENTS[r].text for r in requires) or "-"
