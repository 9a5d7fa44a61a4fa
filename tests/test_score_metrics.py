"""Scoring and metrics end to end on items built in code, with predictions from the real baselines."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from medr2 import BadInput, BoxConvention, Prediction, Request, Response
from medr2.scoring.judge import Judge
from medr2.scoring.metrics import compare_runs, compute_metrics, confusion_matrix
from medr2.scoring.scorer import score_items
from medr2.scoring.table import build_table
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
    assert oracle["bootstrap"] == {"unit": "case", "n_units": 12, "n_resamples": 200, "level": 0.95, "seed": 0,
                                   "n_cases": 12}
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
    assert mode["attacks"]["ASR"]["value"] == 0.0 and mode["attacks"]["ASR"]["n"] > 0
    assert all(s["acc"]["value"] == 1.0 for curve in mode["degradation"].values() for s in curve.values())
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
            raw = "Perhaps." if i % 2 else it.answer  # half unparsed ("I cannot tell." is an abstention)
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
    """A user-supplied Python model (docs/running.md: your own Python function): reads 'second' as option B."""

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


# -- paired definitions (issue 14, items 9-11 and 15) ---------------------------------------------------

def _hand(items: Sequence[Any], answer: Any) -> pd.DataFrame:
    """Score ``answer(item) -> raw`` for ``items`` (``None``: no prediction stored for that item)."""
    by_id = {it.item_id: it for it in items}
    preds = [Prediction(model_key="hand", item_id=it.item_id, mode="independent", request_hash=it.item_id,
                        raw=raw, status="ok") for it in items if (raw := answer(it)) is not None]
    return build_table(by_id, score_items(by_id, preds, BoxConvention()))


def _box_text(box: Sequence[float]) -> str:
    return "[" + ", ".join(f"{v:g}" for v in box) + "]"


def _case_no(it: Any) -> int:
    return int(it.case_id[4:])


def test_pri_and_drawn_vs_coords_gap_are_paired_by_parent() -> None:
    """A model that ignores hints and cues (same answer on T2, T3, V5, V7 as on the clean parent: right in
    even cases) with some T3 / V7 answers missing, so the two variants cover different items: unpaired
    accuracies differ (0.5 vs 1/3), the paired differences are exactly 0 on the parents both have."""
    dropped = {"case00", "case02", "case04"}  # T3 and V7 of three cases whose parent is right

    def answer(it: Any) -> str | None:
        if it.task != "s4.diagnosis" or it.variant not in ("clean", "T2", "T3", "V5", "V7"):
            return it.answer if it.form != "box" else _box_text(it.answer_box)
        if it.variant in ("T3", "V7") and it.case_id in dropped:
            return None
        return it.answer if _case_no(it) % 2 == 0 else "ABCD"[("ABCD".index(it.answer) + 1) % 4]

    m = compute_metrics(_hand(ITEMS, answer), seed=0, n_resamples=200)["modes"]["independent"]
    assert m["variants"]["T2"]["acc"]["value"] == 0.5 and m["variants"]["T3"]["acc"]["value"] == pytest.approx(3 / 9)
    for block, key, a, b in (("prompt_reliance", "PRI", "T2", "T3"), ("cues", "DrawnVsCoordsGap", "V5", "V7")):
        gap = m[block][key]
        assert gap["value"] == 0.0 and gap["lo"] == 0.0 and gap["hi"] == 0.0, key
        assert gap["n"] == 9 and gap["n_cases"] == 9  # the parents both variants share
        assert gap[f"acc_{a}"]["value"] == gap[f"acc_{b}"]["value"] == pytest.approx(3 / 9)
        assert gap["cluster_test"]["p"] == 1.0 and gap["mcnemar"]["n_pairs"] == 9


def _probe_items() -> list[Any]:
    """The fixture plus V1/V2/V3 probes of each box item and each report, and a V4 of each box item."""
    from tests.score_fixtures import _variant

    extra = []
    for it in ITEMS:
        if it.variant == "clean" and (it.form == "box" or it.task == "s4.report"):
            for code in ("V1", "V2", "V3"):
                extra.append(_variant(it, code, image=f"images/{code}-{it.item_id}.png",
                                      meta={"scoring": "probe"}))
            if it.form == "box":
                extra.append(_variant(it, "V4", image=f"images/v4-{it.item_id}.png",
                                      meta={"scoring": "exact", "counterfactual": True}))
    return [*ITEMS, *extra]


def _parent_answer(it: Any) -> str:
    """Right in even cases, wrong in odd ones, for every form."""
    right = _case_no(it) % 2 == 0
    if it.form == "box":
        x1, y1, x2, y2 = it.answer_box
        return _box_text(it.answer_box if right else (x1 + 40, y1 + 25, x2 + 40, y2 + 25))
    if it.form == "text":
        return it.answer if right else "Nothing to report."
    if it.form == "yesno":
        return it.answer if right else ("no" if it.answer == "yes" else "yes")
    if it.form == "multi":
        return it.answer if right else "D"
    return it.answer if right else "ABCD"[("ABCD".index(it.answer) + 1) % 4]


def test_probe_gaps_are_zero_for_a_model_that_ignores_the_image() -> None:
    """The blank / other-case / other-modality image answered exactly as the real one, for MCQ, box and report
    items: BlankGap = VRS = ModalityGap = 0 and IS = 0 (boxes compared by IoU; reports left out, since no
    "same answer" is defined for them)."""
    items = _probe_items()
    by_id = {it.item_id: it for it in items}

    def answer(it: Any) -> str:
        return _parent_answer(by_id[it.parent_id] if it.variant in ("V1", "V2", "V3", "V4") else it)

    m = compute_metrics(_hand(items, answer), seed=0, n_resamples=200)["modes"]["independent"]
    vr = m["visual_reliance"]
    for key in ("BlankGap", "VRS", "ModalityGap"):
        assert vr[key]["value"] == 0.0 and vr[key]["lo"] == 0.0 and vr[key]["hi"] == 0.0, key
        assert vr[key]["n"] == 24 and vr[key]["n_cases"] == 12  # 12 MCQ + 12 box pairs, no report pair
        assert vr[key]["real_acc"]["value"] == vr[key]["kept_rate"]["value"] == 0.5
    for key in ("IS_V1", "IS", "IS_V3"):
        assert vr[key]["value"] == 0.0 and vr[key]["n"] == 24, key
    assert m["evidence"]["ES"]["value"] == 0.0  # V4 box = the parent's box


def test_image_and_evidence_sensitivity_compare_boxes_by_iou() -> None:
    """A box one pixel off the model's own clean box is the same answer (IoU >= 0.5); a box moved off it is
    a changed one. As strings both differ."""
    items = _probe_items()
    by_id = {it.item_id: it for it in items}

    def answer(it: Any) -> str:
        if it.form == "box":  # the clean box right; V1 / V4 one pixel off it, V2 / V3 far away from it
            x1, y1, x2, y2 = it.answer_box
            # 45 px: disjoint from the clean box yet inside the 100 x 80 image (a box outside it is unparsed)
            shift = {"clean": 0, "V1": 1, "V4": 1}.get(it.variant, 45)
            return _box_text((x1 + shift, y1, x2 + shift, y2))
        return _parent_answer(by_id[it.parent_id] if it.variant in PROBES else it)

    m = compute_metrics(_hand(items, answer), seed=0, n_resamples=50)["modes"]["independent"]
    vr = m["visual_reliance"]
    assert vr["IS_V1"]["value"] == 0.0  # 1 px: unchanged
    assert vr["IS"]["value"] == pytest.approx(12 / 24) and vr["IS_V3"]["value"] == pytest.approx(12 / 24)
    assert m["evidence"]["ES"]["value"] == 0.0
    # the blank image answered one pixel off the real one: the box still keeps the real image's answer
    assert vr["BlankGap"]["value"] == pytest.approx(0.0)


PROBES = ("V1", "V2", "V3", "V4")

_coord = st.floats(min_value=-50, max_value=500, allow_nan=False)


@given(st.lists(st.tuples(_coord, _coord, _coord, _coord), min_size=2, max_size=2))
def test_row_iou_equals_the_scorers_iou(boxes: list[tuple[float, float, float, float]]) -> None:
    from medr2.imaging.draw import iou
    from medr2.scoring.metrics import iou_rows

    a, b = boxes
    got = iou_rows(np.array([a]), np.array([b]))[0]
    assert got == pytest.approx(iou(a, b), abs=1e-9)
    assert iou_rows(np.array([a]), np.full((1, 4), np.nan))[0] == 0.0  # a missing box is never the same answer


def test_every_metric_carries_n_and_a_low_n_flag(oracle: dict[str, Any]) -> None:
    mode = oracle["modes"]["independent"]
    for path, leaf in _leaves(mode):
        assert isinstance(leaf["low_n"], bool), path
        assert leaf["low_n"] == (leaf["n_cases"] < 10), path
    assert mode["overall"]["low_n"] is False and mode["overall"]["n_cases"] == 12
    few = _table("baseline:oracle")
    few = few[few["case_id"].isin([f"case{c:02d}" for c in range(4)])]
    small = compute_metrics(few, seed=0, n_resamples=20)["modes"]["independent"]
    assert all(leaf["low_n"] for _, leaf in _leaves(small))
    for test in (small["variants"]["T3"]["mcnemar"], small["variants"]["T3"]["cluster_test"]):
        assert test["n_cases"] == 4 and test["n_pairs"] == 4


def test_prior_baseline_has_zero_paired_gaps_on_code_built_items() -> None:
    """The real ``baseline:prior`` adapter (train priors from the even cases) on the fixture plus box and
    report probes, with T3 / V7 answers of three cases missing: every paired gap is exactly 0."""
    from types import SimpleNamespace

    from medr2 import ModelConfig
    from medr2.models.registry import load_adapter
    from tests.score_fixtures import requests_for

    items = _probe_items()
    train = [it.model_copy(update={"split": "train"}) if _case_no(it) % 2 == 0 else it for it in items]
    adapter = load_adapter(ModelConfig("baseline:prior", bench=SimpleNamespace(items=train)))  # type: ignore[arg-type]
    asked = [it for it in items if not (it.variant in ("T3", "V7") and it.case_id in ("case01", "case02", "case05"))]
    by_id = {it.item_id: it for it in items}
    preds = [Prediction(model_key=adapter.key, item_id=it.item_id, mode="independent", request_hash=it.item_id,
                        raw=r.text, status=r.status) for it, r in zip(asked, adapter.generate(requests_for(asked)),
                                                                         strict=True)]
    m = compute_metrics(build_table(by_id, score_items(by_id, preds, BoxConvention())), seed=0,
                        n_resamples=100)["modes"]["independent"]
    for block, key in (("prompt_reliance", "PRI"), ("cues", "DrawnVsCoordsGap"), ("visual_reliance", "BlankGap"),
                       ("visual_reliance", "VRS"), ("visual_reliance", "ModalityGap"), ("visual_reliance", "IS")):
        assert m[block][key]["value"] == 0.0, key
    assert m["prompt_reliance"]["PRI"]["n"] == 9 and m["visual_reliance"]["BlankGap"]["n"] == 24


@pytest.fixture(scope="module")
def prior_on_sample(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Any]:
    """``baseline:prior`` (answers from the task's train-split answers and the options shown: never the
    image, never a hint) run on a sample bench built with every variant, then scored."""
    from medr2 import ModelConfig
    from medr2.bench import load_bench
    from medr2.builder.pipeline import build_bench
    from medr2.run.runner import EvalConfig, run_eval
    from medr2.scoring.scorer import score_run

    root = tmp_path_factory.mktemp("prior")
    build_bench("sample", root / "bench", seed=0, n_cases=10, variants="all")
    run_eval(EvalConfig(split="all", bench=root / "bench", model=ModelConfig("baseline:prior"), out=root / "run",
                        modes=("independent",)))
    return score_run(root / "run", mixed_splits=True, seed=0, n_resamples=200), load_bench(root / "bench")


@pytest.mark.slow  # builds a sample bench with every variant (about a minute on a loaded 2-core machine)
def test_text_only_prior_has_zero_hint_cue_and_image_gaps(prior_on_sample: tuple[dict[str, Any], Any]) -> None:
    """The definitions imply exactly 0 for a model that ignores hints, cues and the image: PRI,
    DrawnVsCoordsGap, BlankGap, VRS, ModalityGap and the image sensitivities (on a bench where T2 / T3 and
    V5 / V7 cover different parents, box and report probes included)."""
    metrics, bench = prior_on_sample
    m = metrics["modes"]["independent"]
    codes = {code: {it.parent_id for it in bench.items if it.variant.split("-")[0] == code}
             for code in ("T2", "T3", "V5", "V7")}
    assert codes["T2"] != codes["T3"] and codes["V5"] != codes["V7"]  # an unpaired difference would not be 0
    assert {it.form for it in bench.items if it.variant == "V1"} >= {"box", "mcq", "yesno"}
    for block, key, a, b in (("prompt_reliance", "PRI", "T2", "T3"), ("cues", "DrawnVsCoordsGap", "V5", "V7")):
        assert m[block][key]["value"] == 0.0, key
        assert m[block][key]["n"] == len(codes[a] & codes[b]), key
    for key in ("BlankGap", "VRS", "ModalityGap", "IS", "IS_V1", "IS_V3"):
        assert m["visual_reliance"][key]["value"] == 0.0, key
    for key in ("PromptGain", "MisleadDrop"):
        assert m["prompt_reliance"][key]["value"] == 0.0, key
    assert m["cues"]["CueGain"]["value"] == 0.0
    assert metrics["complete"] is True and metrics["plan"]["missing"] == 0


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(frac=st.floats(0.0, 0.99), junk=st.binary(min_size=8, max_size=64), whole=st.booleans())
def test_a_damaged_judge_cache_is_bad_input_naming_it(tmp_path_factory: pytest.TempPathFactory, frac: float,
                                                      junk: bytes, whole: bool) -> None:
    """The judge's cache (``judge_cache.sqlite`` in the run folder) with bytes changed anywhere, or replaced by junk:
    asking works (SQLite cannot see a change inside a record) or is BadInput naming the file; never a traceback."""
    from medr2.scoring.judge import CACHE_FILE

    d = tmp_path_factory.mktemp("judge")
    Judge(RuleJudge(), d).ask([f"<<<answer {i}>>> " * 40 for i in range(60)], d)
    path = d / CACHE_FILE
    data = bytearray(path.read_bytes())
    if whole:
        data = bytearray(junk)
    else:
        start = int(len(data) * frac)
        data[start:start + len(junk)] = junk
    path.write_bytes(bytes(data))
    try:
        Judge(RuleJudge(), d).ask([f"<<<answer {i}>>> " * 40 for i in range(60)], d)
    except BadInput as e:
        assert e.file == str(path)
