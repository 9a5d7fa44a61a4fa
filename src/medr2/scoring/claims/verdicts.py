"""The claim checker's verdicts: a plain mention decided against the case's truth (:func:`_decide`), the region
and sequence rules, a hedged mention's note (:mod:`medr2.scoring.claims`)."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from medr2 import vocab as clinical
from medr2.scoring.claims.lexicon import (
    _MODALITY_COMPATIBLE,
    _ORGAN_REGION,
    _REGION_ZONE,
    _SEQUENCE_FAMILY,
    _SEQUENCE_TERMS,
    _compile,
    _fold,
    _matches,
    _words,
    relation,
)
from medr2.scoring.claims.truth import HEDGED_HALLUCINATION, ClaimVerdict, Truth
from medr2.tasks import contract, vocab


def _region(raw: str | None) -> str | None:
    if not raw:
        return None
    canon = vocab.canonical_region(raw)
    if canon:
        return canon
    key = raw.strip().lower()
    if key in ("eye", "retina", "fundus"):
        return "eye"
    c = clinical.concept_of(key, ["body_region", "organ"])
    # a part of a limb is that limb's region ("knee": lower limb); other parts, and the hip (also pelvis), stay
    if c is not None and clinical.related(c.label, "pelvis") != "child":
        for limb in ("upper limb", "lower limb"):
            if clinical.related(c.label, limb) == "child":
                return limb
    return key


def _modality_of(raw: str | None) -> str | None:
    if not raw:
        return None
    if "mammo" in raw.lower():
        return "mammography"
    return vocab.canonical_modality(raw) or raw


def _decide(kind: str, value: str, denied: bool, truth: Truth) -> tuple[ClaimVerdict, str]:
    """Verdict of a plain (not hedged away) mention."""
    if kind == "modality":
        actual = _modality_of(truth.modality)
        if actual is None:
            return "unverifiable", "modality unknown"
        rel = relation(value, actual)
        if rel == "child":  # "mammography" said of an X-ray: more than the truth says
            return "unverifiable", "sub-type of the modality"
        same = rel in ("same", "parent")  # "microscopy" for a fluorescence microscopy image
        if not same and frozenset({actual, value}) in _MODALITY_COMPATIBLE:
            if value == "angiography" and actual == "CT":  # a CT angiogram is a contrast-enhanced CT
                verdict, note = _decide("sequence", "contrast-enhanced", denied, truth)
                return verdict, note or "CT angiography: contrast-enhanced"
            return "unverifiable", "compatible modality"
        return ("contradicted" if same == denied else "supported"), ""
    if kind == "plane":
        if not truth.plane:
            return "unverifiable", "plane unknown"
        rel = relation(value, truth.plane)  # "frontal" for a PA view: its parent; "craniocaudal" is "CC"
        if rel == "child":
            return "unverifiable", "sub-type of the plane"
        same = rel in ("same", "parent")
        return ("contradicted" if same == denied else "supported"), ""
    if kind == "sequence":
        if not truth.sequence:
            return "unverifiable", "sequence unknown"
        actual = next((k for k, ps in _SEQUENCE_TERMS.items()
                       if vocab.same(k, truth.sequence) or any(_compile(p).fullmatch(truth.sequence) for p in ps)),
                      truth.sequence)
        if not _sequence_axes(value) & _sequence_axes(actual):
            return "unverifiable", "another sequence axis"  # "contrast-enhanced" of a lung-window image
        rel = relation(value, actual, ("sequence",))
        if rel == "same":
            return ("contradicted" if denied else "supported"), ""
        fam = _SEQUENCE_FAMILY.get(actual)
        if rel in ("parent", "child") or (fam is not None and fam == _SEQUENCE_FAMILY.get(value)):
            return "unverifiable", "same sequence family"
        return ("supported" if denied else "contradicted"), ""
    if kind == "body_region":
        actual = _region(truth.body_region)
        if actual is None:
            return "unverifiable", "region unknown"
        if actual == value or vocab.region_related(actual, value) or relation(value, actual) != "unrelated" and \
                relation(value, actual) != "sibling":
            return ("contradicted" if denied else "supported"), ""
        if clinical.overlap(value, actual) is not False:  # unknown, or sharing a part: "chest" and "abdomen"
            return "unverifiable", "overlapping region"
        return ("supported" if denied else "contradicted"), ""  # two places: "knee" for a wrist
    if kind == "organ":  # an organ is only "absent" in words that say so of the organ; denials stay undecided
        if any(_matches(value, s) for s in truth.structures) and not denied:
            return "supported", ""
        zone = _REGION_ZONE.get(_region(truth.body_region) or "")
        organ_zone = _ORGAN_REGION.get(value)
        if not denied and zone and organ_zone and zone != organ_zone:
            return "contradicted", "organ of another body part"
        return "unverifiable", "organ not annotated" if not denied else "organ denial not decided"
    if kind in ("normal", "generic"):  # "normal study" / "an abnormality": the one definition of normal
        abnormal = truth.abnormal
        if abnormal is None:
            return "unverifiable", "normal state unknown"
        said_abnormal = denied if kind == "normal" else not denied
        if said_abnormal == abnormal:
            return "supported", ""
        return "contradicted", "hallucinated_finding" if said_abnormal else "missed_finding"
    # finding / diagnosis: absent only where the truth states it (medr2.tasks.contract.states_absent)
    matching = [p for p in truth.positives if _matches(value, p)]
    if matching:
        if denied and all(_narrower(value, p) for p in matching):
            return "unverifiable", "sub-type denied"  # "no intraventricular extension" of a haemorrhage
        if not denied and any(_narrower(value, p) for p in matching) and _explicitly_absent(value, truth):
            return "contradicted", "hallucinated_finding"  # "a saddle embolus" where central PE is stated absent
        return ("contradicted", "missed_finding") if denied else ("supported", "")
    absent = contract.states_absent(truth.stated, value)
    if denied:
        return ("supported", "") if absent else ("unverifiable", "absence not stated")
    mimic = any(_matches(value, m) for m in truth.mimics)
    if mimic or absent:
        return "contradicted", "hallucinated_finding"
    return "unverifiable", "label not decidable"


def _explicitly_absent(value: str, truth: Truth) -> bool:
    """Whether the source states ``value`` absent by name (``Case.absent``: the label, or one it is a sub-type of):
    a sub-type of the case's finding is compatible with it unless the truth excludes that sub-type."""
    return any(_matches(value, a) and (relation(value, a) in ("same", "child") or _fold(value) == _fold(a))
               for a in truth.absent)


def _narrower(value: str, label: str) -> bool:
    """Whether ``value`` names a strict sub-type of the truth's ``label`` (the vocabulary's is-a; for labels it does
    not know, more words than the label: "intraparenchymal haemorrhage" of a "haemorrhage"). Denying a sub-type
    denies that sub-type only: the case's finding may be of another one, so the denial is no missed finding."""
    rel = relation(value, label)
    if rel != "unrelated":
        return rel == "child"
    a, b = _words(value), _words(label)
    return bool(b) and b < a


# the vocabulary's axis-grouping sequence concepts (medr2.vocab.SEQUENCE_AXES): a contrast phase and a CT window are
# said of an image beside its MR weighting, not instead of it
_SEQUENCE_AXES = clinical.SEQUENCE_AXES


@functools.lru_cache(maxsize=256)
def _sequence_axes_of(label: str, generation: tuple[object, ...]) -> frozenset[str]:
    v = clinical.vocabulary()
    c = v.concept_of(label, ("sequence",))
    if c is None:
        return frozenset({"weighting"})  # a sequence the vocabulary lacks: compared as a weighting
    chain = [c.label, *(a.label for i in v.ancestors(c.label) if (a := v.get(i)) is not None)]
    axes = {a for a in _SEQUENCE_AXES if a in chain}
    if any(x not in _SEQUENCE_AXES and not any(v.is_a(x, a) for a in _SEQUENCE_AXES) for x in chain):
        axes.add("weighting")  # an MR weighting, or under one ("T1 post-contrast": a T1 weighting and a phase)
    return frozenset(axes)


def _sequence_axes(label: str) -> frozenset[str]:
    """The axes a sequence value lies on: ``contrast phase``, ``CT window`` (the vocabulary's grouping concepts it
    is a sub-type of), ``weighting`` (any other: T1, T2, FLAIR, DWI, ...). Two sequences are compared only on an
    axis they share."""
    return _sequence_axes_of(label, clinical.generation())


_ALTERNATIVES = re.compile(r"\bdifferential\b|\bvs\.?(?!\w)|\bversus\b|\bor\b|\brather than\b|鉴别|或", re.IGNORECASE)


def _hedged_note(kind: str, value: str, truth: Truth, clause: str) -> str:
    """``hedged_hallucination`` for a hedged mention ("possibly X", "cannot exclude X") of a finding that would be
    a hallucinated finding asserted plainly; else ``hedged``. Such claims stay unverifiable (a hedge is no
    statement) but are counted on their own (``rat_hedged``, the hedged-hallucination rate). Alternatives weighed
    against each other ("a differential of A vs B", "A or B") are reasoning, not a hedge towards one of them."""
    if kind in ("finding", "diagnosis", "generic") and not _ALTERNATIVES.search(clause):
        verdict, note = _decide(kind, value, False, truth)
        if verdict == "contradicted" and note == "hallucinated_finding":
            return HEDGED_HALLUCINATION
    return "hedged"


def _region_value(region: str, side: str | None) -> str:
    c = clinical.concept_of(region, ("organ", "body_region"))
    return " ".join(w for w in ("normal", side, c.label if c is not None else region.lower()) if w)


def _finding_sites(label: str, attributes: Mapping[str, Any], truth: Truth) -> list[clinical.Concept]:
    """Where a finding of the case lies: its own ``location`` attribute, else the location its concept always
    carries (``@ location=...``, concepts.txt), else the case's one annotated structure; none where unknown."""
    loc = attributes.get("location")
    if isinstance(loc, str) and loc.strip():
        c = clinical.concept_of(clinical.split_side(loc)[1], ("organ", "body_region"))
        return [c] if c is not None else []
    implied = [c for c in clinical.implied(label, "location")]
    if implied:
        return implied
    if len(truth.structures) == 1:
        c = clinical.concept_of(truth.structures[0], ("organ", "body_region"))
        return [c] if c is not None else []
    return []


def _decide_region(region: str, side: str | None, truth: Truth) -> tuple[ClaimVerdict, str]:
    """A region or organ called normal/clear: contradicted (missed evidence) where a finding of the case lies in
    it (on that side, where one is said), supported where every finding is known to lie elsewhere."""
    r = clinical.concept_of(region, ("organ", "body_region"))
    if r is None:
        return "unverifiable", "region unknown"
    if truth.abnormal is None:
        return "unverifiable", "normal state unknown"
    if truth.is_normal:
        return "supported", ""
    if r.kind == "body_region" and truth.body_region and side is None and (
            _region(r.label) == _region(truth.body_region) or clinical.part_of(truth.body_region, r.label)):
        return "contradicted", "missed_finding"  # the imaged region itself ("a normal wrist" of a wrist fracture)
    v = clinical.vocabulary()
    pathology = [(str(f["label"]), f["attributes"]) for f in truth.findings]
    if truth.diagnosis and not vocab.is_normal(truth.diagnosis):
        pathology.append((truth.diagnosis, {}))
    unknown = False
    for label, attributes in pathology:
        sites = _finding_sites(label, attributes, truth)
        inside = any(c.id == r.id or v.part_of(c.label, r.label) for c in sites)
        if not inside:
            unknown = unknown or not sites or any(v.part_of(r.label, c.label) for c in sites)
            continue
        finding_side = str(attributes.get("laterality") or "").lower()
        if side is None or finding_side in (side, "bilateral"):
            return "contradicted", "missed_finding"
        unknown = unknown or not finding_side
    if not truth.findings_complete:  # an unlisted finding may lie in it
        return "unverifiable", "region not decidable"
    return ("unverifiable", "region not decidable") if unknown else ("supported", "")


# a field of a Markdown list or table whose key names an attribute ("- Side: right", "**Margin:** smooth",
# "| Size | large |"): its value is said of the finding the rationale describes in its other rows or its prose
