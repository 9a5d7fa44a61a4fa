"""From drafts to Items: letters, ids, yes/no pairs and chains, in one deterministic serial pass.

Drafts of a case are produced independently (in any worker); :class:`Assembler` then walks the
cases in plan order and places each correct answer at the least-used letter position of its
(task, split, number of options), breaking ties with a seeded permutation. Unordered MCQs are thus
balanced to within one item per letter; ordinal MCQs choose among the layouts that keep their order, and an
option set drawn from a declared ordinal scale (:func:`medr2.tasks.vocab.ordinal_scale`: severity, quality,
counts, sizes) is laid out in the scale's order, never shuffled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from medr2.errors import BadInput, QuarantineEntry
from medr2.records import Case, Item, item_content_id, jsonable, letter, stable_hash
from medr2.tasks import vocab
from medr2.tasks.companions import Linked
from medr2.tasks.contract import anatomical, check_sides, unmet
from medr2.tasks.pools import LabelPools, case_compatible
from medr2.tasks.spec import TASKS, Draft, Skip, TaskContext, TaskSpec

_CHAIN_CACHE: dict[int, dict[int, tuple[str, ...]]] = {}


def chain_preference() -> dict[int, tuple[str, ...]]:
    """Stage -> its task ids in the order a case's chain tries them (``TaskSpec.chain``, from the registry)."""
    version = TASKS.version
    if version not in _CHAIN_CACHE:
        _CHAIN_CACHE.clear()
        _CHAIN_CACHE[version] = _chain_preference()
    return dict(_CHAIN_CACHE[version])


def _chain_preference() -> dict[int, tuple[str, ...]]:
    out: dict[int, list[TaskSpec]] = {}
    for spec in TASKS.values():
        if spec.chain is not None:
            out.setdefault(spec.stage, []).append(spec)
    return {stage: tuple(s.id for s in sorted(specs, key=lambda s: s.chain or 0))
            for stage, specs in sorted(out.items())}


def __getattr__(name: str) -> dict[int, tuple[str, ...]]:
    if name == "CHAIN_PREFERENCE":  # derived from the task registry
        return chain_preference()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def derive_seed(*parts: Any) -> int:
    return int(stable_hash(jsonable(list(parts)), 16), 16) & ((1 << 63) - 1)


def ordered_tasks(only: Sequence[str] | None = None) -> list[TaskSpec]:
    specs = sorted(TASKS.values(), key=lambda s: s.stage)  # stable: registration order within a stage
    return [s for s in specs if only is None or s.id in only]


@dataclass
class CaseDrafts:
    case_id: str
    drafts: list[Draft] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # task -> reason
    errors: list[QuarantineEntry] = field(default_factory=list)


def draft_case(case: Case, pools: LabelPools, seed: int, split: str, images: Any = None,
               tasks: Sequence[str] | None = None, linked: Linked | None = None) -> CaseDrafts:
    """Run every task generator on one case (pure apart from writing cue images to ``images``); a task whose
    answerability contract (``TaskSpec.requires``) the case does not meet is skipped with the requirement's reason.
    ``linked``: the case's companions resolved to the build's cases (:func:`medr2.tasks.companions.resolve`)."""
    case = anatomical(case)  # structures enter the tasks only where they name anatomy
    out = CaseDrafts(case.case_id)
    linked = linked if linked is not None else Linked(notes=[f"{c.role} {c.case_id}: not resolved"
                                                             for c in case.companions])
    decoded: dict[tuple[str, str | None], np.ndarray] = {}  # images decoded for this case, shared by its tasks
    for spec in ordered_tasks(tasks):
        missing = unmet(spec.requires, case)  # the task's answerability contract, checked here for every task
        if missing is not None:
            out.skipped[spec.id] = missing.reason_for(case)
            continue
        ctx = TaskContext(pools, np.random.default_rng(derive_seed(seed, case.case_id, spec.id)), split, images,
                          decoded, linked)
        try:
            drafts = list(spec.generate(case, ctx))
            for d in drafts:
                check_options(case, d)
            out.drafts.extend(drafts)
        except Skip as e:
            out.skipped[spec.id] = e.reason
        except BadInput as e:
            out.skipped[spec.id] = "bad input (quarantined)"
            out.errors.append(QuarantineEntry(e.file, e.record or case.case_id, e.field or spec.id, e.reason,
                                              "task"))
    return out


def check_options(case: Case, d: Draft) -> None:
    """The options of a choice draft, whichever task made them: no two of them mean the same (one key of
    :func:`medr2.tasks.vocab.norm`: one concept, or one text after normalisation), and no wrong option is true
    of the case (:func:`medr2.tasks.vocab.conflicts` with the right answer, a finding, the diagnosis or a mimic
    the image cannot rule out, :func:`medr2.tasks.pools.case_compatible`: a synonym, sub-type, super-type,
    part/whole or co-occurring label); no wrong option of a single-answer
    MCQ contains the answer or is part of it, read without "the" ("the white matter" beside "the brain";
    :func:`medr2.tasks.vocab.contains`), no two options of any choice draft contain each other (options are
    mutually exclusive: :func:`medr2.tasks.pools.LabelPools.distractors` draws them so), nor do the two things a
    question compares (``meta["x"]``, ``meta["y"]``).
    Raises :class:`Skip` (counted per task like any other reason)
    otherwise; every task's drafts pass here (:func:`draft_case`)."""
    sides = check_sides(case, [d.question, *_texts(d.correct), *d.distractors])
    if sides is not None:  # the contract's side clause (issue 40): no patient side the image cannot show
        raise Skip(sides)
    compared = [str(d.meta[k]) for k in ("x", "y") if d.meta.get(k)]
    _check_exclusive(compared, "the compared structures contain each other")
    if d.form == "mcq":
        right = [str(d.correct)]
        layouts = list(d.layouts.values()) if d.layouts else [[*right, *d.distractors]]
    elif d.form == "multi":
        right = [str(c) for c in d.correct]
        layouts = [[*right, *d.distractors]]
    else:
        return
    for options in layouts:
        keys = [vocab.norm(o) for o in options]
        if len(set(keys)) < len(keys):
            dup = next(o for o, k in zip(options, keys, strict=True) if keys.count(k) > 1)
            raise Skip(f"two options mean the same ({dup!r})")
        if d.form == "mcq" and any(vocab.contains(o, r) for o in options if o not in right for r in right):
            raise Skip("a wrong option contains the answer or is part of it")
        _check_exclusive(options, OPTIONS_NESTED)  # options mutually exclusive: no is-a / part-of pair
        true_wrong = wrong_option_true(case, options, right)
        if true_wrong is not None:
            raise Skip(true_wrong)


def wrong_option_true(case: Case, options: Sequence[str], right: Sequence[str]) -> str | None:
    """Why an option of ``options`` other than ``right`` is true of ``case`` (:func:`medr2.tasks.vocab.conflicts`
    with the right answer, a finding, the diagnosis or a mimic the image cannot rule out:
    :func:`medr2.tasks.pools.case_compatible`), or None where every wrong option is wrong. The one check of a
    choice's wrong options against a case: a clean draft's (:func:`check_options`) and a question re-keyed to
    another case's image (:func:`medr2.perturb.shown.answer_for_shown`: V2, V3, V12), so a differential among
    mimics the shown image cannot tell apart is never asked of it."""
    right = [str(r) for r in right]
    true = [*right, *(p for p in case_compatible(anatomical(case)) if p not in right)]
    for o in options:
        if o in right:
            continue
        hit = next((t for t in true if vocab.conflicts(o, t)), None)
        if hit is not None:
            return f"wrong option {o!r} is true of the case ({hit!r})"
    return None


OPTIONS_NESTED = "two options contain each other (is-a or part-of)"


def _texts(correct: str | list[str]) -> list[str]:
    return [correct] if isinstance(correct, str) else [str(c) for c in correct]


def _check_exclusive(labels: Sequence[str], reason: str) -> None:
    """Skip when two of ``labels`` contain each other (is-a or part-of in the clinical vocabulary:
    :func:`medr2.tasks.vocab.nested_options`)."""
    if vocab.nested_options(list(labels)) is not None:
        raise Skip(reason)


class Assembler:
    """Turns drafts into Items; keep one instance for a whole build and feed cases in plan order."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.position_counts: dict[tuple[str, str, int], list[int]] = {}

    def _position(self, task: str, split: str, n: int, feasible: Sequence[int], rng: np.random.Generator) -> int:
        counts = self.position_counts.setdefault((task, split, n), [0] * n)
        order = [int(i) for i in rng.permutation(n) if int(i) in feasible]
        best = min(order, key=lambda i: counts[i])  # first in seeded order among the least used
        counts[best] += 1
        return best

    def _fields(self, case: Case, d: Draft, split: str, rng: np.random.Generator) -> dict[str, Any]:
        spec = TASKS[d.task]
        options: list[str] = []
        answer = ""
        chance = 0.0
        if d.form == "mcq":
            if d.layouts:
                pos = self._position(d.task, split, len(next(iter(d.layouts.values()))), sorted(d.layouts), rng)
                options = list(d.layouts[pos])
            elif (scale := vocab.ordinal_scale([str(d.correct), *d.distractors])) is not None:
                options = vocab.in_scale_order([str(d.correct), *d.distractors], scale)
                pos = self._position(d.task, split, len(options), [options.index(str(d.correct))], rng)
            else:
                n = 1 + len(d.distractors)
                pos = self._position(d.task, split, n, range(n), rng)
                wrong = [d.distractors[int(i)] for i in rng.permutation(len(d.distractors))]
                options = wrong[:pos] + [str(d.correct)] + wrong[pos:]
            answer, chance = letter(pos), 1.0 / len(options)
        elif d.form == "multi":
            true = list(d.correct)
            pool = true + list(d.distractors)
            options = [pool[int(i)] for i in rng.permutation(len(pool))]
            if (scale := vocab.ordinal_scale(options)) is not None:
                options = vocab.in_scale_order(options, scale)
            answer = ",".join(sorted(letter(options.index(t)) for t in true))
            chance = 1.0 / 2 ** len(options)
        elif d.form == "yesno":
            answer, chance = str(d.correct), 0.5
        elif d.form == "text":
            answer = str(d.correct)
        image, sha, w, h = d.image or (case.image, case.image_sha256, case.width, case.height)
        return {
            "case_id": case.case_id, "stage": spec.stage, "task": d.task, "form": d.form, "question": d.question,
            "options": options, "answer": answer, "answer_box": d.answer_box, "chance": chance,
            "pair_id": stable_hash([case.case_id, d.task, d.pair_key]) if d.pair_key else None,
            "image": image, "image_sha256": sha, "image_width": w, "image_height": h, "cue": d.cue,
            "variant": "clean", "template_id": d.template_id, "split": split, "source": case.source,
            "license": case.license, "access": case.access, "meta": d.meta,
            **({"images": [r.model_dump() for r in d.images]} if d.images else {}),
        }

    def assemble(self, case: Case, drafts: CaseDrafts, split: str) -> list[Item]:
        rows: list[dict[str, Any]] = []
        for k, d in enumerate(drafts.drafts):
            rng = np.random.default_rng(derive_seed(self.seed, case.case_id, d.task, k, "letters"))
            f = self._fields(case, d, split, rng)
            f["item_id"] = item_content_id(f)
            rows.append(f)
        _link_chain(case.case_id, rows, drafts.drafts)
        return [Item.model_validate(r) for r in rows]


def _link_chain(case_id: str, rows: list[dict[str, Any]], drafts: list[Draft]) -> None:
    """One item per stage the case supports, in stage order; a chain needs at least two steps."""
    picked: list[int] = []
    preference = chain_preference()
    for stage in sorted(preference):
        for task_id in preference[stage]:
            idx = [i for i, r in enumerate(rows) if r["task"] == task_id
                   and (r["form"] != "yesno" or drafts[i].meta.get("twin") == "true")]
            if idx:
                picked.append(idx[0])
                break
    if len(picked) < 2:
        return
    chain_id = stable_hash(["chain", case_id])
    for step, i in enumerate(picked, start=1):
        rows[i]["chain_id"], rows[i]["step"] = chain_id, step
