"""Core typed records of medr2 (docs/bench-format.md, docs/architecture.md): Case, Item, Prediction, Score.

Records are pydantic v2 models. Complex fields are stored as JSON strings in Parquet
(see :mod:`medr2.bench.format`), so the on-disk layout stays flat and byte-deterministic.
Boxes are always pixel ``xyxy`` (x1, y1, x2, y2) in the image the record refers to.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from medr2.variant_id import VariantRole

Box = tuple[float, float, float, float]
Form = Literal["mcq", "yesno", "box", "multi", "text"]
Verdict = Literal["correct", "wrong", "unparsed", "abstained", "truncated", "error"]
# the verdicts without a parsed answer, each its own counted outcome (in this order wherever outcomes are listed)
UNREAD_OUTCOMES: tuple[str, ...] = ("unparsed", "abstained", "truncated", "error")
Split = Literal["train", "val", "test"]

# Text-form tasks whose answer is a report, scored with the report metrics (ROUGE, BLEU-4, METEOR) and kept
# out of stage accuracy. Every other text-form item (e.g. an imported open-ended VQA question) is a short
# answer: scored by normalised exact match and counted in accuracy like any other question.
REPORT_TASKS: frozenset[str] = frozenset({"s4.report"})

STAGES: dict[int, str] = {
    1: "acquisition & quality",
    2: "anatomy",
    3: "findings",
    4: "diagnosis & report",
}


def canonical_json(obj: Any) -> str:
    """Deterministic JSON used for hashing and for Parquet JSON columns."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def stable_hash(obj: Any, n: int = 16) -> str:
    return hashlib.sha256(canonical_json(obj).encode("utf-8")).hexdigest()[:n]


def check_box(box: Box, width: int, height: int) -> None:
    """Raise ValueError if ``box`` is not a finite, positive-area box inside ``width``x``height``."""
    x1, y1, x2, y2 = box
    vals = (x1, y1, x2, y2)
    if any(v != v or v in (float("inf"), float("-inf")) for v in vals):
        raise ValueError(f"box {box} has a non-finite coordinate")
    if not (x2 > x1 and y2 > y1):
        raise ValueError(f"box {box} has non-positive size")
    if x1 < 0 or y1 < 0 or x2 > width or y2 > height:
        raise ValueError(f"box {box} lies outside the {width}x{height} image")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


MAX_SIDE = 2**31 - 1  # an image side in pixels (the bench stores sides as 64-bit integers; no real image is larger)


def _check_side(v: int | None) -> int | None:
    if v is not None and not 1 <= v <= MAX_SIDE:
        raise ValueError(f"must be between 1 and {MAX_SIDE:,} pixels")
    return v


class Structure(_Frozen):
    """An anatomical structure (organ, region, landmark) with its location."""

    name: str
    kind: Literal["organ", "region", "landmark", "instance"] = "organ"
    box: Box
    mask: str | None = None  # relative path of a content-addressed PNG mask (0/255)
    area_px: float | None = None  # pixel area of the mask (or box if no mask)
    synthetic: bool = False


class Finding(_Frozen):
    """A finding (lesion) with its location and attributes."""

    label: str
    box: Box
    mask: str | None = None
    area_px: float | None = None
    # size_mm, shape, margin, intensity, laterality, location, organ, ...
    attributes: dict[str, Any] = Field(default_factory=dict)
    synthetic: bool = False


Region = Structure | Finding  # a located region of a case: both carry a box and an optional mask


def regions_by_kind(structures: Sequence[Structure], findings: Sequence[Finding]
                    ) -> tuple[tuple[str, Sequence[Region]], ...]:
    """``(("structures", structures), ("findings", findings))``, typed as regions (checks loop over both)."""
    return (("structures", structures), ("findings", findings))


class Case(_Frozen):
    """One 2-D image and everything known about it."""

    case_id: str
    image: str  # relative path inside the bench (images/<sha>.png)
    image_sha256: str
    width: int
    height: int
    modality: str
    plane: str | None = None
    sequence: str | None = None
    body_region: str | None = None
    quality: str | None = None  # good / usable / reject
    artefact: str | None = None  # noise / blur / motion / low contrast / compression / none
    artefact_severity: int | None = None
    flipped: bool | None = None
    pixel_spacing_mm: float | None = None
    structures: list[Structure] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    diagnosis: str | None = None
    severity: str | None = None
    malignancy: str | None = None  # benign / malignant
    mimics: list[str] = Field(default_factory=list)
    # finding/diagnosis labels the source states absent (negative labels: "No Lung Opacity" of RSNA, a label every
    # reader marked 0, a finding a report negates, the other classes of a one-hot diagnosis); a complete finding
    # list (``meta["findings_complete"]``) states every label it does not list absent as well. What a case's truth
    # says is absent is read only through :func:`medr2.tasks.contract.states_absent`, never inferred from a label
    # being unlisted
    absent: list[str] = Field(default_factory=list)
    report: str | None = None
    source: str
    license: str
    access: str = "open"  # open / credentialed / restricted
    patient_id: str
    split: Split | None = None
    # names of fields whose values are synthetic (not from the real data)
    synthetic_fields: list[str] = Field(default_factory=list)
    background: str | None = None  # the real source image this case was derived from
    # other images of the patient the source links to this case (prior studies, views, sequences; issue 49)
    companions: list[Companion] = Field(default_factory=list)
    meta: dict[str, Any] = Field(default_factory=dict)

    @field_validator("case_id", "patient_id", "source", "modality")
    @classmethod
    def _nonempty(cls, v: str) -> str:
        if not v or not v.strip():
            raise ValueError("must be a non-empty string")
        return v

    @field_validator("width", "height")
    @classmethod
    def _side(cls, v: int) -> int:
        _check_side(v)
        return v


class Cue(_Frozen):
    """A region drawn on (or described for) the image that a question refers to."""

    kind: Literal["box", "contour", "mask", "point", "coords"]
    box: Box
    style: dict[str, Any] = Field(default_factory=dict)
    drawn: bool = True  # False for V7 (coordinates given in text only)


class ContextTurn(_Frozen):
    """An earlier step shown to the model before this item (hints, chains, injected answers)."""

    question: str
    options: list[str] = Field(default_factory=list)
    answer: str  # the answer shown (may be wrong on purpose)
    correct: bool = True


ImageRole = Literal["current", "prior", "view", "sequence"]
# what an image of an item is to its question (issue 49): the image asked about (``current``), an earlier study of
# the same patient (``prior``, with its interval), another view of the same study (``view``: frontal, lateral, CC,
# MLO, ...) or another sequence of the same study (``sequence``: T1, T1ce, T2, FLAIR, ...)
IMAGE_ROLES: tuple[str, ...] = ("current", "prior", "view", "sequence")


class ImageRef(_Frozen):
    """One image of an item: its bench file, size, role and what the prompt calls it."""

    path: str  # relative path inside the bench (images/<sha>.png)
    sha256: str
    width: int
    height: int
    role: ImageRole = "current"
    label: str | None = None  # the view or sequence name ("lateral", "MLO", "FLAIR"); None: none
    interval_days: int | None = None  # a prior: days before the current study; None: not known
    case_id: str | None = None  # the case this image is of (a prior's own case); None: the item's case

    @field_validator("width", "height")
    @classmethod
    def _side(cls, v: int) -> int:
        _check_side(v)
        return v


class Companion(_Frozen):
    """Another image of a case's patient a source links to it (issue 49): a prior study, another view or another
    sequence, as the case id of that image's own case (which carries its own labels)."""

    case_id: str
    role: Literal["prior", "view", "sequence"]
    label: str | None = None
    interval_days: int | None = None


class Item(_Frozen):
    """One question about one or several images (clean or a variant). ``image`` is the image asked about (the
    current study); ``images`` the item's ordered list of every image shown when it has more than one (empty: the
    list of one, :meth:`image_list`)."""

    item_id: str
    case_id: str
    chain_id: str | None = None
    step: int | None = None
    stage: int
    task: str
    form: Form
    question: str
    options: list[str] = Field(default_factory=list)
    # mcq: a letter "A".."Z"; yesno: "yes"/"no"; multi: sorted letters joined by ",";
    # box: "" (see answer_box); text: the reference text
    answer: str
    answer_box: Box | None = None
    chance: float
    pair_id: str | None = None
    image: str | None  # relative path of the image shown (None: text only)
    image_sha256: str | None = None
    image_width: int | None = None
    image_height: int | None = None
    # every image shown, in the order shown, when more than one (issue 49); one of them is ``image`` (role current)
    images: list[ImageRef] = Field(default_factory=list)
    cue: Cue | None = None
    context: list[ContextTurn] = Field(default_factory=list)
    variant: str = "clean"
    parent_id: str | None = None
    perturbation: dict[str, Any] = Field(default_factory=dict)
    seed: int | None = None
    lure: str | None = None
    # a variant item's roles (what it is to scoring and training, in the order of :data:`medr2.variant_id.ROLES`);
    # None: not recorded (clean items; benches built before roles: :func:`medr2.perturb.registry.item_roles`)
    roles: list[VariantRole] | None = None
    template_id: str
    split: Split | None = None
    source: str
    license: str
    access: str = "open"
    meta: dict[str, Any] = Field(default_factory=dict)

    @field_validator("image_width", "image_height")
    @classmethod
    def _side(cls, v: int | None) -> int | None:
        return _check_side(v)

    def image_list(self) -> list[ImageRef]:
        """Every image shown, in order: ``images``, or the one ``image`` as a list of one (none for a text-only
        item). The one way every consumer (prompts, adapters, exports, report, viewer) reads an item's images."""
        if self.images:
            return list(self.images)
        if self.image is None or self.image_sha256 is None or not self.image_width or not self.image_height:
            return []
        return [ImageRef(path=self.image, sha256=self.image_sha256, width=self.image_width,
                         height=self.image_height, role="current")]

    @property
    def answer_text(self) -> str:
        if self.form == "mcq" and self.options:
            return self.options[letter_index(self.answer)]
        return self.answer


def letter(i: int) -> str:
    return chr(ord("A") + i)


def letter_index(ch: str) -> int:
    return ord(ch.strip().upper()) - ord("A")


def item_content_id(fields: dict[str, Any]) -> str:
    """The stable id of an item: a hash over everything that defines what the model sees and
    what counts as right (not over ids derived later, such as chain or pair ids)."""
    keys = (
        "case_id", "task", "form", "question", "options", "answer", "answer_box", "image_sha256",
        "cue", "context", "variant", "perturbation", "seed", "template_id", "parent_id",
    )
    payload = {k: fields.get(k) for k in keys}
    if fields.get("images"):  # several images (issue 49); a one-image item's id is what it always was
        payload["images"] = fields["images"]
    return stable_hash(jsonable(payload))


def jsonable(obj: Any) -> Any:
    """Convert pydantic models / tuples into plain JSON-able structures."""
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    if isinstance(obj, dict):
        return {k: jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [jsonable(v) for v in obj]
    return obj


# the option ``medr2 eval --abstain-option`` adds to single-choice items; its text reads as an abstention
# (medr2.scoring.extract.abstain), so choosing it is scored ``abstained``
ABSTAIN_OPTION = "Cannot be determined from the image"


def with_abstain_option(form: str, options: list[str]) -> list[str]:
    """The options a single-choice item is asked with under ``--abstain-option`` (others unchanged)."""
    if form != "mcq" or not options or ABSTAIN_OPTION in options:
        return options
    return [*options, ABSTAIN_OPTION]


ConfidenceSource = Literal["logprobs", "loglik", "prior", "verbal", "reader"]
# where a confidence comes from (docs/metrics.md, "Calibration"): the server's token log-probabilities mapped onto
# the options, a local model's log-likelihood of each option, a baseline's prior frequencies, the model's own
# words (read from the answer when scoring; never stored), or a human reader's slider (``human:NAME``, docs/human.md:
# the stated confidence on the answer chosen, the rest spread evenly over the other answers)
CONFIDENCE_SOURCES: tuple[str, ...] = ("logprobs", "loglik", "prior", "verbal", "reader")


class Confidence(_Frozen):
    """A model's probability for each answer it could give (labels: option letters, ``yes``/``no``), normalised
    over those answers, and where it comes from. The confidence of an answer is ``probs[parsed]``."""

    source: ConfidenceSource
    probs: dict[str, float]


class Prediction(_Frozen):
    model_key: str
    item_id: str
    mode: str
    request_hash: str
    raw: str | None
    latency_s: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    status: Literal["ok", "error"]
    error: str | None = None
    attempts: int = 1
    finish_reason: str | None = None  # "stop", "length" (cut off by the token limit), ...; None: not given
    reasoning: str | None = None  # the server's separate reasoning text, if it gave one
    confidence: Confidence | None = None  # per-answer probabilities, where the model gives them


class Score(_Frozen):
    item_id: str
    model_key: str
    mode: str
    verdict: Verdict
    parsed: str | None = None
    method: Literal["rule", "judge", "none"] = "rule"
    iou: float | None = None
    text_metrics: dict[str, float] = Field(default_factory=dict)
    reason: str | None = None  # why the answer is unparsed, when the extractor can say
