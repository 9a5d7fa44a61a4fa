"""Helpers shared by the task generators: drafts for each form, numeric bins, cue images."""

from __future__ import annotations

import math
from typing import Any

from medr2.records import Box, Case, Finding, Structure
from medr2.tasks import vocab
from medr2.tasks.rendered import SIZE_EDGES_MM  # the edges of vocab.SIZE_LABELS
from medr2.tasks.spec import Draft, Skip, TaskContext, TaskSpec

COUNT_LABELS = vocab.COUNT_LABELS
SIZE_LABELS = vocab.SIZE_LABELS


def spec_of(task_id: str) -> TaskSpec:
    from medr2.tasks.spec import TASKS

    return TASKS[task_id]


def mcq(spec: TaskSpec, ctx: TaskContext, correct: str, distractors: list[str], **fmt: Any) -> Draft:
    t = ctx.template(spec)
    return Draft(spec.id, "mcq", t.text.format(**fmt), t.id, correct=correct, distractors=distractors)


def ordinal(spec: TaskSpec, ctx: TaskContext, labels: tuple[str, ...] | list[str], true_index: int, n: int = 4,
            **fmt: Any) -> Draft:
    """An MCQ whose options keep their natural order: every window of ``n`` consecutive labels that
    contains the true one is a feasible layout; the assembler picks the layout that balances letters."""
    n = min(n, len(labels))
    layouts: dict[int, list[str]] = {}
    for start in range(max(0, true_index - n + 1), min(len(labels) - n, true_index) + 1):
        layouts[true_index - start] = list(labels[start:start + n])
    t = ctx.template(spec)
    return Draft(spec.id, "mcq", t.text.format(**fmt), t.id, correct=labels[true_index], layouts=layouts)


def yes_no_pair(spec: TaskSpec, ctx: TaskContext, true_fmt: dict[str, Any], twin_fmt: dict[str, Any],
                *, true_answer: str = "yes", pair_key: str, true_text: str | None = None,
                twin_text: str | None = None) -> list[Draft]:
    """A true statement and its adversarial twin (the opposite answer), sharing ``pair_key``.
    Both use the same template unless explicit texts are given."""
    t = ctx.template(spec)
    twin_answer = "no" if true_answer == "yes" else "yes"
    q1 = (true_text or t.text).format(**true_fmt)
    q2 = (twin_text or t.text).format(**twin_fmt)
    if q1 == q2:
        raise Skip("true statement and twin would read the same")
    return [
        Draft(spec.id, "yesno", q1, t.id, correct=true_answer, pair_key=pair_key, meta={"twin": "true"}),
        Draft(spec.id, "yesno", q2, t.id, correct=twin_answer, pair_key=pair_key, meta={"twin": "adversarial"}),
    ]


def lesion_words(case: Case) -> dict[str, str]:
    """Template words that agree with the number of lesions the case shows: "the lesion" only where there is one
    (the source images one lesion, ``meta["one_lesion"]``, whose sub-regions may be outlined apart; or one
    finding), "the lesions" otherwise; ``{Is}``/``{Does}``, ``{the_lesion}``, ``{this_lesion}``."""
    one = case.meta.get("one_lesion") is True or len(case.findings) <= 1
    return {"Is": "Is", "Does": "Does", "the_lesion": "the lesion", "this_lesion": "this lesion"} if one else \
        {"Is": "Are", "Does": "Do", "the_lesion": "the lesions", "this_lesion": "these lesions"}


def count_layout_index(n: int) -> int:
    return min(n, len(COUNT_LABELS) - 1)


def size_bin(size_mm: float) -> int:
    """Index of the size bin; Skip when the size lies too close to a bin edge to be fair."""
    if not math.isfinite(size_mm) or size_mm <= 0:
        raise Skip("lesion size unknown or not positive")
    for edge in SIZE_EDGES_MM:
        if abs(size_mm - edge) < max(1.0, 0.1 * edge):
            raise Skip("lesion size too close to a bin edge")
    return sum(1 for e in SIZE_EDGES_MM if size_mm > e)


def area(r: Structure | Finding) -> float:
    if r.area_px is not None:
        return float(r.area_px)
    x1, y1, x2, y2 = r.box
    return float((x2 - x1) * (y2 - y1))


def unique_by_name(items: list[Structure]) -> list[Structure]:
    """Structures whose name occurs once in the case (so 'the X' is unambiguous)."""
    names = [vocab.norm(s.name) for s in items]
    return [s for s in items if names.count(vocab.norm(s.name)) == 1]


def unique_findings(case: Case) -> list[Finding]:
    labels = [vocab.norm(f.label) for f in case.findings]
    return [f for f in case.findings if labels.count(vocab.norm(f.label)) == 1]


def pick(ctx: TaskContext, seq: list[Any]) -> Any:
    return seq[int(ctx.rng.integers(len(seq)))]


def needs(value: Any, what: str) -> Any:
    if value is None or value == "" or value == []:
        raise Skip(f"no {what}")
    return value


def cue_draft(draft: Draft, case: Case, box: Box, mask_rel: str | None, ctx: TaskContext, *,
              kind: str | None = None) -> Draft:
    """Render the case image with the cue drawn, store it, and point the draft at it."""
    from medr2.imaging.draw import draw_cue, make_cue

    if ctx.images is None:
        raise Skip("no image store to render the cue")
    cue_kind = kind or ("contour" if mask_rel else "box")
    arr = ctx.load(case.image)  # decoded once for all cue tasks of the case; draw_cue copies it
    cue = make_cue(cue_kind, box, case.width, case.height, image=arr)
    mask = None
    if mask_rel and cue_kind in ("contour", "mask"):
        mask = ctx.load(mask_rel, mode="L") > 127
    ref = ctx.images.put_array(draw_cue(arr, cue, mask))
    draft.cue = cue
    draft.image = (ref.path, ref.sha256, ref.width, ref.height)
    return draft
