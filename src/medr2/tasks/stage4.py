"""Stage 4: diagnosis and report."""

from __future__ import annotations

from medr2.records import Case
from medr2.tasks import vocab
from medr2.tasks.common import lesion_words, mcq, needs, ordinal, spec_of, yes_no_pair
from medr2.tasks.contract import discriminable
from medr2.tasks.spec import Draft, Skip, TaskContext, task

MULTI_OPTIONS = 5  # options shown in s4.multilabel (more when the case has many findings)


def _diagnoses(case: Case) -> list[str]:
    return [case.diagnosis] if case.diagnosis else []


@task("s4.diagnosis", 4, "mcq", "diagnosis", "diagnosis", [
    "What is the most likely diagnosis?",
    "Based on this image, which diagnosis fits best?",
    "Which diagnosis does this image support?",
    "Give the most probable diagnosis for this image.",
], chain=1, risk="high", requires=("one_lesion", "readable", "evidence_readable"))
def diagnosis(case: Case, ctx: TaskContext) -> list[Draft]:
    dx = needs(case.diagnosis, "diagnosis")
    return [mcq(spec_of("s4.diagnosis"), ctx, dx, ctx.pools.distractors("diagnosis", case, [dx], 3, ctx.rng))]


def _severity_scale(case: Case, ctx: TaskContext) -> list[str]:
    labels = {vocab.norm(s): s for level in ctx.pools.levels("severity", case)[:3] for s in level}
    ranked = {vocab.norm(s): i for i, s in enumerate(vocab.SEVERITY_ORDER)}
    return sorted(labels.values(), key=lambda s: (ranked.get(vocab.norm(s), len(ranked)), vocab.norm(s)))


@task("s4.severity", 4, "mcq", "severity / grade", "grade", [
    "How severe is the condition shown?",
    "What grade of severity does this image show?",
    "Grade the severity of the condition shown.",
    "Which severity grade applies to this case?",
], balanced="answer letter, as far as the ordinal scale allows", chain=4,
    requires=("severity_graded", "readable", "evidence_readable"))
def severity(case: Case, ctx: TaskContext) -> list[Draft]:
    grade = needs(case.severity, "severity grade")
    scale = _severity_scale(case, ctx)
    if len(scale) < 3:
        raise Skip("fewer than three severity grades in the pool")
    idx = next(i for i, s in enumerate(scale) if vocab.same(s, grade))
    return [ordinal(spec_of("s4.severity"), ctx, scale, idx)]


@task("s4.malignancy", 4, "mcq", "benign or malignant", "malignancy label", [
    "{Is} {the_lesion} benign or malignant?",
    "{Does} {this_lesion} appear benign or malignant?",
    "Classify {the_lesion} as benign or malignant.",
    "What is the likely nature of {the_lesion}: benign or malignant?",
], chain=3, risk="high", requires=("one_lesion", "malignancy_decidable", "readable", "evidence_readable"))
def malignancy(case: Case, ctx: TaskContext) -> list[Draft]:
    value = needs(case.malignancy, "malignancy label")
    if vocab.norm(value) not in {vocab.norm(m) for m in vocab.MALIGNANCY}:
        raise Skip("malignancy label outside benign/malignant")
    other = [m for m in vocab.MALIGNANCY if not vocab.same(m, value)]
    return [mcq(spec_of("s4.malignancy"), ctx, value, other, **lesion_words(case))]


@task("s4.differential", 4, "mcq", "diagnosis among near-miss mimics", "diagnosis + mimic list", [
    "Which of these closely related diagnoses is correct for this image?",
    "Among these similar-looking conditions, which one is shown?",
    "Choose the correct diagnosis from this differential.",
    "Which entity in this differential diagnosis best fits the image?",
], chain=2, risk="high", requires=("one_lesion", "discriminable", "readable", "evidence_readable"))
def differential(case: Case, ctx: TaskContext) -> list[Draft]:
    """The diagnosis among the near-misses the source declares its image tells apart (``discriminable``):
    those on the case's mimic list first, then the others; a mimic the image cannot rule out is never offered
    (:func:`medr2.tasks.pools.case_compatible`)."""
    dx = needs(case.diagnosis, "diagnosis")
    told_apart = discriminable(case)
    mimics = {vocab.norm(m) for m in case.mimics}
    near = sorted(d for d in told_apart if vocab.norm(d) in mimics)
    other = sorted(d for d in told_apart if vocab.norm(d) not in mimics)
    wrong = ctx.pools.distractors("diagnosis", case, [dx], 3, ctx.rng, levels=[near, other], min_k=1)
    d = mcq(spec_of("s4.differential"), ctx, dx, wrong)
    d.meta = {"mimics": sorted(case.mimics), "discriminable": sorted(told_apart)}
    return [d]


@task("s4.evidence_support", 4, "yesno", "does this image support diagnosis D", "findings + diagnosis", [
    ("t1", "Does this image support a diagnosis of {d}?", False),
    ("t2", "Is a diagnosis of {d} consistent with what this image shows?", False),
    ("t3", "Would the findings in this image support a diagnosis of {d}?", True),
], chain=5, risk="high", requires=("one_lesion", "readable", "evidence_readable"))
def evidence_support(case: Case, ctx: TaskContext) -> list[Draft]:
    dx = needs(case.diagnosis, "diagnosis")
    if vocab.is_normal(dx):  # "a diagnosis of no abnormality" is no diagnosis (and a double negative)
        raise Skip("normal case: no diagnosis to support")
    mimics = {vocab.norm(m) for m in case.mimics}
    near = sorted(d for d in discriminable(case) if vocab.norm(d) in mimics and not vocab.is_normal(d))
    # the twin asserts a near-miss the source declares the image tells apart when there is one, else another
    # (abnormal) diagnosis of the pool; never a mimic the image cannot rule out (pools.case_compatible)
    wrong = ctx.pools.distractors("diagnosis", case, [dx, *sorted(vocab.NORMAL_LABELS)], 1, ctx.rng,
                                  levels=[near] if near else None)[0]
    drafts = yes_no_pair(spec_of("s4.evidence_support"), ctx, {"d": dx}, {"d": wrong}, pair_key="support")
    for d in drafts:
        d.meta["evidence"] = sorted({f.label for f in case.findings})
    return drafts


@task("s4.multilabel", 4, "multi", "select all findings present", "finding labels (complete list)", [
    "Select all findings that are present in this image.",
    "Which of the following findings can be seen? Choose all that apply.",
    "Mark every finding visible in this image.",
    "Pick each finding present in the image (one or more).",
], balanced="number of true options varies; option order seeded", chain=6, risk="high",
    requires=("findings_complete", "readable", "evidence_readable"))
def multilabel(case: Case, ctx: TaskContext) -> list[Draft]:
    if not case.findings:
        raise Skip("no findings")
    true = sorted({f.label for f in case.findings}, key=vocab.norm)
    true = list({vocab.norm(t): t for t in true}.values())
    n_wrong = max(2, MULTI_OPTIONS - len(true))
    wrong = ctx.pools.distractors("finding", case, [f.label for f in case.findings], n_wrong, ctx.rng, min_k=2,
                                  absent_from=(case,))
    spec = spec_of("s4.multilabel")
    t = ctx.template(spec)
    return [Draft(spec.id, "multi", t.text, t.id, correct=true, distractors=wrong)]


# the question only; what to write (findings, then impression) is the text form's one instruction
# (medr2.run.prompts.REPORT_INSTRUCTION), never said a second time here
@task("s4.report", 4, "text", "findings and impression", "report", [
    "What does this image show?",
    "What do you see in this image?",
    "How would you read this image?",
    "What is your reading of this image?",
], balanced="nothing (free text)", chain=7, risk="high", requires=("report_grounded", "readable", "evidence_readable"))
def report(case: Case, ctx: TaskContext) -> list[Draft]:
    text = needs(case.report, "report")
    if not text.strip():
        raise Skip("empty report")
    spec = spec_of("s4.report")
    t = ctx.template(spec)
    return [Draft(spec.id, "text", t.text, t.id, correct=text.strip())]

