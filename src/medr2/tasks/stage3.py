"""Stage 3: findings."""

from __future__ import annotations

import functools
import re
from typing import Any

from medr2.records import Case, Finding
from medr2.tasks import rendered, vocab
from medr2.tasks.common import (
    COUNT_LABELS,
    SIZE_LABELS,
    count_layout_index,
    cue_draft,
    mcq,
    ordinal,
    pick,
    size_bin,
    spec_of,
    unique_findings,
    yes_no_pair,
)
from medr2.tasks.contract import abnormal_state, one_signal
from medr2.tasks.spec import Draft, Skip, TaskContext, task
from medr2.vocab import appearance

ATTRIBUTES = ("shape", "margin", "intensity")
QUADRANT_MARGIN = 0.1  # a lesion centre this close (as a share of the image) to a midline has no quadrant


def _labels(case: Case) -> list[str]:
    return [f.label for f in case.findings]


@task("s3.abnormal", 3, "yesno", "is there an abnormality", "finding list (may be empty)", [
    ("t1", "Is this image {claim}?", False),
    ("t2", "Answer yes or no: this image is {claim}.", False),
    ("t3", "Would you describe this image as {claim}?", True),
], chain=8, risk="high", requires=("normality_known", "readable", "evidence_readable"))
def abnormal(case: Case, ctx: TaskContext) -> list[Draft]:
    state = abnormal_state(case)
    if state is None:
        raise Skip("finding list not known to be complete")
    # both claims are affirmative (no "Is there no abnormality ...?": a yes to a negative question is ambiguous)
    some, none = "abnormal", "normal, free of any abnormality"
    true_claim, twin_claim = (some, none) if state else (none, some)
    return yes_no_pair(spec_of("s3.abnormal"), ctx, {"claim": true_claim}, {"claim": twin_claim}, pair_key="abnormal")


@task("s3.finding_type", 3, "mcq", "which finding is present", "finding label", [
    "Which finding is present in this image?",
    "What abnormality can be seen here?",
    "Which of these findings does the image show?",
    "Identify the finding visible in this image.",
], chain=2, risk="high", requires=("findings_complete", "readable", "evidence_readable"))
def finding_type(case: Case, ctx: TaskContext) -> list[Draft]:
    if not case.findings:
        raise Skip("no findings")
    label = pick(ctx, sorted({f.label for f in case.findings}))
    return [mcq(spec_of("s3.finding_type"), ctx, label,
                ctx.pools.distractors("finding", case, _labels(case), 3, ctx.rng, absent_from=(case,)))]


@task("s3.absent_finding", 3, "yesno", "is finding F present (F absent)", "finding labels of the pool", [
    ("t1", "Does this image show {a_f}?", False),
    ("t2", "Does this image contain {a_f}?", False),
    ("t3", "Can {a_f} be seen in this image?", True),
], chain=9, risk="high", requires=("absence_stated", "readable", "evidence_readable"))
def absent_finding(case: Case, ctx: TaskContext) -> list[Draft]:
    spec = spec_of("s3.absent_finding")
    # the "no" names a label the truth states absent (medr2.tasks.contract.states_absent): a negative label of the
    # source, any label a complete list leaves out (from any region), or one that lies only elsewhere in the body
    absent = ctx.pools.distractors("finding", case, _labels(case), 1, ctx.rng, wide=True, absent_from=(case,))[0]
    if case.findings:
        present = pick(ctx, sorted({f.label for f in case.findings}))
        drafts = yes_no_pair(spec, ctx, _np(present), _np(absent), pair_key="absent")
    else:
        drafts = yes_no_pair(spec, ctx, _np(absent), _np(absent), true_answer="no", pair_key="absent",
                             twin_text="Is this image free of {any_f}?")
    return drafts


def _np(label: str) -> dict[str, str]:
    """Format keys for a finding label: with its article ("an infarct", "multiple nodules"), with "any"."""
    return {"f": label, "a_f": vocab.indefinite(label),
            "any_f": label if vocab.is_plural(label) else f"any {label}", "be": vocab.be(label)}


@task("s3.lesion_box", 3, "box", "locate the lesion", "finding box or mask", [
    "Draw a bounding box around the {f}.",
    "Locate the {f} and give its bounding box.",
    "Where is the {f}? Answer with a box.",
    "Give the box that encloses the {f} in this image.",
], chain=1, requires=("one_per_label", "readable", "evidence_readable"))
def lesion_box(case: Case, ctx: TaskContext) -> list[Draft]:
    cands = unique_findings(case)
    if not cands:
        raise Skip("no uniquely labelled finding")
    f = pick(ctx, cands)
    spec = spec_of("s3.lesion_box")
    t = ctx.template(spec)
    return [Draft(spec.id, "box", t.text.format(f=f.label), t.id, answer_box=f.box, meta={"target": f.label})]


_NOUN_INTENSITY = ("uptake", "signal", "density", "enhancement", "echogenicity")  # read "with ...", not as adjectives


def _describe(label: str, attrs: dict[str, Any]) -> str:
    """"round, well-defined, hyperdense nodule": each attribute word once (a spiculated shape and a
    spiculated margin read "spiculated" once), noun-like intensities after the label ("... with increased
    uptake")."""
    before: list[str] = []
    after: list[str] = []
    for a in ATTRIBUTES:
        v = attrs.get(a)
        if not isinstance(v, str) or not v or v.lower() in (p.lower() for p in before + after):
            continue
        (after if v.lower().endswith(_NOUN_INTENSITY) else before).append(v)
    text = f"{', '.join(before)} {label}" if before else label
    return f"{text} with {' and '.join(after)}" if after else text


def _names(label: str, value: str) -> bool:
    """Whether the finding's name says the attribute value itself ("lobulated" of a "lobulated nodule")."""
    words, said = re.findall(r"[a-z0-9-]+", label.lower()), re.findall(r"[a-z0-9-]+", value.lower())
    return bool(said) and any(words[i:i + len(said)] == said for i in range(len(words) - len(said) + 1))


@task("s3.cue_description", 3, "mcq", "which description matches the marked region", "finding box + label", [
    "Which description best matches the marked region?",
    "What does the outlined region show?",
    "Choose the description of the finding inside the marked area.",
    "The region marked on the image is best described as which of the following?",
], cue=True, chain=3, requires=("readable", "evidence_readable", "appearance_shown"))
def cue_description(case: Case, ctx: TaskContext) -> list[Draft]:
    """The marked finding described by its label and attributes, against descriptions of the same finding with one
    attribute changed (issue 40, review 2026-12-07b): each wrong option is false by what the image shows (the
    region's shape, margin or intensity) and says nothing its own words rule out (:func:`medr2.vocab.appearance.
    contradicts`: no "hypointense fatty mass" on a T1 image, no "slate grey cotton-wool spots"). Another finding's
    name with the marked one's attributes is never offered: it differs only by a name the image need not tell
    apart (a cyst from a soft-tissue mass on one T1 slice, an infarct from any dark irregular region, an
    "elevated" mass on a 2-D photograph)."""
    cands = unique_findings(case)
    if not cands:
        raise Skip("no uniquely labelled finding")
    f: Finding = pick(ctx, cands)
    true = _describe(f.label, f.attributes)
    known = [a for a in ATTRIBUTES if isinstance(f.attributes.get(a), str) and f.attributes.get(a)]
    if not known:
        raise Skip("no attribute of the finding to describe it by")
    values = [str(f.attributes[x]) for x in known]
    wrong: list[str] = []
    # each attribute once, in a seeded order, then a second value of each: three descriptions false by one
    # attribute the image shows
    order = [known[i] for i in ctx.rng.permutation(len(known))]
    dropped: dict[str, str] = {}
    alts = {a: ctx.pools.distractors(a, case, values, 2, ctx.rng, min_k=0,
                                     refuse=functools.partial(rendered.drop_reason, f, a), refused=dropped)
            for a in order}
    for round_ in range(2):
        for a in order:
            if len(wrong) >= 3 or len(alts[a]) <= round_:
                continue
            v = alts[a][round_]
            if _names(f.label, str(f.attributes[a])) or _names(f.label, v):
                continue  # the name itself says this attribute ("lobulated nodule"): changed, it contradicts it
            if a == "intensity" and appearance.contradicts(f.label, v, case.modality, case.sequence):
                continue
            text = _describe(f.label, {**f.attributes, a: v})
            if text != true and text not in wrong:
                wrong.append(text)
    if len(wrong) < 2:
        raise Skip("too few descriptions false by what the image shows")
    d = mcq(spec_of("s3.cue_description"), ctx, true, wrong)
    d.meta = {**d.meta, **_traced(f, dropped)}
    return [cue_draft(d, case, f.box, f.mask, ctx)]


def _quadrant(case: Case, f: Finding) -> str:
    cx = (f.box[0] + f.box[2]) / 2 / case.width
    cy = (f.box[1] + f.box[3]) / 2 / case.height
    if abs(cx - 0.5) < QUADRANT_MARGIN or abs(cy - 0.5) < QUADRANT_MARGIN:
        raise Skip("lesion centre too close to the image midlines for a quadrant")
    return f"{'upper' if cy < 0.5 else 'lower'} {'left' if cx < 0.5 else 'right'} quadrant of the image"


QUADRANTS = tuple(f"{v} {h} quadrant of the image" for v in ("upper", "lower") for h in ("left", "right"))


@task("s3.location", 3, "mcq", "lesion location", "finding box + structures (or location/laterality attributes)", [
    "Where {be} the {f} located?",
    "What is the location of the {f}?",
    "{in_which} {be} the {f} found?",
    "Give the location of the {f}.",
], chain=4, risk="high", requires=("one_per_label", "readable", "evidence_readable"))
def location(case: Case, ctx: TaskContext) -> list[Draft]:
    cands = unique_findings(case)
    if not cands:
        raise Skip("no uniquely labelled finding")
    f = pick(ctx, cands)
    spec = spec_of("s3.location")
    attrs = f.attributes
    located = vocab.location_words(attrs["location"]) if isinstance(attrs.get("location"), str) else None
    if located:
        value, what = located, "location"
        wrong = ctx.pools.distractors("location", case, [value], 3, ctx.rng)
        meta: dict[str, Any] = {"location_kind": "location"}
    elif isinstance(attrs.get("laterality"), str) and attrs["laterality"]:
        value, what = attrs["laterality"], "side"
        wrong = ctx.pools.distractors("laterality", case, [value], 3, ctx.rng, min_k=1)
        meta = {"location_kind": "laterality", "laterality": True}
    else:
        containing = [s for s in case.structures if s.kind in ("organ", "region") and vocab.location_words(s.name)
                      and s.box[0] <= (f.box[0] + f.box[2]) / 2 <= s.box[2]
                      and s.box[1] <= (f.box[1] + f.box[3]) / 2 <= s.box[3]]
        if len(containing) == 1:
            value, what = str(vocab.location_words(containing[0].name)), "organ"
            named = ctx.pools.distractors("organ", case, [s.name for s in case.structures], 3, ctx.rng)
            wrong = [w for w in (vocab.location_words(n) for n in named) if w]
            if len(wrong) < 3:
                raise Skip("too few organ labels that name a location")
            meta = {"location_kind": "organ"}
        else:
            value, what = _quadrant(case, f), "part of the image"
            wrong = [q for q in QUADRANTS if q != value]
            meta = {"location_kind": "quadrant", "image_laterality": True}
    in_which = {"side": "On which side", "location": "In which location", "organ": "In which organ",
                "part of the image": "In which part of the image"}[what]
    d = mcq(spec, ctx, value, wrong, f=f.label, what=what, in_which=in_which, be=vocab.be(f.label))
    d.meta = meta
    return [d]


@task("s3.count", 3, "mcq", "number of lesions", "findings (complete list)", [
    "How many lesions are visible in this image?",
    "Count the lesions in this image.",
    "What is the number of distinct lesions shown?",
    "How many separate abnormal lesions can be seen?",
], balanced="answer letter, as far as ordered bins allow", chain=7,
    requires=("findings_complete", "readable", "evidence_readable"))
def count(case: Case, ctx: TaskContext) -> list[Draft]:
    if any(f.attributes.get("focal") is False for f in case.findings):
        raise Skip("a finding that is not a countable lesion (attributes.focal false)")
    return [ordinal(spec_of("s3.count"), ctx, COUNT_LABELS, count_layout_index(len(case.findings)))]


@task("s3.size", 3, "mcq", "lesion size bin", "size_mm or box + pixel spacing", [
    "What is the approximate largest diameter of the {f}?",
    "How large {be} the {f}?",
    "Estimate the size of the {f}.",
    "Which size range fits the {f}?",
], balanced="answer letter, as far as ordered bins allow; sizes near a bin edge skipped", chain=6,
    requires=("one_per_label", "readable", "evidence_readable", "size_bounded"))
def size(case: Case, ctx: TaskContext) -> list[Draft]:
    cands = unique_findings(case)
    if not cands:
        raise Skip("no uniquely labelled finding")
    cands = [f for f in cands if f.attributes.get("focal") is not False]  # e.g. cardiomegaly has no diameter
    if not cands:
        raise Skip("no focal lesion to measure (attributes.focal false)")
    f = pick(ctx, cands)
    mm = f.attributes.get("size_mm")
    if not isinstance(mm, int | float):
        if case.pixel_spacing_mm is None:
            raise Skip("no size_mm and no pixel spacing")
        mm = max(f.box[2] - f.box[0], f.box[3] - f.box[1]) * case.pixel_spacing_mm
    d = ordinal(spec_of("s3.size"), ctx, SIZE_LABELS, size_bin(float(mm)), f=f.label, be=vocab.be(f.label))
    d.meta = {"size_mm": float(mm), **_traced(f, {})}
    return [d]


@task("s3.attribute", 3, "mcq", "shape / margin / intensity", "finding attributes", [
    "What is the {attr} of the {f}?",
    "Describe the {attr} of the {f}.",
    "Which term best describes the {attr} of the {f}?",
    "How would you characterise the {attr} of the {f}?",
], chain=5, requires=("one_per_label", "readable", "evidence_readable", "appearance_shown"))
def attribute(case: Case, ctx: TaskContext) -> list[Draft]:
    """One attribute of one finding. Its intensity only where the finding is of one signal: a texture the source
    states other than homogeneous (a bright rim round a dark core, a heterogeneous mass) makes "mixed signal" as
    true as the core's signal (the third review: "hypointense" keyed beside "mixed signal" for a ring lesion)."""
    cands = [(f, a) for f in unique_findings(case) for a in ATTRIBUTES
             if isinstance(f.attributes.get(a), str) and f.attributes.get(a) and (a != "intensity" or one_signal(f))]
    if not cands:
        raise Skip("no finding with shape, margin or intensity")
    f, a = pick(ctx, cands)
    value = f.attributes[a]
    dropped: dict[str, str] = {}
    wrong = ctx.pools.distractors(a, case, [value], 3, ctx.rng, min_k=2,
                                  refuse=functools.partial(rendered.drop_reason, f, a), refused=dropped)
    d = mcq(spec_of("s3.attribute"), ctx, value, wrong, attr=a, f=f.label)
    d.meta = {"attribute": a, **_traced(f, dropped)}
    return [d]


def _traced(f: Finding, dropped: dict[str, str]) -> dict[str, Any]:
    """Item meta tracing a keyed attribute to the lesion it is read from: the finding (``target``, its label, the only
    one of its label), its rendering's measurement (``rendered``) and the words left out as wrong options because the
    rendering shows them too (``rendered_dropped``: word -> reason); nothing for a finding its source did not
    measure."""
    out: dict[str, Any] = {}
    if rendered.traced(f):
        out.update(target=f.label, rendered=rendered.traced(f))
    if dropped:
        out["rendered_dropped"] = dict(sorted(dropped.items()))
    return out
