"""The claim checker and the clinical vocabulary (issue 39): sub-types, synonyms and parents of the truth are
supported; planes, views and modalities resolved through the vocabulary; counts only against a stated count;
laterality anywhere in the clause; hedged hallucinations counted on their own."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings, strategies as st

import medr2.vocab as V
from medr2.scoring.claims import _VOCAB_SKIP, HEDGED_HALLUCINATION, _vocab_term_ok, audit, check_text

VOCAB = V.vocabulary()


def _claimable(c: V.Concept) -> bool:
    return c.id not in _VOCAB_SKIP and _vocab_term_ok(c.label, c.kind) and "/" not in c.label \
        and "," not in c.label and c.label.isascii()


PATHOLOGY = sorted((c for c in VOCAB if c.kind in ("finding", "diagnosis") and _claimable(c)), key=lambda c: c.id)
PAIRS = sorted({(c.label, p.label) for c in PATHOLOGY for pid in c.is_a if (p := VOCAB.get(pid)) is not None
                and p in PATHOLOGY})


def _verdicts(text: str, case: dict[str, Any], kind: str) -> list[tuple[str, str]]:
    kinds = ("finding", "diagnosis") if kind in ("finding", "diagnosis") else (kind,)
    return [(c.text.lower(), c.verdict) for c in check_text(text, case) if c.kind in kinds]


@given(st.sampled_from(PAIRS), st.booleans(), st.sampled_from(("There is {x}.", "The image shows {x}.",
                                                               "Findings: {x} in the image.")))
@settings(max_examples=150, deadline=None)
def test_sub_types_and_parents_of_the_truth_are_never_contradicted(pair: tuple[str, str], claim_parent: bool,
                                                                  template: str) -> None:
    child, parent = pair
    truth, said = (child, parent) if claim_parent else (parent, child)
    case = {"modality": "CT", "findings": [{"label": truth, "attributes": {}}], "diagnosis": truth}
    claims = [c for c in check_text(template.format(x=f"a {said}"), case) if c.kind in ("finding", "diagnosis")]
    assert claims and all(c.verdict == "supported" for c in claims), (truth, said, claims)


@given(st.sampled_from(PATHOLOGY), st.data())
@settings(max_examples=100, deadline=None)
def test_every_spelling_of_the_truth_is_supported(concept: V.Concept, data: st.DataObject) -> None:
    spellings = [t for t in concept.terms if _vocab_term_ok(t, concept.kind) and t.isascii() and "/" not in t]
    if not spellings:
        return
    said = data.draw(st.sampled_from(spellings))
    case = {"modality": "CT", "findings": [{"label": concept.label, "attributes": {}}]}
    claims = [c for c in check_text(f"There is a {said} in the image.", case) if c.kind in ("finding", "diagnosis")]
    assert claims and all(c.verdict == "supported" for c in claims), (concept.label, said, claims)


def test_the_issue_examples() -> None:
    stroke = {"modality": "CT", "body_region": "head", "diagnosis": "ischemic stroke", "findings": []}
    assert ("infarct", "supported") in _verdicts("There is an infarct in the left MCA territory.", stroke, "finding")
    gbm = {"modality": "MRI", "diagnosis": "glioblastoma", "findings": [{"label": "intra-axial mass"}]}
    assert ("glioma", "supported") in _verdicts("This is a glioma.", gbm, "diagnosis")
    viral = {"modality": "X-ray", "diagnosis": "viral pneumonia", "findings": []}
    assert ("covid-19", "supported") in _verdicts("The picture is that of COVID-19.", viral, "diagnosis")
    nuclei = {"modality": "fluorescence microscopy", "body_region": "cell nuclei", "findings": []}
    assert _verdicts("This is a microscopy image of stained nuclei.", nuclei, "modality") == [
        ("microscopy", "supported")]
    cxr = {"modality": "X-ray", "plane": "PA", "body_region": "chest", "findings": []}
    assert ("frontal", "supported") in _verdicts("A frontal chest radiograph.", cxr, "plane")
    assert ("ap", "contradicted") in _verdicts("An AP chest radiograph.", cxr, "plane")  # a sibling view
    mammo = {"modality": "mammography", "plane": "craniocaudal", "body_region": "breast", "findings": []}
    assert _verdicts("This is a CC view.", mammo, "plane") == [("cc", "supported")]
    assert _verdicts("This is an MLO view.", mammo, "plane") == [("mlo", "contradicted")]


def test_a_sibling_is_contradicted_only_where_the_truth_excludes_it() -> None:
    text = "There is a pericardial effusion."
    case = {"modality": "CT", "body_region": "chest", "findings": [{"label": "pleural effusion"}]}
    assert _verdicts(text, case, "finding") == [("pericardial effusion", "unverifiable")]
    assert _verdicts(text, {**case, "mimics": ["pericardial effusion"]}, "finding") == [
        ("pericardial effusion", "contradicted")]


@given(st.sampled_from(("multiple", "several", "two", "three", "a single", "one")), st.integers(1, 3),
       st.sampled_from(("stated", "instances", "none")))
def test_counts_are_compared_only_with_a_stated_count(word: str, n: int, how: str) -> None:
    said = {"multiple": None, "several": None, "two": 2, "three": 3, "a single": 1, "one": 1}[word]
    if how == "stated":
        findings = [{"label": "nodule", "attributes": {"count": n}}]
    elif how == "instances":
        findings = [{"label": "nodule", "attributes": {}} for _ in range(n)]
    else:
        findings = [{"label": "nodule", "attributes": {}}]
    known = how == "stated" or (how == "instances" and n >= 2)
    noun = "nodule" if said == 1 else "nodules"
    got = [c for c in check_text(f"The CT shows {word} {noun} in the lung.", {"modality": "CT", "findings": findings})
           if c.kind == "count"]
    assert len(got) == 1
    if not known:
        assert got[0].verdict == "unverifiable" and got[0].note == "count not stated"
    else:
        right = n >= 2 if said is None else said == n
        assert got[0].verdict == ("supported" if right else "contradicted")


@given(st.sampled_from(("left", "right")), st.sampled_from(("left", "right")),
       st.sampled_from(("On the {s} side of the chest, at the base, there is a pleural effusion.",
                        "A pleural effusion, moderate in size and layering dependently, is seen on the {s}.",
                        "In the {s} hemithorax the costophrenic angle is blunted by a pleural effusion.")))
def test_laterality_anywhere_in_the_clause(truth: str, said: str, template: str) -> None:
    case = {"modality": "X-ray", "findings": [{"label": "pleural effusion", "attributes": {"laterality": truth}}]}
    got = [c.verdict for c in check_text(template.format(s=said), case) if c.kind == "laterality"]
    assert got == ["supported" if truth == said else "contradicted"]


@given(st.sampled_from(("Possibly a {x}.", "There may be a {x}.", "A small {x} cannot be excluded.",
                        "Questionable {x} at the apex.")),
       st.sampled_from(("pneumothorax", "nodule", "pleural effusion", "consolidation")))
def test_hedged_hallucinations_are_counted(template: str, finding: str) -> None:
    normal = {"modality": "X-ray", "body_region": "chest", "diagnosis": "normal", "findings": [],
              "meta": {"findings_complete": True}}
    text = template.format(x=finding)
    claims = check_text(text, normal)
    hedged = [c for c in claims if c.note == HEDGED_HALLUCINATION]
    assert hedged and all(c.verdict == "unverifiable" and c.hedged for c in hedged)
    assert audit(text, normal, claims=claims).n_hedged_hallucinated == len(hedged) >= 1
    has = {**normal, "diagnosis": None, "findings": [{"label": finding}]}
    assert not [c for c in check_text(text, has) if c.note == HEDGED_HALLUCINATION]  # hedging towards the truth
    # alternatives weighed against each other are reasoning, not a hedge towards one of them
    assert not [c for c in check_text(f"Differential: {finding} vs atelectasis.", normal)
                if c.note == HEDGED_HALLUCINATION]
