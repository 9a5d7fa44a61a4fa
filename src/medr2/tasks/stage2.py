"""Stage 2: anatomy."""

from __future__ import annotations

from medr2.records import Case, Structure
from medr2.tasks import vocab
from medr2.tasks.common import (
    COUNT_LABELS,
    area,
    count_layout_index,
    cue_draft,
    mcq,
    ordinal,
    pick,
    spec_of,
    unique_by_name,
    yes_no_pair,
)
from medr2.tasks.contract import outline_of, outline_shown
from medr2.tasks.spec import Draft, Skip, TaskContext, task

RELATIONS = ("to the left of", "to the right of", "above", "below")
SIZE_RATIO_MIN = 1.3  # the larger of two structures must be this much larger
SIZE_RATIO_SOFT = 1.6  # ... where either outline is soft (below medr2.imaging.outline.SOFT_OUTLINE_CONTRAST)
DOMINANT_RATIO = 1.3  # the main structure (s2.organ, the variants' "structure" fact) is this much larger than the next


def _organs(case: Case) -> list[Structure]:
    return [s for s in case.structures if s.kind in ("organ", "region")]


def _all_names(case: Case) -> list[str]:
    return [s.name for s in case.structures]


@task("s2.organ", 2, "mcq", "main organ / structure", "structure labels", [
    "Which organ or structure is the main subject of this image?",
    "What is the principal anatomical structure shown?",
    "Which structure occupies most of this image?",
    "Name the dominant organ visible in the image.",
], chain=1, risk="low", requires=("readable",))
def organ(case: Case, ctx: TaskContext) -> list[Draft]:
    organs = _organs(case)
    if not organs:
        raise Skip("no organ or region structures")
    ranked = sorted(organs, key=area, reverse=True)
    if len(ranked) > 1 and area(ranked[0]) < DOMINANT_RATIO * area(ranked[1]):
        raise Skip("no clearly dominant structure")
    main = ranked[0].name
    return [mcq(spec_of("s2.organ"), ctx, main, ctx.pools.distractors("organ", case, _all_names(case), 3, ctx.rng))]


@task("s2.organ_presence", 2, "yesno", "is structure X visible", "structure labels", [
    ("t1", "Is the {x} visible in this image?", False),
    ("t2", "Can you see the {x} in this image?", False),
    ("t3", "Does this image include the {x}?", True),
], chain=8, risk="low", requires=("structures_complete", "readable"))
def organ_presence(case: Case, ctx: TaskContext) -> list[Draft]:
    present = [s.name for s in case.structures if s.kind in ("organ", "region")]
    if not present:
        raise Skip("no organ or region structures")
    x = pick(ctx, sorted(set(present)))
    # the absent twin may name a structure of another region: it is then certainly absent
    absent = ctx.pools.distractors("organ", case, _all_names(case), 1, ctx.rng, wide=True)[0]
    return yes_no_pair(spec_of("s2.organ_presence"), ctx, {"x": x}, {"x": absent}, pair_key="presence")


@task("s2.organ_box", 2, "box", "locate structure X", "structure box or mask", [
    "Draw a bounding box around the {x}.",
    "Locate the {x}: give its bounding box.",
    "Where is the {x}? Answer with a box.",
    "Give the box that encloses the {x} in this image.",
], chain=2, risk="low", requires=("readable", "outlines_visible"))
def organ_box(case: Case, ctx: TaskContext) -> list[Draft]:
    """Box a named organ whose outline the image shows (the ``outlines_visible`` clause: the box of a structure
    whose borders the image does not draw, an atlas parcel, would be the reader's guess of them)."""
    cands = [s for s in unique_by_name(_organs(case)) if outline_shown(case, s)]
    if not cands:
        raise Skip("no uniquely named organ structure whose outline the image shows")
    s = pick(ctx, cands)
    spec = spec_of("s2.organ_box")
    t = ctx.template(spec)
    return [Draft(spec.id, "box", t.text.format(x=s.name), t.id, answer_box=s.box, meta={"target": s.name})]


@task("s2.cued_structure", 2, "mcq", "name the outlined structure", "structure mask/box", [
    "Which structure is outlined in the image?",
    "Name the anatomical structure inside the marked region.",
    "What is the structure highlighted by the drawn outline?",
    "The marked region corresponds to which structure?",
], cue=True, chain=3, risk="low", requires=("readable",))
def cued_structure(case: Case, ctx: TaskContext) -> list[Draft]:
    """Name the outlined organ. A region mask (``Structure.kind`` "region": a body, field-of-view or compartment
    threshold such as "body", "intracranial space", "shoulder soft tissue") is never the outline: it encloses the
    organs of its region the options name (the humerus and the deltoid inside a shoulder's body mask), so every
    option would be true of part of the outlined area."""
    cands = unique_by_name([s for s in _organs(case) if s.kind != "region"])
    if not cands:
        raise Skip("no uniquely named organ to outline (a region mask encloses the structures the options name)")
    s = pick(ctx, cands)
    d = mcq(spec_of("s2.cued_structure"), ctx, s.name,
            ctx.pools.distractors("organ", case, _all_names(case), 3, ctx.rng))
    return [cue_draft(d, case, s.box, s.mask, ctx)]


def _relation(a: Structure, b: Structure) -> str | None:
    """The single true relation of ``a`` to ``b`` in image coordinates, or None if not clear-cut."""
    ax1, ay1, ax2, ay2 = a.box
    bx1, by1, bx2, by2 = b.box
    rel = set()
    if ax2 <= bx1:
        rel.add(RELATIONS[0])
    if ax1 >= bx2:
        rel.add(RELATIONS[1])
    if ay2 <= by1:
        rel.add(RELATIONS[2])
    if ay1 >= by2:
        rel.add(RELATIONS[3])
    return rel.pop() if len(rel) == 1 else None


@task("s2.relative_position", 2, "mcq", "where is X relative to Y", "two structure boxes", [
    "In the image, where is the {x} relative to the {y}?",
    "As displayed, the {x} lies in which direction from the {y}?",
    "Describe the position of the {x} with respect to the {y} in this image.",
    "Looking at the image as shown, where is the {x} compared with the {y}?",
], chain=6, requires=("readable",))
def relative_position(case: Case, ctx: TaskContext) -> list[Draft]:
    cands = unique_by_name(list(case.structures))
    pairs = [(a, b, r) for a in cands for b in cands if a is not b and (r := _relation(a, b))]
    if not pairs:
        raise Skip("no two structures in a clear-cut relative position")
    a, b, r = pick(ctx, pairs)
    d = mcq(spec_of("s2.relative_position"), ctx, r, [x for x in RELATIONS if x != r], x=a.name, y=b.name)
    d.meta = {"image_laterality": r in RELATIONS[:2], "x": a.name, "y": b.name}
    return [d]


@task("s2.count", 2, "mcq", "how many X", "instances", [
    "How many {x} are visible in this image?",
    "Count the {x} shown in the image.",
    "What is the number of {x} in this image?",
    "How many separate {x} can be counted here?",
], balanced="answer letter, as far as ordered bins allow", chain=5, risk="low",
    requires=("structures_complete", "readable"))
def count(case: Case, ctx: TaskContext) -> list[Draft]:
    names = sorted({s.name for s in case.structures if s.kind == "instance"})
    if not names:
        raise Skip("no instance structures")
    x = pick(ctx, names)
    n = sum(1 for s in case.structures if s.kind == "instance" and s.name == x)
    return [ordinal(spec_of("s2.count"), ctx, COUNT_LABELS, count_layout_index(n), x=_plural(x))]


def _plural(name: str) -> str:
    return vocab.plural(name)


@task("s2.size_compare", 2, "mcq", "which is larger, X or Y", "two structure areas", [
    "Which appears larger in this image, the {x} or the {y}?",
    "Comparing the {x} and the {y}, which covers the larger area here?",
    "In this image, is the {x} or the {y} bigger?",
    "Which of the two structures, {x} or {y}, is larger as shown?",
], chain=7, risk="low", requires=("readable", "outlines_visible"))
def size_compare(case: Case, ctx: TaskContext) -> list[Draft]:
    """Compare the areas of two structures whose outlines the image shows (the ``outlines_visible`` clause: the
    areas of atlas parcels the image does not outline are the reader's guess; issue 40), of clearly different
    size (:func:`size_ratio_min`), neither a part of the other."""
    cands = [s for s in unique_by_name(list(case.structures)) if outline_shown(case, s)]
    # two structures of clearly different size, neither a part of the other (the compared pair's rule,
    # assemble.check_options: a gyrus against its whole brain is no comparison)
    pairs = [(a, b) for i, a in enumerate(cands) for b in cands[i + 1:]
             if max(area(a), area(b)) >= size_ratio_min(case, a, b) * min(area(a), area(b))
             and not vocab.contains(a.name, b.name)]
    if not pairs:
        raise Skip("no two structures with outlines shown and clearly different sizes")
    a, b = pick(ctx, pairs)
    if ctx.rng.integers(2):
        a, b = b, a
    larger, smaller = (a, b) if area(a) > area(b) else (b, a)
    options = [f"the {larger.name}", f"the {smaller.name}", "they are about the same size"]
    return [mcq(spec_of("s2.size_compare"), ctx, options[0], options[1:], x=a.name, y=b.name)]


def size_ratio_min(case: Case, a: Structure, b: Structure) -> float:
    """The area ratio two structures must differ by to be compared: :data:`SIZE_RATIO_MIN`, or
    :data:`SIZE_RATIO_SOFT` where either outline is soft (measured contrast below
    :data:`medr2.imaging.outline.SOFT_OUTLINE_CONTRAST`): the softer the borders, the less exactly a reader
    can tell the areas apart."""
    from medr2.imaging.outline import SOFT_OUTLINE_CONTRAST

    soft = any((c := outline_of(case, s)) is None or c < SOFT_OUTLINE_CONTRAST for s in (a, b))
    return SIZE_RATIO_SOFT if soft else SIZE_RATIO_MIN


@task("s2.landmark", 2, "mcq", "name the marked landmark", "landmark point/box", [
    "Which anatomical landmark is marked in the image?",
    "Name the landmark indicated by the drawn marker.",
    "What landmark does the marker point to?",
    "The marked point corresponds to which landmark?",
], cue=True, chain=4, risk="low", requires=("readable",))
def landmark(case: Case, ctx: TaskContext) -> list[Draft]:
    cands = unique_by_name([s for s in case.structures if s.kind == "landmark"])
    if not cands:
        raise Skip("no uniquely named landmark")
    s = pick(ctx, cands)
    d = mcq(spec_of("s2.landmark"), ctx, s.name,
            ctx.pools.distractors("landmark", case, _all_names(case), 3, ctx.rng))
    x1, y1, x2, y2 = s.box
    small = (x2 - x1) * (y2 - y1) < 0.0025 * case.width * case.height
    return [cue_draft(d, case, s.box, None, ctx, kind="point" if small else "box")]

