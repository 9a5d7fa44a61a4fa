"""Short free-text answers (text items of any task but a report): normalised exact match is the verdict,
token F1 / recall are kept, and the task counts in accuracy; reports keep the report metrics."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, strategies as st

from medr2 import BoxConvention, Item, Prediction
from medr2.records import REPORT_TASKS
from medr2.scoring.judge import short_answer_prompt, text_prompt
from medr2.scoring.metrics import compute_metrics
from medr2.scoring.scorer import score_items
from medr2.scoring.shortanswer import normalize_answer, short_answer_metrics
from medr2.scoring.table import build_table
from medr2.scoring.textmetrics import item_text_metrics
from tests.score_fixtures import _item


def test_normalisation_examples() -> None:
    assert normalize_answer("  The Liver. ") == "liver"
    assert normalize_answer("T2-weighted") == normalize_answer("t2 weighted") == "t2 weighted"
    assert normalize_answer("An X-ray!") == "x ray"
    assert normalize_answer("theatre") == "theatre"  # only whole-word articles go


@given(st.text(max_size=40))
def test_normalisation_is_idempotent_and_metrics_bounded(s: str) -> None:
    n = normalize_answer(s)
    assert normalize_answer(n) == n
    m = short_answer_metrics(s, "left lung")
    assert set(m) == {"exact", "token_f1", "token_recall"}
    assert all(0.0 <= v <= 1.0 for v in m.values())
    assert m["exact"] in (0.0, 1.0)
    assert short_answer_metrics(s, s)["exact"] == 1.0


def test_exact_match_where_rouge_would_accept_the_wrong_side() -> None:
    # ROUGE-L F1 of "right lung" against "left lung" is 0.5: a report-style threshold would call it right
    assert item_text_metrics("right lung", "left lung")["rougeL_f"] == pytest.approx(0.5)
    m = short_answer_metrics("right lung", "left lung")
    assert m == {"exact": 0.0, "token_f1": pytest.approx(0.5), "token_recall": pytest.approx(0.5)}
    assert short_answer_metrics("The left lung.", "left lung") == {"exact": 1.0, "token_f1": 1.0, "token_recall": 1.0}
    assert short_answer_metrics("left lung and liver", "left lung")["token_recall"] == 1.0


def _open(case: int, answer: str, **kw: Any) -> Item:
    return _item(case_id=f"case{case}", stage=3, task="vqa.open", form="text", chance=0.0,
                 question="Which side is abnormal?", answer=answer, **kw)


def _pred(it: Item, raw: str | None, status: str = "ok") -> Prediction:
    return Prediction(model_key="m", item_id=it.item_id, mode="independent", request_hash=it.item_id,
                      raw=raw, status=status, error=None if status == "ok" else "HTTP 500")


def test_scores_and_metrics_of_short_answers() -> None:
    items = [_open(0, "left lung"), _open(1, "liver"), _open(2, "CT"), _open(3, "yes, enlarged")]
    report = _item(case_id="case0", stage=4, task="s4.report", form="text", chance=0.0,
                   question="Write the report.", answer="Small left pleural effusion. No pneumothorax.")
    by_id = {it.item_id: it for it in [*items, report]}
    preds = [_pred(items[0], "Right lung."), _pred(items[1], "The liver"), _pred(items[2], "   "),
             _pred(items[3], None, "error"), _pred(report, "Small left pleural effusion.")]
    scores = score_items(by_id, preds, BoxConvention())
    assert [s.verdict for s in scores] == ["wrong", "correct", "unparsed", "error", "correct"]
    assert scores[0].text_metrics["token_f1"] == pytest.approx(0.5)
    assert scores[1].parsed == "The liver" and scores[1].text_metrics["exact"] == 1.0
    assert "rougeL_f" in scores[4].text_metrics and "exact" not in scores[4].text_metrics
    mode = compute_metrics(build_table(by_id, scores), seed=0, n_resamples=50)["modes"]["independent"]
    assert mode["tasks"]["vqa.open"]["value"] == pytest.approx(0.25)  # 1 of 4, unparsed and error count wrong
    assert mode["stages"]["3"]["value"] == pytest.approx(0.25)  # a short-answer task counts in accuracy
    assert "4" not in mode["stages"]  # the report does not
    sa = mode["short_answer"]
    assert sa["exact"]["value"] == pytest.approx(0.25) and sa["exact"]["n"] == 4
    assert sa["token_f1"]["value"] == pytest.approx((0.5 + 1.0) / 4)
    assert mode["report_text"]["rougeL_f"]["n"] == 1  # only the report item


def test_judge_prompts_follow_the_task() -> None:
    it = _open(0, "left lung")
    assert "Reference answer: <<<left lung>>>" in short_answer_prompt(it, "right")
    assert "Reference report" in text_prompt(it, "right")


@given(st.text(max_size=30), st.text(max_size=30))
def test_lmms_eval_export_scores_short_answers_like_medr2(hyp: str, ref: str) -> None:
    """The export's self-contained ``utils.py`` applies medr2's normalised exact match to short answers."""
    from medr2.interop.exporters import lmms_eval_utils as utils

    doc = {"form": "text", "answer": ref}
    assert utils.medr2_score(doc, hyp) == short_answer_metrics(hyp.strip(), ref)["exact"]
    assert set(REPORT_TASKS) == utils.REPORT_TASKS


def test_an_article_only_reference_is_not_matched_by_another_article() -> None:
    """A reference that is only an article ("A", e.g. a grade) keeps its word: "The" is not an exact match,
    "a" / "A." is; articles still drop in any answer with other words."""
    assert normalize_answer("A") == "a" and normalize_answer("The") == "the"
    assert short_answer_metrics("The", "A")["exact"] == 0.0
    assert short_answer_metrics("A.", "A")["exact"] == 1.0
    assert short_answer_metrics("grade A", "A")["exact"] == 0.0
    assert normalize_answer("a liver") == "liver"
    it = _open(0, "A")
    scores = score_items({it.item_id: it}, [_pred(it, "The")], BoxConvention())
    assert (scores[0].verdict, scores[0].text_metrics["exact"]) == ("wrong", 0.0)


@pytest.mark.parametrize("reference", ["A", "the", ".", "liver"])
def test_an_unparsed_answer_never_scores_an_exact_match(reference: str) -> None:
    """Whatever the reference (one that normalises to almost nothing included), an answer that was not read
    scores 0 on exact, token F1 and recall, in the score and in the metrics."""
    it = _open(0, reference)
    other = _open(1, "liver")
    by_id = {it.item_id: it, other.item_id: other}
    scores = score_items(by_id, [_pred(it, "   "), _pred(other, None, "error")], BoxConvention())
    assert [s.verdict for s in scores] == ["unparsed", "error"]
    assert scores[0].text_metrics == {"exact": 0.0, "token_f1": 0.0, "token_recall": 0.0}
    assert short_answer_metrics(None, reference) == {"exact": 0.0, "token_f1": 0.0, "token_recall": 0.0}
    sa = compute_metrics(build_table(by_id, scores), seed=0, n_resamples=10)["modes"]["independent"]["short_answer"]
    assert sa["exact"]["value"] == 0.0 and sa["token_f1"]["value"] == 0.0 and sa["exact"]["n"] == 2
