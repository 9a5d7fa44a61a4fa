"""The rationale claim checker (issue 19): hand-labelled corpus precision/recall and rule unit tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from medr2.scoring.claims import Claim, audit, check_rationale, check_text, rationale_parts

CORPUS = Path(__file__).parent / "data" / "rationale_corpus.jsonl"
HELDOUT = Path(__file__).parent / "data" / "rationale_heldout.jsonl"
HELDOUT2 = Path(__file__).parent / "data" / "rationale_heldout2.jsonl"  # its errors drove the claims-v2 fixes
HELDOUT3 = Path(__file__).parent / "data" / "rationale_heldout3.jsonl"  # its misses named the claims-v4 kinds
HELDOUT4 = Path(__file__).parent / "data" / "rationale_heldout4.jsonl"  # its misses named the claims-v5 kinds
HELDOUT5 = Path(__file__).parent / "data" / "rationale_heldout5.jsonl"  # its misses named the claims-v6 kinds
HELDOUT6 = Path(__file__).parent / "data" / "rationale_heldout6.jsonl"  # its errors named the claims-v7 kinds
HELDOUT7 = Path(__file__).parent / "data" / "rationale_heldout7.jsonl"  # its errors named the claims-v8 kinds
HELDOUT8 = Path(__file__).parent / "data" / "rationale_heldout8.jsonl"  # its errors named the claims-v9 kinds
HELDOUT9 = Path(__file__).parent / "data" / "rationale_heldout9.jsonl"  # its errors named the claims-v10 kinds
HELDOUT10 = Path(__file__).parent / "data" / "rationale_heldout10.jsonl"  # written blind; fresh for claims-v10


def _rows(path: Path = CORPUS) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _overlaps(c: Claim, span: dict[str, Any]) -> bool:
    return c.source == "content" and c.start < span["end"] and span["start"] < c.end


def corpus_scores(path: Path = CORPUS) -> dict[str, float]:
    tp = fp = found = gold = hedged = noted = 0
    rows = _rows(path)
    for row in rows:
        claims = [c for c in check_rationale(row["raw"], row["case"]) if c.verdict == "contradicted"]
        spans = row["claims"]
        gold += len(spans)
        for c in claims:
            if any(_overlaps(c, s) for s in spans):
                tp += 1
            else:
                fp += 1
        found += sum(any(_overlaps(c, s) for c in claims) for s in spans)
        if row.get("hedged"):  # hedged hallucinations (held-out 4 marks them): noted as such?
            every = check_rationale(row["raw"], row["case"])
            hedged += len(row["hedged"])
            noted += sum(any(_overlaps(c, s) and c.note == "hedged_hallucination" for c in every)
                         for s in row["hedged"])
    return {"precision": tp / (tp + fp), "recall": found / gold, "tp": tp, "fp": fp, "gold": gold,
            "n": len(rows), "hedged": hedged, "hedged_noted": noted}


def test_corpus_precision_on_contradicted() -> None:
    rows = _rows()
    assert len(rows) >= 150
    assert {r["style"] for r in rows} >= {"qwen3-thinking", "gpt-5", "gemini", "deepseek-r1", "llava-med",
                                          "markdown", "chinese"}
    got = corpus_scores()
    print(f"rationale corpus: {got}")
    assert got["precision"] >= 0.95, got
    assert got["recall"] >= 0.9, got  # measured 0.99 (claims-v5, v6; docs/metrics.md); a floor so a regression fails


def test_heldout_rationales_reported() -> None:
    """Rationales written after the rules were tuned (span-exact scoring, no adjudication): reported in
    docs/metrics.md; floors only catch a regression."""
    got = corpus_scores(HELDOUT)
    print(f"held-out rationales: {got}")
    assert got["n"] >= 40 and got["precision"] >= 0.8 and got["recall"] >= 0.8, got  # measured 0.85 / 0.88 (v4 and v5)


def test_fresh_heldout_rationales_reported() -> None:
    """The third held-out set, written and labelled before the checker ran on it, after the rule changes the
    second set prompted (docs/metrics.md reports both); floors only catch a regression."""
    styles = {"qwen3-thinking", "gpt-5", "gemini", "deepseek-r1", "llava-med", "markdown", "chinese"}
    for path, n in ((HELDOUT2, 70), (HELDOUT3, 63)):
        rows = _rows(path)
        assert len(rows) == n and {r["style"] for r in rows} == styles
    second, third = corpus_scores(HELDOUT2), corpus_scores(HELDOUT3)
    print(f"held-out 2 (after its fixes): {second}\nheld-out 3 (fresh): {third}")
    assert third["precision"] >= 0.95 and third["recall"] >= 0.9, third  # claims-v4 and v5: 40/41, 40/43
    assert second["precision"] >= 0.95 and second["recall"] >= 0.95, second  # claims-v4 and v5: 41/43, 41/42


# the sets written and labelled before a checker version (issue 39), scored once before and once after it
# (docs/metrics.md), nothing tuned on them: (set, module of its source, fewest rows, floors of precision / recall,
# fewest hedged hallucinations noted). Floors only catch a regression.
LATER_HELDOUT = [
    (HELDOUT4, "rationale_heldout4_source", 60, 0.95, 0.9, 12),  # claims-v5: 72/72, 72/77 (v4: 61/62, 61/77); 12/13
    (HELDOUT5, "rationale_heldout5_source", 80, 0.95, 0.85, 6),  # claims-v6: 87/89, 87/97 (v5: 68/69, 68/97); 6/7
    # (held-out 5 on claims-v7: 88/89, 88/97; on claims-v10: 93/94, 93/97)
    # a development set since claims-v7: 111/128, 110/153 (v6: 100/128, 99/153); 9/18. Its 7 cases with incomplete
    # finding lists reach their figures only with explicit absence (Case.absent), so these floors are what this
    # checker measures without it
    (HELDOUT6, "rationale_heldout6_source", 160, 0.85, 0.7, 8),
    # (held-out 6 on claims-v8: 118/121, recall 0.75; on claims-v10: 121/124, 0.784)
    # a development set since claims-v8: 108/111, recall 0.675 (v7: 105/120, 0.662); 7/14
    (HELDOUT7, "rationale_heldout7_source", 140, 0.95, 0.65, 6),
    # (held-out 7 on claims-v9: 111/114, recall 0.695; on claims-v10: 116/119, 0.728)
    # fresh for claims-v8 (written blind, nothing tuned on it): 100/114, recall 0.61 (97/159); 9/15 (v5: 83/113,
    # 0.51; v7 with explicit absence: 100/115, 0.61). Issue 39's goal (0.90 / <= 1 % false) is not met there.
    # A development set since claims-v9: 114/118, recall 0.698 (111/159); 9/15 (claims-v10: 120/124, 0.730)
    (HELDOUT8, "rationale_heldout8_source", 140, 0.95, 0.67, 8),
    # fresh for claims-v9 (written and labelled blind, nothing tuned on it; two more styles: claude, medgemma):
    # 90/109, recall 0.627 (89/142); false contradicted 19 of 1,091 claims (v8: 86/106, 0.599; 20 of 1,085); 7/23.
    # Issue 39's goal (0.90 / <= 1 % false) is not met there. After issue 40's merges: 91/111, 0.634, 20 of 1,096.
    # A development set since claims-v10: 110/112, recall 0.768 (109/142); false contradicted 2 of 1,138 claims;
    # 10/23 (before: 91/111, 0.634, 20 of 1,096; 7/23)
    (HELDOUT9, "rationale_heldout9_source", 170, 0.95, 0.74, 9),
    # fresh for claims-v10 (written and labelled blind on 2026-12-07, nothing tuned on it; 7 new incomplete-list
    # cases: KiTS21, ACDC, BreakHis, PI-CAI, CQ500, VinDr-SpineXR, RFMiD): 89/101, recall 0.613 (87/142); false
    # contradicted 12 of 1,015 claims; 11/15 (claims-v9, measured on it before v10 merged: 82/95, 0.556, 13 of 992;
    # 9/15). Issue 39's goal (0.90 / <= 1 % false) is not met there.
    (HELDOUT10, "rationale_heldout10_source", 190, 0.85, 0.58, 10),
]


@pytest.mark.parametrize(("path", "source", "rows_min", "precision", "recall", "hedged"), LATER_HELDOUT,
                         ids=[f"held-out {k}" for k in range(4, 11)])
def test_later_heldout_rationales_reported(path: Path, source: str, rows_min: int, precision: float, recall: float,
                                           hedged: int) -> None:
    """Held-out 4 (before claims-v4), held-out 5 (before claims-v5), held-out 6 (before claims-v7), held-out 7
    (before claims-v8), held-out 8 (fresh for claims-v8, a development set since claims-v9), held-out 9 (fresh for
    claims-v9, a development set since claims-v10) and held-out 10 (fresh for claims-v10): every style, the rows
    their source builds, and the checker's figures above their floors."""
    import importlib

    rows = _rows(path)
    assert len(rows) >= rows_min and {r["style"] for r in rows} >= {
        "qwen3-thinking", "gpt-5", "gemini", "deepseek-r1", "llava-med", "markdown", "chinese"}
    assert rows == importlib.import_module(f"tests.data.{source}").build()
    got = corpus_scores(path)
    print(f"{path.name}: {got}")
    assert got["precision"] >= precision and got["recall"] >= recall, got
    assert got["hedged_noted"] >= hedged, got


def _vv(text: str, case: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(c.kind, c.text.lower(), c.verdict) for c in check_text(text, case)]


def test_error_classes_found_on_the_second_heldout_set() -> None:
    """Rules added for the second held-out set's false contradictions (general forms, not its sentences)."""
    chest = {**CXR, "findings": [], "diagnosis": "pneumothorax"}
    # "absent" modifies the noun after it, not a later finding
    assert ("finding", "pneumothorax", "supported") in _vv(
        "Absent vascular markings peripherally, in keeping with a pneumothorax.", chest)
    assert ("finding", "pleural effusion", "contradicted") in _vv("Pleural effusion is absent.", CXR)
    # a heading's colon followed by "no X": the "no" belongs to X
    assert ("modality", "x-ray", "supported") in _vv("Chest X-ray: no focal consolidation.", CXR)
    # (claims-v7: a row's label marks its value, so the claim spans both)
    assert ("finding", "pleural effusion: none", "contradicted") in _vv("Pleural effusion: none.", CXR)
    # 正常 said of a part or a measure is no normal study; said of the image it is
    assert all(v != "contradicted" for _, _, v in _vv("左侧胸腔积液。纵隔结构正常。", CXR))
    assert ("diagnosis", "胸片正常", "contradicted") in _vv("胸片正常。", CXR)
    # a size cut-off is no measurement; a statement taken back is not asserted
    nodule = {"modality": "CT", "findings": [{"label": "nodule", "attributes": {"size_mm": 14}}]}
    assert [(t, v) for k, t, v in _vv("This nodule is 14 mm. Under 3 cm, so a nodule.", nodule)
            if k == "size"] == [("14 mm", "supported")]
    assert [(t, v) for k, t, v in _vv("A nodule of 3 cm.", nodule) if k == "size"] == [("3 cm", "contradicted")]
    assert ("plane", "lateral", "contradicted") not in _vv("Lateral view... actually it is a PA view.", CXR)


CXR = {"modality": "X-ray", "plane": "PA", "body_region": "chest", "structures": ["heart", "lung"],
       "findings": [{"label": "pleural effusion", "attributes": {"laterality": "left", "size_mm": 40}}],
       "diagnosis": "pleural effusion", "severity": "moderate", "meta": {"findings_complete": True}}
NORMAL_MRI = {"modality": "MRI", "plane": "axial", "sequence": "FLAIR", "body_region": "head", "findings": [],
              "diagnosis": "normal", "meta": {"findings_complete": True}}


def _verdicts(text: str, case: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(c.kind, c.text, c.verdict) for c in check_text(text, case)]


def test_spans_point_at_the_mention() -> None:
    text = "PA chest radiograph. There is a right pleural effusion."
    claims = check_text(text, CXR)
    assert claims and all(text[c.start:c.end] == c.text for c in claims)
    assert ("laterality", "right", "contradicted") in _verdicts(text, CXR)
    assert ("finding", "pleural effusion", "supported") in _verdicts(text, CXR)
    assert ("plane", "PA", "supported") in _verdicts(text, CXR)


def test_negation_decides_present_and_absent_findings() -> None:
    got = _verdicts("No pneumothorax. No pleural effusion is seen.", CXR)
    assert ("finding", "pneumothorax", "supported") in got  # denied, and the case has none
    assert ("finding", "pleural effusion", "contradicted") in got  # denied, but the case has it
    got = _verdicts("There is no mass and no abnormal signal; the brain appears normal.", NORMAL_MRI)
    assert [v for _, _, v in got if v == "contradicted"] == []
    assert ("finding", "mass", "supported") in got
    missed = [c for c in check_text("The pleural effusion is absent.", CXR) if c.kind == "finding"]
    assert missed[0].denied and missed[0].verdict == "contradicted" and missed[0].note == "missed_finding"


def test_hedges_questions_and_textbook_statements_are_not_claims() -> None:
    for text in ("A small pneumothorax cannot be excluded.", "Is there a pneumothorax?",
                 "The question asks whether there is a pneumothorax.",
                 "A pneumothorax would show a pleural line.", "Pneumothorax typically appears at the apex.",
                 "Options: A. pneumothorax B. effusion"):
        got = [c for c in check_text(text, CXR) if c.value == "pneumothorax"]
        assert got and all(c.verdict == "unverifiable" for c in got), text
    strong = [c for c in check_text("Findings are consistent with a pneumothorax.", CXR) if c.kind == "finding"]
    assert strong[0].hedged and strong[0].verdict == "contradicted"


def test_wrong_modality_sequence_plane_and_diagnosis() -> None:
    got = _verdicts("Axial T1-weighted CT image showing a glioma.", NORMAL_MRI)
    assert ("modality", "CT", "contradicted") in got
    assert ("sequence", "T1-weighted", "contradicted") in got
    assert ("plane", "Axial", "supported") in got
    assert ("diagnosis", "glioma", "contradicted") in got
    assert ("sequence", "FLAIR", "supported") in _verdicts("This FLAIR MRI is normal.", NORMAL_MRI)


def test_chinese_rationale() -> None:
    got = _verdicts("胸部X线片，右侧胸腔积液，未见气胸。", CXR)
    assert ("modality", "X线", "supported") in got
    assert ("laterality", "右", "contradicted") in got
    assert ("finding", "气胸", "supported") in got
    assert ("finding", "胸腔积液", "contradicted") in _verdicts("未见胸腔积液。", CXR)


def test_count_size_and_attributes() -> None:
    case = {"modality": "CT", "body_region": "chest", "findings": [
        {"label": "nodule", "attributes": {"laterality": "left", "size_mm": 6, "margin": "spiculated"}},
        {"label": "nodule", "attributes": {"laterality": "left", "size_mm": 8}}]}
    got = _verdicts("A solitary left nodule, 3 cm, with smooth margins.", case)
    assert ("count", "solitary", "contradicted") in got
    assert ("size", "3 cm", "contradicted") in got
    assert ("attribute", "smooth", "contradicted") in got
    got = _verdicts("Two left nodules of 8 mm with spiculated margins.", case)
    assert ("count", "Two", "supported") in got and ("size", "8 mm", "supported") in got
    assert ("attribute", "spiculated", "supported") in got


def test_rationale_parts_reads_reasoning_and_content_before_the_answer() -> None:
    raw = "<think>There is a right pleural effusion.</think>\nThe PA film shows it.\nFinal answer: B. pneumonia"
    parts = dict(rationale_parts(raw, "Separate reasoning: the modality is a CT."))
    assert "pneumonia" not in parts["content"] and "right pleural effusion" in parts["content"]
    claims = check_rationale(raw, CXR, reasoning="Separate reasoning: the modality is a CT.")
    assert {c.source for c in claims} == {"content", "reasoning"}
    assert any(c.source == "reasoning" and c.kind == "modality" and c.verdict == "contradicted" for c in claims)
    assert raw[claims[-1].start:claims[-1].end] == claims[-1].text or claims[-1].source == "reasoning"
    a = audit(raw, CXR)
    assert a.n_contradicted == 1 and a.n_missed == 0 and a.n_sentences == 2 and a.n_checkable_sentences == 2
    assert rationale_parts(None) == [] and check_rationale("", CXR) == []


@pytest.mark.parametrize("raw", ["A,B,C,D,E", "A, C, D, E", "A C D E", "(A), (B), (C) and (D)", "A; B; C; D.",
                                 "A/B/C/D", "A, B, C & D"])
def test_option_letters_of_a_multi_select_answer_are_no_rationale(raw: str) -> None:
    """Four or more option letters are an answer, not a rationale: nothing to audit (they were audited as a
    one-sentence rationale, so a model answering multi-select items so entered the rationale metrics)."""
    assert rationale_parts(raw) == [] and check_rationale(raw, CXR) == []
    assert audit(raw, CXR).n_sentences == 0


def test_letters_inside_a_rationale_are_still_audited() -> None:
    raw = "A, B and C are seen: there is a right pleural effusion. Answer: A, B, C"
    assert [s for s, _ in rationale_parts(raw)] == ["content"]
    assert any(c.kind == "finding" for c in check_rationale(raw, CXR))


@pytest.mark.parametrize("case", [CXR, NORMAL_MRI, {"modality": "CT"}])
def test_never_raises_and_spans_are_exact(case: dict[str, Any]) -> None:
    from hypothesis import given, settings, strategies as st

    words = st.sampled_from(["no", "left", "right", "effusion", "CT", "MRI", "2 cm", "nodule", "未见", "积液", ".",
                             ",", "not", "with", "without", "A.", "?", "likely", "mass", "normal", "T2-weighted"])

    @settings(deadline=None, max_examples=60)
    @given(st.lists(st.one_of(words, st.text(max_size=6)), max_size=25))
    def run(tokens: list[str]) -> None:
        text = " ".join(tokens)
        for c in check_text(text, case):
            assert text[c.start:c.end] == c.text
            assert c.verdict in ("supported", "contradicted", "unverifiable")

    run()


def test_corpus_files_match_their_source() -> None:
    from tests.data.rationale_corpus_source import HELDOUT as HELD, build

    assert _rows(CORPUS) == build() and _rows(HELDOUT) == build(HELD, "h")
    for row in _rows(CORPUS) + _rows(HELDOUT):  # each hand-marked span is where the label says
        assert all(row["raw"][s["start"]:s["end"]] == s["text"] for s in row["claims"])
