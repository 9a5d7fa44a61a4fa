"""Rationale metrics (issue 19): scripted grounded / ungrounded baselines give exactly the values the
definitions imply, and a run without rationales keeps its metrics as they were."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from medr2 import Bench, ModelConfig
from medr2.records import REPORT_TASKS
from medr2.run.runner import EvalConfig, run_eval
from medr2.scoring.scorer import load_table, score_run
from medr2.tasks import vocab
from tests.run_fixtures import make_bench


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Bench:
    return make_bench(tmp_path_factory.mktemp("bench"), n_cases=8)


def _scored(bench: Bench, model: str, out: Path) -> dict[str, Any]:
    run_eval(EvalConfig(split="all", bench=bench.root, model=ModelConfig(model), out=out, modes=("independent",)))
    return score_run(out, mixed_splits=True, n_resamples=200)


def _value(block: dict[str, Any]) -> float:
    return float(block["value"])


def test_grounded_rationales_are_fully_supported(bench: Bench, tmp_path: Path) -> None:
    m = _scored(bench, "baseline:grounded", tmp_path / "g")["modes"]["independent"]
    rat = m["rationale"]["overall"]
    assert _value(rat["acc"]) == 1.0 and _value(rat["grounded_acc"]) == 1.0
    assert _value(rat["right_for_wrong_reason"]) == 0.0
    assert _value(rat["hallucinated_finding_rate"]) == 0.0 and _value(rat["missed_evidence_rate"]) == 0.0
    assert _value(rat["claim_coverage"]) == 1.0
    assert _value(m["rationale"]["variants"]["T3"]["premise_adoption_rate"]) == 0.0
    assert set(m["rationale"]["tasks"]) == {it.task for it in bench.items
                                            if it.variant == "clean" and it.task not in REPORT_TASKS}
    assert m["rationale"]["stages"]


def test_ungrounded_rationales_are_right_for_the_wrong_reason(bench: Bench, tmp_path: Path) -> None:
    out = tmp_path / "u"
    m = _scored(bench, "baseline:ungrounded", out)["modes"]["independent"]
    rat = m["rationale"]["overall"]
    assert _value(rat["acc"]) == 1.0
    assert _value(rat["grounded_acc"]) == 0.0 and _value(rat["right_for_wrong_reason"]) == 1.0
    assert _value(rat["hallucinated_finding_rate"]) == 1.0 and _value(rat["claim_coverage"]) == 1.0
    # missed evidence: exactly the rationales about a case that has a finding or a non-normal diagnosis
    table = load_table(out)
    rows = table[(table["variant"] == "clean") & ~table["probe"] & ~table["task"].isin(REPORT_TASKS)]
    has = {c.case_id: bool(c.findings) or not vocab.is_normal(c.diagnosis or "normal") for c in bench.cases}
    expected = sum(has[c] for c in rows["case_id"]) / len(rows)
    assert 0 < expected < 1
    assert _value(rat["missed_evidence_rate"]) == pytest.approx(expected, abs=1e-12)
    assert rat["grounded_acc"]["n"] == len(rows)
    t3 = m["rationale"]["variants"]["T3"]  # the misleading premise: its false fact adopted in every rationale
    assert _value(t3["premise_adoption_rate"]) == 1.0 and t3["premise_adoption_rate"]["n"] == len(bench.cases)
    assert "premise_adoption_rate" not in rat  # clean items offer no lure


def test_a_run_without_rationales_has_no_rationale_metrics_and_the_same_accuracy(bench: Bench,
                                                                                 tmp_path: Path) -> None:
    oracle = _scored(bench, "baseline:oracle", tmp_path / "o")["modes"]["independent"]
    grounded = _scored(bench, "baseline:grounded", tmp_path / "g2")["modes"]["independent"]
    assert "rationale" not in oracle
    for key in ("overall", "stages", "tasks", "rates", "grounding", "chain"):
        assert oracle.get(key) == grounded.get(key), key  # the audit adds metrics, it changes none


def test_reasoning_mode_against_a_local_server_with_rationales(bench: Bench, tmp_path: Path) -> None:
    """The ``reasoning`` mode asked of a local OpenAI-compatible server that thinks aloud (a ``<think>`` block in
    the content and a separate ``reasoning_content``), scored: the audit's values follow from the case truth."""
    import json

    from aiohttp import web

    from medr2.run.prompts import REASONING_INSTRUCTION
    from tests.openai_server import default_answer
    from tests.scripted_server import ScriptedServer, completion, json_response

    async def respond(request: web.Request, raw: bytes, body: Any) -> web.StreamResponse:
        answer = default_answer(body)
        return json_response(completion(f"<think>Modality: CT.\nThere is no mass.</think>\nFinal answer: {answer}",
                                        reasoning_content="Stage 1: this is a CT image."))

    run = tmp_path / "run"
    with ScriptedServer(respond) as srv:
        run_eval(EvalConfig(split="all", bench=bench.root,
                            model=ModelConfig("openai:m", base_urls=(srv.url,), extra={"backoff_initial_s": 0.01}),
                            out=run, modes=("reasoning",)))
        bodies = [json.loads(b) for b in srv.bodies]
    texts = ["".join(p.get("text", "") for p in b["messages"][-1]["content"]) if isinstance(
        b["messages"][-1]["content"], list) else b["messages"][-1]["content"] for b in bodies]
    assert texts and all(t.endswith(REASONING_INSTRUCTION) for t in texts)
    m = score_run(run, mixed_splits=True, n_resamples=50)["modes"]["reasoning"]
    rat = m["rationale"]["overall"]
    table = load_table(run)
    rows = table[(table["variant"] == "clean") & ~table["probe"] & ~table["task"].isin(REPORT_TASKS)]
    ct = {c.case_id: c.modality == "CT" for c in bench.cases}
    is_ct = rows["case_id"].map(ct).to_numpy(dtype=bool)
    right = rows["correct"].to_numpy(dtype=bool)
    assert 0 < right.sum() < len(rows) and 0 < is_ct.sum() < len(rows)
    # every claim is the modality (CT: supported, else contradicted) or a denied mass (the cases have none)
    assert _value(rat["acc"]) == pytest.approx(right.mean(), abs=1e-12)
    assert _value(rat["grounded_acc"]) == pytest.approx((right & is_ct).mean(), abs=1e-12)
    assert _value(rat["right_for_wrong_reason"]) == pytest.approx((~is_ct[right]).mean(), abs=1e-12)
    assert _value(rat["hallucinated_finding_rate"]) == 0.0 and _value(rat["missed_evidence_rate"]) == 0.0
    assert _value(rat["claim_coverage"]) == 1.0
    assert m["overall"]["value"] is not None  # scored like any other mode
