"""Tasks on several images of one patient (issue 49): change since the prior study, which view shows a finding,
which sequence an image is. Each reads the companions the builder resolved (``TaskContext.linked``,
:mod:`medr2.tasks.companions`) and answers from the labels of both cases; a companion not in the build, or a
label the source does not declare complete, skips with the reason (nothing is guessed)."""

from __future__ import annotations

from medr2.records import Case, Finding, ImageRef
from medr2.tasks import vocab
from medr2.tasks.common import mcq, pick, spec_of, yes_no_pair
from medr2.tasks.companions import Linked, Resolved, image_ref
from medr2.tasks.contract import labels_complete, states_absent
from medr2.tasks.spec import Draft, Skip, TaskContext, task

# the answers of s3.change, in the order shown when no letter balancing applies
CHANGES = ("new", "resolved", "unchanged", "worse")
# the option each change is shown as: a new finding is also a worsening, so "worse" says it grew (and the others say
# since when), so no two options are true of one finding
CHANGE_TEXT = {"new": "new since the prior study", "resolved": "resolved since the prior study",
               "unchanged": "unchanged", "worse": "worse: grown since the prior study"}
WORSE_RATIO = 1.25  # current size / prior size at or above which a finding is worse (grown)
SAME_TOLERANCE = 0.10  # a size within this share of the prior's is unchanged; between the two: not called
BOTH_VIEWS = "both views"


def _linked(ctx: TaskContext) -> Linked:
    return ctx.linked if isinstance(ctx.linked, Linked) else Linked()


def _size(f: Finding) -> float | None:
    v = f.attributes.get("size_mm")
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) and v > 0 else None


def _by_label(case: Case) -> dict[str, list[Finding]]:
    out: dict[str, list[Finding]] = {}
    for f in case.findings:
        out.setdefault(vocab.norm(f.label), []).append(f)
    return out


def study_labels(case: Case) -> dict[str, list[float | None]]:
    """A study's finding labels (vocabulary key -> the size in mm of each finding of that label, None where unknown):
    its findings, and the image-level labels a reader declares without a region (``meta["image_labels"]``, NIH
    ChestX-ray14's ``Finding Labels``), a normal label ("No Finding") being no finding."""
    out: dict[str, list[float | None]] = {k: [_size(f) for f in fs] for k, fs in _by_label(case).items()}
    raw = case.meta.get("image_labels")
    for label in raw if isinstance(raw, list) else []:
        if isinstance(label, str) and label.strip() and not vocab.is_normal(label):
            out.setdefault(vocab.norm(label), [None])
    return out


def _names(*cases: Case) -> dict[str, str]:
    """Vocabulary key -> the label as the first study writes it, over the findings and image labels of ``cases``."""
    out: dict[str, str] = {}
    for case in cases:
        raw = case.meta.get("image_labels")
        labels = [f.label for f in case.findings] + [x for x in (raw if isinstance(raw, list) else [])
                                                      if isinstance(x, str) and x.strip() and not vocab.is_normal(x)]
        for label in labels:
            out.setdefault(vocab.norm(label), label)
    return out


def finding_change(prior: Case, current: Case, label: str) -> str:
    """The change of one finding label from a prior to a current study: one of :data:`CHANGES`, read from both
    studies' labels (:func:`study_labels`). Its absence from a study counts only where that study's truth states it
    absent (:func:`medr2.tasks.contract.states_absent`: a negative label, or complete finding labels); raises
    :class:`Skip` where the labels do not decide it (absence not known, several findings of the label, a size
    unknown, smaller, or a change too small to call)."""
    key = vocab.norm(label)
    before, now = study_labels(prior).get(key, []), study_labels(current).get(key, [])
    if not before and not states_absent(prior, label):
        raise Skip("not labelled on the prior study, which does not state it absent")
    if not now and not states_absent(current, label):
        raise Skip("not labelled on the current study, which does not state it absent")
    if not before and not now:
        raise Skip("finding absent from both studies")
    if len(before) > 1 or len(now) > 1:
        raise Skip("several findings of one label: which is which is not known")
    if not before:
        return "new"
    if not now:
        return "resolved"
    if before[0] is None or now[0] is None:
        raise Skip("finding size unknown on one study: unchanged or worse not decidable")
    ratio = now[0] / before[0]
    if ratio >= WORSE_RATIO:
        return "worse"
    if abs(ratio - 1.0) <= SAME_TOLERANCE:
        return "unchanged"
    raise Skip("finding smaller than on the prior, or a size change too small to call")


def finding_changes(prior: Case, current: Case) -> dict[str, str | Skip]:
    """Every finding label of either study -> its change (:func:`finding_change`) or the Skip saying why not."""
    out: dict[str, str | Skip] = {}
    for _key, label in sorted(_names(current, prior).items()):
        try:
            out[label] = finding_change(prior, current, label)
        except Skip as e:
            out[label] = e
    return out


def _prior(case: Case, ctx: TaskContext) -> Resolved:
    priors = _linked(ctx).of_role("prior")
    if not priors:
        raise Skip(_linked(ctx).missing("prior"))
    prior = priors[0]  # the source's first link: the most recent earlier study it names
    if prior.case.modality != case.modality:
        raise Skip("the prior study is of another modality")
    return prior


@task("s3.change", 3, "mcq", "change of a finding since the prior study", "a prior study with its own findings", [
    "Compared with the prior study, how has the {x} changed on the current image?",
    "Looking at the prior and the current study, what has happened to the {x}?",
    "Relative to the prior examination, the {x} is now:",
    "How does the {x} on the current image compare with the prior study?",
    # chain 0: a case with a prior is read against it first; "the {x}" names the case's one lesion of that label
], chain=0, risk="high", requires=("has_prior", "one_lesion", "readable", "evidence_readable"))
def change(case: Case, ctx: TaskContext) -> list[Draft]:
    """New / resolved / unchanged / worse for one finding label of either study, from both studies' labels (an
    absence only from a study whose labels the source declares complete; :func:`finding_change`).
    ``meta.prior_answer`` is what an answer that takes the prior for the current study gives ("unchanged"): the
    prior-reliance measure reads it (medr2.scoring.metrics ``comparison``)."""
    prior = _prior(case, ctx)
    calls = {label: c for label, c in finding_changes(prior.case, case).items() if isinstance(c, str)}
    if not calls:
        reasons = [c.reason for c in finding_changes(prior.case, case).values() if isinstance(c, Skip)]
        raise Skip(reasons[0] if reasons else "no finding on either study")
    label = pick(ctx, sorted(calls))
    answer = calls[label]
    d = mcq(spec_of("s3.change"), ctx, CHANGE_TEXT[answer], [CHANGE_TEXT[c] for c in CHANGES if c != answer], x=label)
    d.images = [prior.ref, image_ref(case, own=True)]
    before = "present" if vocab.norm(label) in study_labels(prior.case) else "absent"
    now = "present" if vocab.norm(label) in study_labels(case) else "absent"
    d.meta = {"finding": label, "change": answer, "prior_case": prior.case.case_id, "prior_state": before,
              "current_state": now, "prior_answer": CHANGE_TEXT["unchanged"], "comparison": True}
    return [d]


def _own_label(case: Case, other: Resolved) -> str | None:
    """What the companion's own case calls this case's image (its link back), e.g. "frontal" or "CC"."""
    return next((c.label for c in other.case.companions if c.case_id == case.case_id and c.label), None)


def _two_views(case: Case, ctx: TaskContext) -> tuple[Resolved, str]:
    """The one other view of the case, named apart from it and with complete finding labels, and the case's own
    view name (its link back); Skip otherwise."""
    views = _linked(ctx).of_role("view")
    if not views:
        raise Skip(_linked(ctx).missing("view"))
    if len(views) > 1:
        raise Skip("more than two views: not asked")
    other = views[0]
    own = _own_label(case, other)
    if own is None or other.link.label is None or vocab.same(own, other.link.label):
        raise Skip("the views are not named apart by the source")
    if not labels_complete(other.case, "findings"):
        raise Skip("the other view's finding labels not declared complete by the source")
    return other, own


@task("s3.view_finding", 3, "mcq", "which view shows a finding", "two views of one study with their own findings", [
    "In which of the views is the {x} seen?",
    "Which view shows the {x}?",
    "The {x} is visible on which view of this study?",
    "Looking at both views, where can the {x} be seen?",
], chain=11, risk="medium", requires=("findings_complete", "has_views", "readable", "evidence_readable"))
def view_finding(case: Case, ctx: TaskContext) -> list[Draft]:
    """The view (or both) on which a finding label is seen, from each view's own labels (both declared complete):
    a finding seen on one view only is one a single-view reading misses (``meta.needs_both_views``)."""
    other, own = _two_views(case, ctx)
    here, there = _by_label(case), _by_label(other.case)
    names = {vocab.norm(f.label): f.label for f in (*case.findings, *other.case.findings)}
    cands = sorted(names[k] for k in names if len(here.get(k, [])) <= 1 and len(there.get(k, [])) <= 1)
    if not cands:
        raise Skip("no finding of one label per view")
    label = pick(ctx, cands)
    key = vocab.norm(label)
    seen = (bool(here.get(key)), bool(there.get(key)))
    answer = BOTH_VIEWS if all(seen) else own if seen[0] else str(other.link.label)
    options = [own, str(other.link.label), BOTH_VIEWS]
    d = mcq(spec_of("s3.view_finding"), ctx, answer, [o for o in options if o != answer], x=label)
    d.images = [image_ref(case, "current", own, own=True), other.ref]
    d.meta = {"finding": label, "views": options[:2], "needs_both_views": not seen[0], "view_case": other.case.case_id}
    return [d]


def _sequence_name(s: Resolved) -> str:
    return str(s.link.label or s.case.sequence or "")


def _told_apart(own: str, seqs: list[Resolved]) -> list[Resolved]:
    """The companion sequences shown beside ``own``: named, and none the same as or a kind of another shown
    (:func:`medr2.tasks.vocab.conflicts`: FLAIR beside T2-weighted would make a wrong option true), first kept."""
    kept: list[Resolved] = []
    names = [own]
    for s in seqs:
        name = _sequence_name(s)
        if name and not any(vocab.conflicts(name, n) for n in names):
            kept.append(s)
            names.append(name)
    return kept


@task("s3.two_view_finding", 3, "yesno", "a finding seen on the other view only", "two views of one study", [
    ("t1", "Considering both views, is there {x}?", False),
    ("t2", "Reading the two views together, does this study show {x}?", False),
    ("t3", "Taking both views into account, can {x} be seen?", True),
], chain=12, risk="high", requires=("findings_complete", "has_views", "readable", "evidence_readable"))
def two_view_finding(case: Case, ctx: TaskContext) -> list[Draft]:
    """A finding the current view does not show and the other view does (a single-view reading misses it): "yes";
    its twin names a finding absent from both views (both declared complete): "no"."""
    other, _own = _two_views(case, ctx)
    here, there = _by_label(case), _by_label(other.case)
    only_there = sorted(fs[0].label for k, fs in there.items() if k not in here)
    if not only_there:
        raise Skip("no finding seen on the other view only")
    x = pick(ctx, only_there)
    seen = [f.label for f in (*case.findings, *other.case.findings)]
    # same modality and region, stated absent from both views
    absent = ctx.pools.distractors("finding", case, seen, 1, ctx.rng, absent_from=(case, other.case))[0]
    drafts = yes_no_pair(spec_of("s3.two_view_finding"), ctx, {"x": vocab.indefinite(x)},
                         {"x": vocab.indefinite(absent)}, pair_key="two_view")
    for d in drafts:
        d.images = [image_ref(case, "current", _own, own=True), other.ref]
        d.meta.update({"finding": x if d.meta["twin"] == "true" else absent, "view_case": other.case.case_id,
                       "needs_both_views": d.meta["twin"] == "true"})
    return drafts


@task("s1.which_sequence", 1, "mcq", "which sequence is the current image", "other sequences of the same study", [
    "These images are sequences of one study. Which sequence is the current image?",
    "Of the sequences shown, which one is the current image?",
    "The current image was acquired with which of these sequences?",
    "Comparing the sequences shown, name the sequence of the current image.",
], chain=8, risk="low", requires=("has_sequences", "readable"))
def which_sequence(case: Case, ctx: TaskContext) -> list[Draft]:
    """The current image's sequence among the study's sequences shown beside it, unlabelled (a label would give
    the answer away by elimination), in a seeded order; the options are the sequences shown."""
    seqs = _linked(ctx).of_role("sequence")
    if not seqs:
        raise Skip(_linked(ctx).missing("sequence"))
    if not case.sequence:
        raise Skip("no sequence tag")
    seqs = _told_apart(case.sequence, seqs)
    if not seqs:
        raise Skip("no other sequence the vocabulary tells apart from this one (FLAIR is a T2-weighted sequence)")
    names = [case.sequence, *(_sequence_name(s) for s in seqs)]
    refs: list[ImageRef] = [image_ref(case, own=True),
                            *(image_ref(s.case, "sequence", None, None) for s in seqs)]
    order = [int(i) for i in ctx.rng.permutation(len(refs))]
    d = mcq(spec_of("s1.which_sequence"), ctx, case.sequence, names[1:])
    d.images = [refs[i] for i in order]
    d.meta = {"sequences": names, "sequence_cases": [s.case.case_id for s in seqs]}
    return [d]
