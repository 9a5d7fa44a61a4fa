"""Case facts that text variants state (T2 correct hints, T3 misleading premises, T1 absent twins).

A fact key names one thing known about a case (its modality, its main structure, its finding, ...),
the stage it belongs to, a question that asks for it and a sentence that states it. ``TASK_FACT`` maps
the tasks of docs/tasks.md whose answer *is* such a fact onto its key, so a premise about that key has a
consistent answer among the options (the lure).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from medr2 import vocab as clinical
from medr2.records import Case
from medr2.tasks.contract import abnormal_state, anatomical
from medr2.tasks.pools import case_compatible
from medr2.vocab.differential import malignancy_decidable
from medr2.vocab.english import attribute_words


def _finding(case: Case) -> str | None:
    labels = sorted({f.label for f in case.findings})
    if not case.findings:
        return None
    return labels[0] if len(labels) == 1 else None


def _laterality(case: Case) -> str | None:
    sides = {str(f.attributes.get("laterality")) for f in case.findings if f.attributes.get("laterality")}
    return sides.pop() if len(sides) == 1 else None


def _structure(case: Case) -> str | None:
    """The main structure, as ``s2.organ`` keys it: the largest anatomical organ or region
    (:func:`medr2.tasks.contract.anatomical`), where it is clearly the largest (:data:`DOMINANT_RATIO`)."""
    from medr2.tasks.common import area
    from medr2.tasks.stage2 import DOMINANT_RATIO

    organs = sorted((s for s in anatomical(case).structures if s.kind in ("organ", "region")), key=area, reverse=True)
    if not organs or (len(organs) > 1 and area(organs[0]) < DOMINANT_RATIO * area(organs[1])):
        return None
    return organs[0].name


def lesion_words(case: Case | None) -> dict[str, str]:
    """The words naming a case's lesions, agreeing with their number: "the lesion ... is" of one (or of a case
    with none named), "the lesions ... are" of several. Every text a variant writes from case facts says "the
    lesion" through here (``{the_lesion}``, ``{The_lesion}``, ``{is}`` of :attr:`FactKey.sentence` and
    :attr:`FactKey.question`)."""
    several = case is not None and len(case.findings) >= 2
    the = "the lesions" if several else "the lesion"
    return {"the_lesion": the, "The_lesion": the.capitalize(), "is": "are" if several else "is"}


def _malignancy(case: Case) -> str | None:
    """The benign/malignant label, where the image decides it (:func:`medr2.vocab.differential.malignancy_decidable`,
    the gate of s4.malignancy): a hint, premise or re-keyed answer never states a class the image cannot support."""
    return case.malignancy if malignancy_decidable(case) else None


@dataclass(frozen=True)
class FactKey:
    key: str
    stage: int
    get: Callable[[Case], str | None]
    question: str  # with {the_lesion}, {is} (:func:`lesion_words`)
    sentence: str  # with {v} (the value) or {a_v} (the value with its article, or none for a plural), {The_lesion}

    def state(self, v: str, case: Case | None = None) -> str:
        """The sentence stating value ``v`` of ``case`` (its lesions named in their number)."""
        where = attribute_words(self.key, v) or v  # "in the midline", never "on the midline side"
        return self.sentence.format(v=v, a_v=a_an(v), where=where, **lesion_words(case))

    def ask(self, case: Case | None = None) -> str:
        """The question asking for the fact of ``case`` (its lesions named in their number)."""
        return self.question.format(**lesion_words(case))


FACTS: dict[str, FactKey] = {f.key: f for f in (
    FactKey("modality", 1, lambda c: c.modality, "What is the imaging modality?", "The imaging modality is {v}."),
    FactKey("plane", 1, lambda c: c.plane, "In which plane or view was the image acquired?",
            "The image was acquired in the {v} plane/view."),
    FactKey("sequence", 1, lambda c: c.sequence, "Which sequence, window or phase is shown?",
            "The sequence, window or phase is {v}."),
    FactKey("body_region", 1, lambda c: c.body_region, "Which body region is shown?", "The image shows the {v}."),
    FactKey("structure", 2, _structure, "Which main structure is visible?",
            "The main structure visible is the {v}."),
    FactKey("finding", 3, _finding, "Which finding is present?", "This image shows {a_v}."),
    FactKey("laterality", 3, _laterality, "On which side {is} {the_lesion}?", "{The_lesion} {is} {where}."),
    FactKey("diagnosis", 4, lambda c: c.diagnosis, "What is the diagnosis?", "The diagnosis is {v}."),
    FactKey("severity", 4, lambda c: c.severity, "What is the severity?", "The severity is {v}."),
    FactKey("malignancy", 4, _malignancy, "Is {the_lesion} benign or malignant?", "{The_lesion} {is} {v}."),
)}

# tasks whose answer is the value of a fact key
TASK_FACT: dict[str, str] = {
    "s1.modality": "modality",
    "s1.plane": "plane",
    "s1.sequence": "sequence",
    "s1.region": "body_region",
    "s2.organ": "structure",
    "s3.finding_type": "finding",
    "s4.diagnosis": "diagnosis",
    "s4.differential": "diagnosis",
    "s4.severity": "severity",
    "s4.malignancy": "malignancy",
}

NONE_OPTION = re.compile(r"^\s*(none|no finding|no findings|no abnormality|no lesion|no lesions|normal|"
                         r"no abnormality detected|none of (these|the above)|no finding \(normal tissue\))\s*\.?\s*$",
                         re.IGNORECASE)
ZERO_OPTION = re.compile(r"^\s*(0|zero|none|no lesions?)\b", re.IGNORECASE)


def a_an(phrase: str) -> str:
    """``phrase`` with an indefinite article chosen by sound ("an infarct", "a uniform ...", "an MRI"), or
    none for a plural ("multiple nodules"): :func:`medr2.tasks.vocab.indefinite`."""
    from medr2.tasks.vocab import indefinite

    return indefinite(phrase)


def there_is(phrase: str) -> str:
    """"Is there an infarct" / "Are there multiple nodules" (the verb agreeing with the phrase)."""
    from medr2.tasks.vocab import is_plural

    return f"{'Are' if is_plural(phrase) else 'Is'} there {a_an(phrase)}"


def norm(text: str) -> str:
    return " ".join(text.lower().split())


def swap_facts(case: Case) -> tuple[str | None, ...]:
    """What a case's questions ask about, for choosing an informative other case (V2/V3): the value of
    every fact key (normalised) and whether the image is abnormal (None where unknown)."""
    state = abnormal_state(case)
    values = [f.get(case) for f in FACTS.values()]
    return (*(None if v is None else norm(v) for v in values), None if state is None else str(state))


def premise_false(key: str, stated: str, case: Case) -> bool:
    """Whether a premise stating ``stated`` for fact ``key`` is false of ``case``: the one check every misleading
    premise passes (:meth:`medr2.perturb.text.MisleadingPremise.own_fact` and ``earlier_fact``, whatever variant
    frames it: T3, T9, T10, V10's burnt-in impression). ``abnormal`` through the
    one definition of normal (:func:`medr2.tasks.contract.abnormal_state`): "no abnormality" is false only of an
    abnormal image, a stated finding only of one known normal; any other fact: the stated value is neither the
    case's own value nor anything its image is compatible with (:func:`medr2.tasks.pools.case_compatible`: its
    findings, the mimics it cannot rule out, the planes an oblique slice may be named by), nor a synonym, sub-type,
    super-type or co-occurring label of one (:func:`medr2.vocab.conflicts`). Unknown is not false."""
    if key == "abnormal":
        state = abnormal_state(case)
        return state is True if norm(stated) == "none" else state is False
    fact = FACTS.get(key)
    own = fact.get(case) if fact is not None else None
    if not own and not (key == "finding" and case.findings):
        return False
    known = [str(v) for v in (own, *case_compatible(case)) if v]
    return not any(norm(stated) == norm(v) or clinical.conflicts(stated, v) or clinical.conflicts(v, stated)
                   for v in known)


def plausible_premise(key: str, value: str, case: Case, pools: FactPools) -> bool:
    """Whether a premise stating ``value`` for fact ``key`` of ``case`` is plausible for its image: one of
    :meth:`FactPools.premise_values` (a statement absurd for the image's modality and region cannot mislead)."""
    return norm(value) in {norm(v) for v in pools.premise_values(key, case)}


def option_index(options: list[str], value: str) -> int | None:
    """Index of the option whose text equals ``value`` (case- and space-insensitive)."""
    want = norm(value)
    for i, opt in enumerate(options):
        if norm(opt) == want:
            return i
    return None


# fact keys a premise may not state wrongly: they are the setting (modality, body region) a premise must be
# plausible for, and an image plainly shows its own (a "CT" stated of a radiograph, "the head" of a chest film)
SETTING_FACTS = ("modality", "body_region")
# fact keys whose wrong values the vocabulary knows per body region (medr2.tasks.vocab.builtin_for_region)
_REGION_VOCAB = {"finding": "finding", "diagnosis": "diagnosis", "structure": "organ"}


def setting(case: Case) -> tuple[str, str]:
    """The modality and body region of a case (normalised): what a premise about it must be plausible for."""
    from medr2.tasks.vocab import norm as vnorm

    return vnorm(case.modality), vnorm(case.body_region) if case.body_region else ""


class FactPools:
    """Values of every fact key over the cases, grouped by modality (for wrong-but-plausible facts) and by setting
    (modality and body region: what a misleading premise may state, :meth:`premise_values`)."""

    def __init__(self, cases: Iterable[Case] = ()) -> None:
        self.by_modality: dict[str, dict[str, set[str]]] = {}
        self.by_setting: dict[tuple[str, str], dict[str, set[str]]] = {}
        self.all: dict[str, set[str]] = {k: set() for k in FACTS}
        self.labels: dict[str, set[str]] = {}
        self.structures: dict[str, set[str]] = {}
        # finding attribute values per setting (modality, body region): what a false attribute statement may name
        self.attributes: dict[tuple[str, str], dict[str, set[str]]] = {}
        for c in cases:
            self.add(c)

    def add(self, c: Case) -> None:
        """Add the values of one case (the pools are sets: the order cases come in does not matter)."""
        pool = self.by_modality.setdefault(c.modality, {k: set() for k in FACTS})
        here = self.by_setting.setdefault(setting(c), {k: set() for k in (*FACTS, "finding_label")})
        for key, fk in FACTS.items():
            v = fk.get(c)
            if v:
                pool[key].add(v)
                here[key].add(v)
                self.all[key].add(v)
        here["finding_label"].update(f.label for f in c.findings)
        self.labels.setdefault(c.modality, set()).update(f.label for f in c.findings)
        self.structures.setdefault(c.modality, set()).update(s.name for s in anatomical(c).structures)
        for f in c.findings:
            for k, v in f.attributes.items():
                if isinstance(v, str) and v:
                    self.attributes.setdefault(setting(c), {}).setdefault(k, set()).add(v)

    def alternatives(self, key: str, case: Case, true_value: str | None) -> list[str]:
        """Other values of ``key``: same modality first (modality itself: all), sorted, never the true one."""
        t = norm(true_value) if true_value else None
        same = self.by_modality.get(case.modality, {}).get(key, set()) if key != "modality" else set()
        others = {v for v in same if norm(v) != t} or {v for v in self.all.get(key, set()) if norm(v) != t}
        return sorted(others)

    def premise_values(self, key: str, case: Case) -> list[str]:
        """Wrong values of fact ``key`` a misleading premise may state of ``case`` (sorted): values true of a case of
        the same setting (modality and body region) in the bench, or named by the vocabulary for that region
        (:func:`medr2.tasks.vocab.builtin_for_region`), none equal to, containing or part of the case's own
        (:func:`medr2.tasks.vocab.conflicts`), nor, for a diagnosis, one of a mimic the image cannot rule out
        (:func:`medr2.tasks.pools.case_compatible`: "the diagnosis is brain abscess" is no wrong premise of a
        glioblastoma whose differential lists it). Never a modality or body region (:data:`SETTING_FACTS`). The one
        plausibility rule every premise goes through (:func:`plausible_premise`)."""
        from medr2.tasks.pools import case_compatible
        from medr2.tasks.vocab import builtin_for_region, conflicts

        if key in SETTING_FACTS or key not in FACTS:
            return []
        here = self.by_setting.get(setting(case), {})
        cands = set(here.get(key, set()))
        if key == "finding":
            cands |= here.get("finding_label", set())
        if key in _REGION_VOCAB:
            cands.update(builtin_for_region(_REGION_VOCAB[key], case.modality, case.body_region))
        true = [v for v in ([FACTS[key].get(case)] + ([f.label for f in case.findings] if key == "finding" else [])
                            + (case_compatible(case) if key == "diagnosis" else [])) if v]
        return sorted(v for v in cands if not any(norm(v) == norm(t) or conflicts(v, t) for t in true))

    def absent_labels(self, case: Case) -> list[str]:
        """Finding labels of the case's modality its truth states absent (T1's false "Is there X?"): never one
        merely unlisted on an incomplete list (:func:`medr2.tasks.contract.states_absent`)."""
        from medr2.tasks.contract import states_absent

        present = {norm(f.label) for f in case.findings}
        pool = self.labels.get(case.modality) or set()
        return sorted(v for v in pool if norm(v) not in present and states_absent(case, v))

    def absent_structures(self, case: Case) -> list[str]:
        present = {norm(s.name) for s in case.structures}
        return sorted(v for v in self.structures.get(case.modality, set()) if norm(v) not in present)
