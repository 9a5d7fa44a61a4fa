"""Stage 1: acquisition and quality."""

from __future__ import annotations

from medr2.records import Case
from medr2.tasks import vocab
from medr2.tasks.common import mcq, needs, spec_of, yes_no_pair
from medr2.tasks.spec import Draft, Skip, TaskContext, task


def _simple(task_id: str, key: str, case: Case, ctx: TaskContext, what: str, *, k: int = 3) -> list[Draft]:
    value = needs(getattr(case, key), what)
    spec = spec_of(task_id)
    return [mcq(spec, ctx, value, ctx.pools.distractors(key, case, [value], k, ctx.rng))]


@task("s1.modality", 1, "mcq", "imaging modality", "modality", [
    "Which imaging modality was used to acquire this image?",
    "What kind of imaging study is this?",
    "This image was produced by which modality?",
    "Identify the acquisition modality of the image shown.",
], chain=1, risk="low")
def modality(case: Case, ctx: TaskContext) -> list[Draft]:
    return _simple("s1.modality", "modality", case, ctx, "modality")


@task("s1.plane", 1, "mcq", "plane / projection", "plane or view", [
    "In which plane or projection was this image acquired?",
    "What is the imaging plane (or radiographic view) of this image?",
    "Which view does this image show?",
    "Name the acquisition plane or projection of the image.",
], chain=2, risk="low")
def plane(case: Case, ctx: TaskContext) -> list[Draft]:
    return _simple("s1.plane", "plane", case, ctx, "plane or view")


@task("s1.sequence", 1, "mcq", "MR sequence / CT window or phase", "sequence tag", [
    "Which sequence, window or contrast phase does this image show?",
    "What acquisition sequence (or window/phase) is this?",
    "This image corresponds to which sequence or phase?",
    "Identify the sequence, window or phase of this acquisition.",
], chain=4, risk="low", requires=("readable",))  # read from the image's contrast, which a reject grade has lost
def sequence(case: Case, ctx: TaskContext) -> list[Draft]:
    return _simple("s1.sequence", "sequence", case, ctx, "sequence tag")


@task("s1.quality", 1, "mcq", "image quality grade", "quality label", [
    "How would you grade the technical quality of this image?",
    "What is the diagnostic quality of this image?",
    "Rate the quality of this image for diagnostic use.",
    "Is this image of good quality, usable, or should it be rejected?",
], chain=5, risk="low")
def quality(case: Case, ctx: TaskContext) -> list[Draft]:
    value = needs(case.quality, "quality label")
    if vocab.norm(value) not in {vocab.norm(q) for q in vocab.QUALITY}:
        raise Skip("quality label outside good/usable/reject")
    spec = spec_of("s1.quality")
    others = [q for q in vocab.QUALITY if not vocab.same(q, value)]
    return [mcq(spec, ctx, value, others)]


@task("s1.artefact", 1, "mcq", "artefact type", "artefact label or applied degradation", [
    "Which artefact, if any, degrades this image?",
    "What type of artefact is present in this image?",
    "Which image artefact is visible?",
    "Identify the dominant artefact in this image (or none).",
], chain=6, risk="low")
def artefact(case: Case, ctx: TaskContext) -> list[Draft]:
    value = needs(case.artefact, "artefact label")
    levels = [list(vocab.ARTEFACTS)]
    return [mcq(spec_of("s1.artefact"), ctx, value,
                ctx.pools.distractors("artefact", case, [value], 3, ctx.rng, levels=levels))]


@task("s1.region", 1, "mcq", "body region / field of view", "body region", [
    "Which body region is shown in this image?",
    "What anatomical region does this image cover?",
    "The field of view of this image is centred on which body region?",
    "Name the body part imaged here.",
], chain=3, risk="low")
def region(case: Case, ctx: TaskContext) -> list[Draft]:
    return _simple("s1.region", "body_region", case, ctx, "body region")


@task("s1.orientation", 1, "yesno", "mirrored image", "flip flag", [
    ("t1", "Is this image {claim}?", False),
    ("t2", "Answer yes or no: the image is {claim}.", False),
    ("t3", "Would you say the image is {claim}?", True),
], chain=7, risk="high", requires=("lateralising", "readable"))
def orientation(case: Case, ctx: TaskContext) -> list[Draft]:
    if case.flipped is None:
        raise Skip("no flip flag")
    mirrored, standard = "mirrored left-to-right", "shown in its standard orientation"
    spec = spec_of("s1.orientation")
    true_claim, twin_claim = (mirrored, standard) if case.flipped else (standard, mirrored)
    return yes_no_pair(spec, ctx, {"claim": true_claim}, {"claim": twin_claim}, pair_key="orientation")
