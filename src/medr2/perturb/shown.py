"""The parent's question asked of another case's image (V2, V3, the look-alike pairs): the exact answer the
re-keying gives (:func:`answer_for_shown`), and whether the parent's key holds for the shown case
(:func:`shown_answer`, the one gate of a foreign-image probe; issue 40 kind 6)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from medr2.imaging.draw import iou
from medr2.perturb.facts import FACTS, NONE_OPTION, TASK_FACT, norm, option_index
from medr2.records import Box, Case, Item, letter, letter_index
from medr2.tasks import vocab
from medr2.tasks.assemble import wrong_option_true
from medr2.tasks.common import COUNT_LABELS, area, count_layout_index
from medr2.tasks.contract import (
    abnormal_state,
    anatomical,
    labels_complete,
    lateralising,
    one_lesion,
    one_per_label,
    readable,
    site_elsewhere,
    states_absent,
    task_requires,
    unmet,
)
from medr2.tasks.pools import case_compatible
from medr2.tasks.spec import TASKS
from medr2.tasks.stage2 import SIZE_RATIO_MIN, _relation
from medr2.tasks.stage3 import _describe
from medr2.tasks.vocab import in_scale_order, ordinal_options


def answer_for_shown(item: Item, case: Case, other: Case,
                     rng: np.random.Generator | None) -> tuple[list[str], str] | None:
    """(options, answer) of ``item``'s question (asked of ``case``) asked of ``other``'s image: the option naming
    ``other``'s value of the fact the task asks (MCQ) or the rule of :data:`SHOWN_ANSWER` (yes/no); None where no
    exact answer is known. Where ``other``'s value is no option, ``rng`` draws the distractor it replaces (None:
    the options stay the question's, and there is no answer). The one rule V2, V3 and V12 answer another case's
    image by. No exact answer where ``other`` does not meet the task's contract (:func:`medr2.tasks.contract.unmet`:
    the question asked of a non-diagnostic image, or of one whose lesion evidence its own degradation lost, is not
    answerable there any more than on a clean item), nor where a wrong option is true of ``other``
    (:func:`medr2.tasks.assemble.wrong_option_true`, the clean drafts' check: a mimic ``other``'s image cannot rule
    out, as a differential's brain abscess beside a glioblastoma its source does not tell apart)."""
    if unmet(task_requires(item.task), other) is not None:
        return None
    key = TASK_FACT.get(item.task)
    value = FACTS[key].get(other) if key else None
    if item.form == "mcq" and value:
        options = list(item.options)
        idx = option_index(options, value)
        if idx is None and rng is not None:  # put the shown image's value in place of a distractor
            wrong = [i for i, o in enumerate(options) if letter(i) != item.answer and not NONE_OPTION.match(o)]
            if wrong:
                idx = wrong[int(rng.integers(len(wrong)))]
                options[idx] = value
                options, idx = _scale_layout(item.options, options, idx)
        if idx is None or wrong_option_true(other, options, [options[idx]]) is not None:
            return None
        return options, letter(idx)
    if item.task in SHOWN_ANSWER:
        shown = SHOWN_ANSWER[item.task](item, case, other)
        return None if shown is None else (list(item.options), shown)
    return None


def _scale_layout(before: list[str], options: list[str], idx: int) -> tuple[list[str], int]:
    """``options`` (``before`` with one value put in) laid out in the direction ``before`` ran on its ordinal scale,
    and the new index of option ``idx``; unchanged where the set is no ordinal one."""
    found = ordinal_options(options)
    if found is None:
        return options, idx
    ranked, scale = found
    ordered = in_scale_order(ranked, scale)
    old = ordinal_options(before)
    if old is not None and old[0] == in_scale_order(old[0], old[1])[::-1] != old[0]:
        ordered = ordered[::-1]
    fixed = [o for o in options if o not in ranked]
    laid = ordered + fixed
    return laid, laid.index(options[idx])


def opposite(yes_no: str) -> str:
    return "no" if yes_no == "yes" else "yes"


def _shown_abnormal(item: Item, case: Case, shown: Case) -> str | None:
    """'Is this image abnormal / normal?' asked of another case's image: the same answer where both images
    are abnormal or both normal, the opposite where they differ; unknown where either state is."""
    mine, theirs = abnormal_state(case), abnormal_state(shown)
    if mine is None or theirs is None:
        return None
    return item.answer if mine == theirs else opposite(item.answer)


# task -> rule giving the exact answer for another case's image (besides the tasks whose answer is a fact)
SHOWN_ANSWER: dict[str, Any] = {
    "s3.abnormal": _shown_abnormal,
}


# --------------------------------------------------------------------------- the parent's key on the shown image
# skip reasons of a variant that shows another case's image (V2, V3): counted per task like any other skip
KEY_HOLDS_SHOWN = "the shown case's own truth gives the parent's answer (another image that removes no evidence)"
KEY_UNKNOWN_SHOWN = ("the shown case's answer to the question is not known (the parent's answer may hold for it: "
                     "no probe without evidence known removed)")
BOX_HOLDS_IOU = 0.5  # a box key holds for the shown case where one of its regions of that name overlaps it this much


@dataclass(frozen=True)
class Shown:
    """The parent's question asked of another case's image (:func:`shown_answer`): ``exact`` the (options, answer)
    re-keyed for it (:func:`answer_for_shown`), or None; ``holds`` whether the parent's key is true of it (True),
    known false of it (False), or unknown (None)."""

    exact: tuple[list[str], str] | None
    holds: bool | None


def shown_answer(item: Item, case: Case, other: Case, rng: np.random.Generator | None) -> Shown:
    """``item``'s question (asked of ``case``) asked of ``other``'s image, through the mechanism the re-keying uses:
    the exact answer where :func:`answer_for_shown` gives one (the parent's key holds where it names the same
    option text, or the same yes/no); else whether the parent's key is true of ``other`` by the rule of
    :data:`KEY_HOLDS` for the task (the shown case's own truth: its quality, artefact, flip flag, structures,
    findings, diagnosis, report, each through the clause the task's own generator or contract reads). A question
    that reads the image's content (its contract declares ``readable``) asked of a non-diagnostic image has lost
    its evidence: the key does not hold. No rule, or a truth that does not decide: unknown (None). The one rule
    V2 and V3 decide by whether their image removes the evidence the parent's question needs."""
    if "readable" in task_requires(item.task) and not readable(other):
        return Shown(None, False)
    got = answer_for_shown(item, case, other, rng)
    if got is not None:
        options, shown = got
        if item.form == "mcq":
            return Shown(got, norm(options[letter_index(shown)]) == norm(_key_text(item)))
        return Shown(got, shown == item.answer)
    rule = KEY_HOLDS.get(item.task)
    return Shown(None, None if rule is None else rule(item, case, other))


def _key_text(item: Item) -> str:
    """The parent's key as text: the option an MCQ's letter names, else the answer itself."""
    if item.form == "mcq":
        return item.options[letter_index(item.answer)]
    return item.answer


def _known_value(get: Any) -> Any:
    """A rule for a task whose key is a value the case states (``get(case)``): the key holds where it is the
    shown case's value; unknown where the shown case states none."""
    def rule(item: Item, case: Case, other: Case) -> bool | None:
        value = get(other)
        return None if not value else norm(str(value)) == norm(_key_text(item))
    return rule


def _orientation_holds(item: Item, case: Case, other: Case) -> bool | None:
    """'Is the image mirrored?' of another image: not answerable from one that does not show a mirror image
    (:func:`medr2.tasks.contract.lateralising`, the task's own clause): the key does not hold; else the same claim
    is true of it where its flip flag is the parent case's."""
    if not lateralising(other):
        return False
    if other.flipped is None or case.flipped is None:
        return None
    return bool(other.flipped) == bool(case.flipped)


def _named(regions: list[Any], name: str) -> list[Any]:
    return [r for r in regions if norm(str(getattr(r, "name", getattr(r, "label", "")))) == norm(name)]


def _structure_holds(name: str, other: Case, at: Box | None = None, min_iou: float = 0.0) -> bool | None:
    """Whether a structure key ``name`` holds for ``other``: it has a structure of that name (one whose box overlaps
    ``at`` more than ``min_iou``, where given); else false where its structure labels are complete or the structure
    lies only in another part of the body than the shown one (:func:`medr2.tasks.contract.site_elsewhere`: the
    brain of a shoulder image), unknown where neither."""
    found = _named(list(anatomical(other).structures), name)
    if found and (at is None or any(iou(s.box, at) > min_iou for s in found)):
        return True
    return False if found or _structure_absent(name, other) else None


def _structure_absent(name: str, other: Case) -> bool:
    """Whether ``other`` is known to lack a structure ``name`` it does not list: its structure labels are complete,
    or the structure lies only in another part of the body (:func:`medr2.tasks.contract.site_elsewhere`)."""
    return labels_complete(other, "structures") or site_elsewhere(name, other.body_region)


def _organ_holds(item: Item, case: Case, other: Case) -> bool | None:
    return _structure_holds(_key_text(item), other)


def _cued_structure_holds(item: Item, case: Case, other: Case) -> bool | None:
    """The outlined structure (or marked landmark): the key holds where the shown case has a structure of its name
    under the cue."""
    return _structure_holds(_key_text(item), other, at=item.cue.box if item.cue is not None else None)


def _box_target(item: Item, regions: list[Any]) -> str | None:
    """What a box question locates: ``meta["target"]`` (the generator's), else the name of the parent case's region
    whose box is the key."""
    if item.meta.get("target"):
        return str(item.meta["target"])
    hit = [r for r in regions if item.answer_box is not None and tuple(r.box) == tuple(item.answer_box)]
    return str(getattr(hit[0], "name", getattr(hit[0], "label", ""))) or None if len(hit) == 1 else None


def _presence_holds(item: Item, case: Case, other: Case) -> bool | None:
    """'Is the X visible?' of the shown case: yes where it has a structure X, no where it is known to lack one (X read
    back through the task's templates, :func:`template_slot`)."""
    named = template_slot(item.task, item.question, "x")
    there = None if named is None else _structure_holds(named, other)
    return None if there is None else ("yes" if there else "no") == item.answer


def _organ_box_holds(item: Item, case: Case, other: Case) -> bool | None:
    target = _box_target(item, list(case.structures))
    if not target or item.answer_box is None:
        return None
    return _structure_holds(str(target), other, at=item.answer_box, min_iou=BOX_HOLDS_IOU - 1e-9)


def _relative_holds(item: Item, case: Case, other: Case) -> bool | None:
    """The relation of the two named structures in the shown case (the generator's own rule), where it has both."""
    x, y = item.meta.get("x"), item.meta.get("y")
    if not x or not y:
        return None
    a, b = _named(list(anatomical(other).structures), str(x)), _named(list(anatomical(other).structures), str(y))
    if len(a) != 1 or len(b) != 1:
        missing = [n for n, f in ((str(x), a), (str(y), b)) if not f]
        return False if any(_structure_absent(n, other) for n in missing) else None
    rel = _relation(a[0], b[0])
    return None if rel is None else norm(rel) == norm(_key_text(item))


def _size_compare_holds(item: Item, case: Case, other: Case) -> bool | None:
    """Which of the two named structures is larger in the shown case (the generator's ratio), where it has both."""
    names = [o[4:] for o in item.options if o.lower().startswith("the ")]
    if len(names) != 2:
        return None
    found = [_named(list(anatomical(other).structures), n) for n in names]
    if any(len(f) != 1 for f in found):
        return False if any(not f and _structure_absent(n, other) for n, f in zip(names, found, strict=True)) else None
    big, small = sorted((found[0][0], found[1][0]), key=area, reverse=True)
    if area(big) < SIZE_RATIO_MIN * area(small):
        return None
    return norm(f"the {big.name}") == norm(_key_text(item))


def _lesion_free(other: Case) -> bool:
    """The shown case is known to show no finding (:func:`medr2.tasks.contract.abnormal_state`)."""
    return abnormal_state(other) is False


def _label_holds(label: str, other: Case) -> bool | None:
    """Whether a finding or diagnosis ``label`` is true of ``other``: one of what its image is compatible with (a
    finding, the diagnosis or a mimic it cannot rule out: :func:`medr2.tasks.pools.case_compatible`), false where its
    truth states it absent (:func:`medr2.tasks.contract.states_absent`), else unknown."""
    if vocab.is_normal(label):
        state = abnormal_state(other)
        return None if state is None else not state
    if any(vocab.same(label, t) or vocab.conflicts(label, t) for t in case_compatible(anatomical(other))):
        return True
    return False if states_absent(other, label) else None


def _diagnosis_holds(label: str, other: Case) -> bool | None:
    """A diagnosis ``label`` of ``other``: :func:`_label_holds`, and false where it is not one of what the image is
    compatible with while the case's diagnosis names its only lesion (:func:`medr2.tasks.contract.one_lesion`, the
    clause by which ``s4.diagnosis`` keys a diagnosis at all)."""
    there = _label_holds(label, other)
    if there is None and other.diagnosis and one_lesion(other):
        return False
    return there


def _label_key_holds(item: Item, case: Case, other: Case) -> bool | None:
    return _label_holds(_key_text(item), other)


def _diagnosis_key_holds(item: Item, case: Case, other: Case) -> bool | None:
    return _diagnosis_holds(_key_text(item), other)


def _multilabel_holds(item: Item, case: Case, other: Case) -> bool | None:
    keys = [item.options[letter_index(a)] for a in item.answer.split(",") if a]
    got = [_label_holds(k, other) for k in keys]
    if False in got:
        return False
    return True if got and all(g is True for g in got) else None


def _count_holds(item: Item, case: Case, other: Case) -> bool | None:
    if not labels_complete(other, "findings") or any(f.attributes.get("focal") is False for f in other.findings):
        return None
    return norm(COUNT_LABELS[count_layout_index(len(other.findings))]) == norm(_key_text(item))


def _attribute_holds(item: Item, case: Case, other: Case) -> bool | None:
    """The asked attribute (``meta["attribute"]``) of the shown case's findings: the key holds where one of them has
    its value; false where the case is lesion-free, or every finding of a complete list has another value."""
    a = item.meta.get("attribute")
    if _lesion_free(other):
        return False
    if not a:
        return None
    values = [f.attributes.get(str(a)) for f in other.findings]
    if any(isinstance(v, str) and norm(v) == norm(_key_text(item)) for v in values):
        return True
    known = labels_complete(other, "findings") and all(isinstance(v, str) and v for v in values)
    return False if known else None


def _description_holds(item: Item, case: Case, other: Case) -> bool | None:
    if _lesion_free(other):
        return False
    described = [_describe(f.label, f.attributes) for f in other.findings]
    if any(norm(d) == norm(_key_text(item)) for d in described):
        return True
    return False if labels_complete(other, "findings") else None


def _lesion_only(item: Item, case: Case, other: Case) -> bool | None:
    """A question about the parent's lesion (its place, size): false on a shown image known to show no finding;
    else unknown (the shown case's lesion may sit where, or be as large as, the parent's)."""
    return False if _lesion_free(other) else None


def _lesion_box_holds(item: Item, case: Case, other: Case) -> bool | None:
    target = _box_target(item, list(case.findings))
    if not target or item.answer_box is None:
        return None
    found = _named(list(other.findings), str(target))
    if any(iou(f.box, item.answer_box) >= BOX_HOLDS_IOU for f in found):
        return True
    return False if (found and one_per_label(other)) or states_absent(other, str(target)) else None


def template_slot(task_id: str, question: str, slot: str) -> str | None:
    """The text a clean question of ``task_id`` put in its template's ``{slot}`` (the diagnosis of "Does this image
    support a diagnosis of {d}?"), read back through the task's own templates (``TaskSpec.templates``); None where
    no template with that slot reads the question."""
    spec = TASKS.get(task_id)
    for t in spec.templates if spec is not None else ():
        if "{" + slot + "}" not in t.text:
            continue
        pattern = re.escape(t.text).replace(re.escape("{" + slot + "}"), "(?P<slot>.+?)")
        pattern = re.sub(r"\\\{\w+\\\}", ".+?", pattern)  # the template's other slots
        m = re.fullmatch(pattern, question.strip(), flags=re.IGNORECASE)
        if m is not None:
            return m.group("slot")
    return None


# the yes-twin of an absent-finding pair on a lesion-free image (medr2.tasks.stage3.absent_finding's twin_text)
_ASKS_FREE = re.compile(r"^is this image free of\s+(.+?)\s*\?$", re.IGNORECASE)
_ARTICLE = re.compile(r"^(?:an?|any)\s+", re.IGNORECASE)


def _absent_finding_holds(item: Item, case: Case, other: Case) -> bool | None:
    """'Does this image show F?' (or 'Is this image free of F?') of the shown case: yes where F is true of it, no where
    its truth states F absent (:func:`_label_holds`); F read back through the task's templates
    (:func:`template_slot`)."""
    free = _ASKS_FREE.match(item.question.strip())
    named = free.group(1) if free is not None else template_slot(item.task, item.question, "a_f")
    if named is None:
        return None
    there = _label_holds(_ARTICLE.sub("", named), other)
    if there is None:
        return None
    shown = "yes" if there != bool(free) else "no"
    return shown == item.answer


def _support_holds(item: Item, case: Case, other: Case) -> bool | None:
    """'Does this image support a diagnosis of D?' of the shown case: yes where D is true of it (its diagnosis, a
    finding or a mimic it cannot rule out), no where its truth states D absent (:func:`_label_holds`)."""
    named = template_slot(item.task, item.question, "d")
    if named is None:
        return None
    there = _diagnosis_holds(named, other)
    return None if there is None else ("yes" if there else "no") == item.answer


def _report_holds(item: Item, case: Case, other: Case) -> bool | None:
    """A reference report: holds where the shown case's report says the same; false where the parent's reads a
    finding and the shown image is known to show none, or where the parent's diagnosis (which a composed report
    names) is false of the shown case (:func:`_diagnosis_holds`); else unknown."""
    if other.report and norm(other.report) == norm(item.answer):
        return True
    if abnormal_state(case) is True and _lesion_free(other):
        return False
    return False if case.diagnosis and _diagnosis_holds(case.diagnosis, other) is False else None


def _across_patients(item: Item, case: Case, other: Case) -> bool | None:
    """A change between the parent's prior and another patient's image has no meaning (V13's rule): no key holds;
    the same patient's other image is unknown."""
    return False if other.patient_id != case.patient_id else None


# task -> whether the parent's key is true of another case's image, where no exact answer is known
# (:func:`shown_answer`); a task without a rule is unknown, and a foreign-image probe of it is skipped
KEY_HOLDS: dict[str, Any] = {
    "s1.quality": _known_value(lambda c: c.quality),
    "s1.artefact": _known_value(lambda c: c.artefact),
    "s1.orientation": _orientation_holds,
    "s1.modality": _known_value(lambda c: c.modality),
    "s1.plane": _known_value(lambda c: c.plane),
    "s1.sequence": _known_value(lambda c: c.sequence),
    "s1.region": _known_value(lambda c: c.body_region),
    "s2.organ": _organ_holds,
    "s2.cued_structure": _cued_structure_holds,
    "s2.landmark": _cued_structure_holds,
    "s2.organ_presence": _presence_holds,
    "s2.organ_box": _organ_box_holds,
    "s2.relative_position": _relative_holds,
    "s2.size_compare": _size_compare_holds,
    "s3.finding_type": _label_key_holds,
    "s3.absent_finding": _absent_finding_holds,
    "s3.count": _count_holds,
    "s3.attribute": _attribute_holds,
    "s3.cue_description": _description_holds,
    "s3.location": _lesion_only,
    "s3.size": _lesion_only,
    "s3.lesion_box": _lesion_box_holds,
    "s3.change": _across_patients,
    "s4.diagnosis": _diagnosis_key_holds,
    "s4.differential": _diagnosis_key_holds,
    "s4.evidence_support": _support_holds,
    "s4.multilabel": _multilabel_holds,
    "s4.report": _report_holds,
}
