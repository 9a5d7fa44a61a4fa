"""Scoring and metrics end to end on items built in code, with predictions from the real baselines."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from medr2.models.base import BoxConvention, Request, Response
from medr2.records import Prediction
from medr2.score.judge import Judge
from medr2.score.metrics import compare_runs, compute_metrics, confusion_matrix
from medr2.score.scorer import score_items
from medr2.score.table import build_table
from tests.score_fixtures import make_items, predict

ITEMS = make_items()
BY_ID = {it.item_id: it for it in ITEMS}
M_KEYS = {"value", "lo", "hi", "n", "n_cases"}


def _table(spec: str, modes: Sequence[str] = ("independent",)) -> pd.DataFrame:
    preds = [p for m in modes for p in predict(spec, ITEMS, mode=m)]
    return build_table(BY_ID, score_items(BY_ID, preds, BoxConvention()))


def _metrics(spec: str, modes: Sequence[str] = ("independent",)) -> dict[str, Any]:
    return compute_metrics(_table(spec, modes), seed=0, n_resamples=200)


@pytest.fixture(scope="module")
def oracle() -> dict[str, Any]:
    return _metrics("baseline:oracle")


def _leaves(tree: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    if isinstance(tree, dict) and set(tree) >= M_KEYS:
        out = [(path, tree)]
        out += [x for k, v in tree.items() if k not in M_KEYS for x in _leaves(v, f"{path}.{k}")]
        return out
    if isinstance(tree, dict):
        return [x for k, v in tree.items() for x in _leaves(v, f"{path}.{k}")]
    return []


def test_layout(oracle: dict[str, Any]) -> None:
    assert oracle["model_key"] == "baseline:oracle"
    assert oracle["bootstrap"] == {"unit": "case", "n_resamples": 200, "level": 0.95, "seed": 0, "n_cases": 12}
    mode = oracle["modes"]["independent"]
    for key in ("overall", "stages", "tasks", "variants", "rates", "chain", "prompt_reliance", "visual_reliance",
                "evidence", "cues", "consistency", "grounding", "report_text", "yesno"):
        assert key in mode, key
    assert set(mode["stages"]) == {"1", "2", "3", "4"}
    task = mode["tasks"]["s1.modality"]
    assert task["chance"] == 0.25 and set(task["cna"]) >= M_KEYS
    leaves = _leaves(mode)
    assert len(leaves) > 60
    for path, m in leaves:
        assert set(m) >= M_KEYS, path
        if "unavailable" in m:  # METEOR without WordNet data: null with its reason, never approximated
            assert path.endswith("METEOR") and m["value"] is None
            continue
        assert m["n"] > 0 and m["n_cases"] > 0, path
    json.dumps(oracle, allow_nan=False)


def test_oracle_is_perfect_everywhere(oracle: dict[str, Any]) -> None:
    mode = oracle["modes"]["independent"]
    assert mode["overall"]["value"] == 1.0
    assert all(t["value"] == 1.0 and t["cna"]["value"] == 1.0 for t in mode["tasks"].values())
    assert all(v["acc"]["value"] == 1.0 for v in mode["variants"].values())
    assert mode["rates"]["unparsed"]["value"] == 0.0 and mode["rates"]["error"]["value"] == 0.0
    assert mode["grounding"]["all"]["mIoU"]["value"] == pytest.approx(1.0)
    assert mode["grounding"]["all"]["Acc@0.5"]["value"] == 1.0
    assert all(v["value"] == 1.0 for v in mode["chain"]["ChainAcc<=s"].values())
    assert mode["report_text"]["rougeL_f"]["value"] == 1.0
    assert mode["report_text"]["BLEU-4"]["value"] == pytest.approx(100.0)
    assert mode["prompt_reliance"]["MFR"]["value"] == 0.0
    assert mode["consistency"]["WorstCaseAcc"]["value"] == 1.0
    assert mode["evidence"]["CounterfactualAcc"]["value"] == 1.0
    assert mode["yesno"]["pair_acc"]["value"] == 1.0


def test_follow_hint_mfr_is_one_on_lured_items() -> None:
    mode = _metrics("baseline:follow-hint")["modes"]["independent"]
    pr = mode["prompt_reliance"]
    lured = sum(1 for it in ITEMS if it.lure and it.variant.split("-")[0] in ("T3", "T4", "T8"))
    assert pr["MFR"]["value"] == 1.0 and pr["MFR"]["n"] == lured
    assert pr["MFR_T3"]["value"] == 1.0 and pr["MFR_T4"]["value"] == 1.0
    assert pr["Sycophancy"]["value"] == 1.0
    assert pr["MisleadDrop"]["value"] == 1.0  # clean right, T3 always wrong
    assert mode["cues"]["DecoyCopyRate"]["value"] == 1.0
    assert mode["variants"]["T3"]["mcnemar"]["only_first"] == 12  # parent right, variant wrong on every pair


def test_blind_has_zero_image_sensitivity() -> None:
    mode = _metrics("baseline:blind", modes=("independent", "blind"))["modes"]["independent"]
    vr = mode["visual_reliance"]
    assert vr["IS"]["value"] == 0.0 and vr["IS_V1"]["value"] == 0.0 and vr["IS_V3"]["value"] == 0.0
    assert vr["VRS"]["value"] == pytest.approx(0.0)  # keeps the real image's answer exactly as often
    assert vr["BlindGap"]["value"] == 0.0  # same text in both modes: same answers


def test_accuracy_definitions_by_hand() -> None:
    """Hand-made predictions: unparsed and error count as wrong; yes/no pairs need both twins right;
    stage = macro over tasks; overall = macro over stages."""
    clean = [it for it in ITEMS if it.variant == "clean"]
    preds = []
    for i, it in enumerate(clean):
        raw: str | None = it.answer
        status = "ok"
        if it.task == "s1.modality":
            raw = "I cannot tell." if i % 2 else it.answer  # half unparsed
        if it.task == "s3.abnormal" and it.answer == "no" and it.case_id in ("case00", "case01", "case02"):
            raw = "Yes."  # one twin wrong in three pairs
        if it.task == "s4.diagnosis" and it.case_id == "case03":
            raw, status = None, "error"
        if it.form == "box":
            raw = "[{:.0f}, {:.0f}, {:.0f}, {:.0f}]".format(*it.answer_box)  # type: ignore[str-format]
        preds.append(Prediction(model_key="hand", item_id=it.item_id, mode="independent", request_hash=it.item_id,
                                raw=raw, status=status))  # type: ignore[arg-type]
    scores = score_items(BY_ID, preds, BoxConvention())
    verdicts = pd.Series([s.verdict for s in scores]).value_counts().to_dict()
    assert verdicts["error"] == 1 and verdicts["unparsed"] == 6
    m = compute_metrics(build_table(BY_ID, scores), seed=1, n_resamples=100)["modes"]["independent"]
    assert m["tasks"]["s1.modality"]["value"] == 0.5
    assert m["tasks"]["s3.abnormal"]["value"] == pytest.approx(9 / 12)
    assert m["yesno"]["item_acc"]["value"] == pytest.approx(21 / 24)
    assert m["tasks"]["s4.diagnosis"]["value"] == pytest.approx(11 / 12)
    assert m["rates"]["unparsed"]["value"] == pytest.approx(6 / len(clean))
    assert m["rates"]["error"]["value"] == pytest.approx(1 / len(clean))
    stage4 = (11 / 12 + 1.0) / 2  # s4.diagnosis, s4.multilabel; the report (text) is not in the macro
    assert m["stages"]["4"]["value"] == pytest.approx(stage4)
    assert m["overall"]["value"] == pytest.approx((0.5 + 1.0 + 9 / 12 + stage4) / 4)
    cna = m["tasks"]["s1.modality"]["cna"]["value"]
    assert cna == pytest.approx((0.5 - 0.25) / 0.75)
    chain = m["chain"]
    # chains: s1 (half unparsed) -> box -> yes twin (always right) -> diagnosis (case03 error)
    assert chain["ChainAcc<=s"]["1"]["value"] == 0.5
    assert chain["LGR_s"]["2"]["value"] == 1.0  # the box is right although s1 was wrong
    # s1 is unparsed in the odd cases; case03 (odd) also has an error at s4
    assert chain["CondAcc_s"]["4"]["value"] == 1.0 and chain["CondAcc_s"]["4"]["n"] == 6
    assert chain["LGR_s"]["4"]["value"] == pytest.approx(5 / 6)


def test_box_scores_use_the_adapters_convention() -> None:
    it = next(i for i in ITEMS if i.form == "box")
    x1, y1, x2, y2 = it.answer_box  # type: ignore[misc]
    k = [round(x1 / W * 1000), round(y1 / H * 1000), round(x2 / W * 1000), round(y2 / H * 1000)]
    raw = f"<|box_start|>({k[0]},{k[1]}),({k[2]},{k[3]})<|box_end|>"
    p = Prediction(model_key="q", item_id=it.item_id, mode="independent", request_hash="h", raw=raw, status="ok")
    s = score_items(BY_ID, [p], BoxConvention("thousand"))[0]
    assert s.verdict == "correct" and s.iou == pytest.approx(1.0, abs=0.02)
    # the same numbers read as pixels lie outside the 100x80 image: unparsed with the reason (not clipped to a
    # wrong box, and never reinterpreted from their magnitudes)
    s_px = score_items(BY_ID, [p], BoxConvention("pixel"))[0]
    assert s_px.verdict == "unparsed" and s_px.iou == 0.0 and s_px.reason is not None and "outside" in s_px.reason
    bad = score_items(BY_ID, [p.model_copy(update={"raw": "somewhere in the liver"})], BoxConvention())[0]
    assert bad.verdict == "unparsed" and bad.iou == 0.0


W, H = 100, 80


class RuleJudge:
    """A user-supplied Python model (DESIGN §7 'own Python callable'): reads 'second' as option B."""

    key = "judge:rule"
    box_convention = BoxConvention()

    def __init__(self) -> None:
        self.calls = 0

    def settings(self) -> dict[str, Any]:
        return {}

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        self.calls += len(requests)
        out = []
        for r in requests:
            text = r.messages[-1].parts[0].text or ""
            response = text.split("<<<", 1)[1].split(">>>", 1)[0]
            if "Candidate report" in text:
                out.append(Response("ok", text="CORRECT"))
            elif "second" in response:
                out.append(Response("ok", text="B"))
            else:
                out.append(Response("ok", text="I do not know"))
        return out

    def close(self) -> None:
        return None


def test_judge_reads_what_rules_cannot_and_is_cached(tmp_path: Path) -> None:
    mcq = next(i for i in ITEMS if i.task == "s1.modality" and i.variant == "clean")
    report = next(i for i in ITEMS if i.form == "text" and i.variant == "clean")
    preds = [
        Prediction(model_key="m", item_id=mcq.item_id, mode="independent", request_hash="1",
                   raw="I'd pick the second one listed.", status="ok"),
        Prediction(model_key="m", item_id=mcq.item_id, mode="chain-own", request_hash="2",
                   raw="Hard to say.", status="ok"),
        Prediction(model_key="m", item_id=report.item_id, mode="independent", request_hash="3",
                   raw="Unrelated words entirely.", status="ok"),
    ]
    adapter = RuleJudge()
    judge = Judge(adapter, tmp_path)
    s = score_items(BY_ID, preds, BoxConvention(), judge=judge)
    assert (s[0].method, s[0].parsed) == ("judge", "B")
    assert s[0].verdict == ("correct" if mcq.answer == "B" else "wrong")
    assert (s[1].method, s[1].verdict) == ("rule", "unparsed")  # an unreadable judge reply is not a guess
    assert (s[2].method, s[2].verdict) == ("judge", "correct")
    assert adapter.calls == 3
    again = score_items(BY_ID, preds, BoxConvention(), judge=Judge(RuleJudge(), tmp_path))
    assert [x.model_dump() for x in again] == [x.model_dump() for x in s]
    cached = Judge(adapter, tmp_path)
    score_items(BY_ID, preds, BoxConvention(), judge=cached)
    assert adapter.calls == 3  # all three replies came from the cache


def test_confusion_matrix_and_model_comparison() -> None:
    oracle, blind = _table("baseline:oracle"), _table("baseline:blind")
    cm = confusion_matrix(blind, "s4.diagnosis")
    assert sum(map(sum, cm["counts"])) == 12 and cm["predicted"][-2:] == ["unparsed", "error"]
    cm_o = confusion_matrix(oracle, "s4.diagnosis")
    assert all(cm_o["counts"][i][cm_o["predicted"].index(lab)] == 3 for i, lab in enumerate(cm_o["labels"]))
    cmp = compare_runs(oracle, blind, seed=0, n_resamples=200)["modes"]["independent"]
    blind_m = compute_metrics(blind, seed=0, n_resamples=10)["modes"]["independent"]
    assert cmp["overall"]["value"] == pytest.approx(1.0 - blind_m["overall"]["value"])
    assert cmp["overall"]["lo"] > 0
    assert cmp["mcnemar"]["only_second"] == 0 and cmp["mcnemar"]["p"] < 0.05


def test_same_seed_same_metrics() -> None:
    t = _table("baseline:random")
    a = json.dumps(compute_metrics(t, seed=3, n_resamples=100), sort_keys=True)
    b = json.dumps(compute_metrics(t.sample(frac=1.0, random_state=0), seed=3, n_resamples=100), sort_keys=True)
    assert a == b
