"""Confidences end to end (issue 45): a real OpenAI-compatible server on 127.0.0.1 returns token log-probabilities
(or states a confidence in words); ``medr2 eval --confidence ...`` stores them per answer and ``medr2 score``
writes ``calibration.json``."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from aiohttp import web

from medr2 import ModelConfig
from medr2.bench.format import load_bench
from medr2.records import Confidence
from medr2.run.runner import EvalConfig, run_eval
from medr2.run.store import Store
from medr2.scoring.calibration import CALIBRATION_FILE
from medr2.scoring.scorer import score_run
from tests.openai_server import default_answer
from tests.run_fixtures import make_bench
from tests.scripted_server import ScriptedServer, completion, json_response


def _p_of(texts: list[str]) -> float:
    """The scripted server's probability of its answer, from the text of the whole dialogue (reproducible)."""
    h = hashlib.sha256("\x1f".join(texts).encode()).digest()
    return 0.4 + 0.55 * h[0] / 255


def _texts(messages: Any) -> list[str]:
    """The text parts of a dialogue, as sent (``content``) or as stored (``parts``)."""
    out = []
    for m in messages:
        content = m.get("content", m.get("parts"))
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
        out += [p["text"] for p in parts if isinstance(p, dict) and p.get("type") == "text"]
    return out


def _p(body: dict[str, Any]) -> float:
    return _p_of(_texts(body["messages"]))


def _logprobs(answer: str, p: float) -> dict[str, Any]:
    """vLLM's shape: the answer token with its top alternatives (one of them another answer, one not)."""
    other = {"A": "B", "yes": "no"}.get(answer, "A")
    top = [{"token": answer, "logprob": math.log(p), "bytes": None},
           {"token": " " + other, "logprob": math.log((1 - p) * 0.75), "bytes": None},
           {"token": "The", "logprob": math.log((1 - p) * 0.25), "bytes": None}]
    return {"content": [{"token": answer, "logprob": math.log(p), "bytes": None, "top_logprobs": top}]}


def logprob_run(bench: Path, run: Path, seen: list[dict[str, Any]] | None = None) -> None:
    """Evaluate ``bench`` (every split) against a scripted server on 127.0.0.1 that answers with the log-probabilities
    of :func:`_logprobs` for answers "A"/"yes" (``--confidence logprobs``); ``seen`` collects the request bodies."""

    async def respond(request: web.Request, raw: bytes, body: Any) -> web.StreamResponse:
        if seen is not None:
            seen.append(body)
        answer = default_answer(body)
        out = completion(answer)
        if answer in ("A", "yes"):
            out["choices"][0]["logprobs"] = _logprobs(answer, _p(body))
        return json_response(out)

    with ScriptedServer(respond) as srv:
        run_eval(EvalConfig(bench=bench,
                            model=ModelConfig("openai:m", base_urls=(srv.url,), extra={"backoff_initial_s": 0.01}),
                            out=run, confidence="logprobs", split="all"))


def test_logprob_confidences_stored_and_scored(tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    make_bench(bench, n_cases=6)
    seen: list[dict[str, Any]] = []
    run = tmp_path / "run"
    logprob_run(bench, run, seen)
    assert seen and all(b["logprobs"] is True and b["top_logprobs"] == 20 for b in seen)
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["confidence"] == "logprobs" and manifest["identity"]["confidence"] == "logprobs"

    expected: dict[str, float] = {}  # item id -> the probability the server gave its answer, renormalised
    with Store.open(run) as store:
        stored = list(store.iter_predictions(with_request=True))
    forms = {it.item_id: it.form for it in load_bench(bench).items}
    for sp in stored:
        p = sp.prediction
        if p.raw not in ("A", "yes") or forms[p.item_id] not in ("mcq", "yesno"):  # nothing to map: none stored
            assert p.confidence is None
            continue
        assert isinstance(p.confidence, Confidence) and p.confidence.source == "logprobs"
        assert math.fsum(p.confidence.probs.values()) == pytest.approx(1.0)
        q = _p_of(_texts(sp.request))
        # the answer's probability and the other answer's (the non-answer alternative "The" is left out)
        assert p.confidence.probs[p.raw] == pytest.approx(q / (q + (1 - q) * 0.75))
        expected[p.item_id] = p.confidence.probs[p.raw]
    assert expected  # every mcq/yes-no answer "A"/"yes" carried its log-probabilities

    metrics = score_run(run, n_resamples=50, mixed_splits=True)  # train answers calibrate the conformal sets
    cal = json.loads((run / CALIBRATION_FILE).read_text())
    mode = cal["modes"]["independent"]
    # the harm view reads the same confidences: its silent-failure rate knows them (issue 46 beside issue 45)
    from medr2.scoring.harm import load_harm
    from medr2.scoring.slices import analyse_run

    harm = analyse_run(run, [], harm=load_harm(None), n_resamples=20)["harm"]["modes"]["independent"]
    assert harm["silent_failure"]["confidence_known"] > 0
    assert cal["bootstrap"]["unit"] in ("case", "patient") and cal["bootstrap"]["n_units"] > 0
    assert mode["confidence"]["sources"] == ["logprobs"]
    c = mode["calibration"]
    assert c["ECE"]["n"] == c["Brier"]["n"] == c["AUROC"]["n"] > 0
    assert c["mean_confidence"]["lo"] is not None and 0.0 <= c["ECE"]["value"] <= 1.0
    assert cal["bootstrap"]["seed"] == metrics["bootstrap"]["seed"]
    from medr2.scoring.scorer import load_table

    rows = load_table(run)
    clean = rows[(rows["variant"] == "clean") & rows["form"].isin(["mcq", "yesno"]) & rows["parsed"].notna()
                 & rows["item_id"].isin(list(expected))]
    assert c["mean_confidence"]["n"] == len(clean)
    assert c["mean_confidence"]["value"] == pytest.approx(float(np.mean([expected[i] for i in clean["item_id"]])))
    assert c["accuracy"]["value"] == pytest.approx(float(clean["correct"].mean()))
    conf = mode["conformal"]  # split conformal sets: calibrated on the train split (the bench has no val split)
    assert conf["target"] == 0.9 and conf["calibration_split"] == "train" and conf["n_calibration"] > 0
    assert 0.0 <= conf["coverage"]["value"] <= 1.0 and 1.0 <= conf["set_size"]["value"] <= 4.0


def test_verbal_confidences_end_to_end(tmp_path: Path) -> None:
    """``--confidence verbal`` adds the instruction; the stated percentage is read when scoring."""
    bench = tmp_path / "bench"
    make_bench(bench, n_cases=4)
    asked: list[str] = []

    async def respond(request: web.Request, raw: bytes, body: Any) -> web.StreamResponse:
        last = body["messages"][-1]["content"]
        asked.append(json.dumps(last))
        pct = 40 + int(_p(body) * 50)
        return json_response(completion(f"{default_answer(body)}\nConfidence: {pct}%"))

    run = tmp_path / "run"
    with ScriptedServer(respond) as srv:
        run_eval(EvalConfig(bench=bench,
                            model=ModelConfig("openai:m", base_urls=(srv.url,), extra={"backoff_initial_s": 0.01}),
                            out=run, confidence="verbal"))
    assert asked and all("Confidence: 70%" in a for a in asked)  # the instruction's example
    score_run(run, n_resamples=20)
    mode = json.loads((run / CALIBRATION_FILE).read_text())["modes"]["independent"]
    assert mode["confidence"]["sources"] == ["verbal"]
    assert 0.4 <= mode["calibration"]["mean_confidence"]["value"] <= 0.95


def test_a_run_without_confidences_or_abstentions_gets_no_calibration_file(tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    make_bench(bench, n_cases=4)

    async def respond(request: web.Request, raw: bytes, body: Any) -> web.StreamResponse:
        return json_response(completion(default_answer(body)))

    run = tmp_path / "run"
    with ScriptedServer(respond) as srv:
        run_eval(EvalConfig(bench=bench,
                            model=ModelConfig("openai:m", base_urls=(srv.url,), extra={"backoff_initial_s": 0.01}),
                            out=run))
    (run / CALIBRATION_FILE).write_text("{}")  # stale
    metrics = score_run(run, n_resamples=20)
    assert not (run / CALIBRATION_FILE).exists()
    assert all("abstained" not in m["rates"] for m in metrics["modes"].values())


def test_abstain_option_offered_recorded_and_scored(tmp_path: Path) -> None:
    """``--abstain-option``: single-choice questions list "Cannot be determined from the image" as their last
    option; a model choosing its letter is scored ``abstained`` (the manifest records the option)."""
    from medr2.records import ABSTAIN_OPTION
    from medr2.scoring.scorer import load_table

    bench = tmp_path / "bench"
    make_bench(bench, n_cases=4)
    offered: list[bool] = []

    async def respond(request: web.Request, raw: bytes, body: Any) -> web.StreamResponse:
        text = "\n".join(_texts(body["messages"][-1:]))
        line = next((ln for ln in text.splitlines() if ABSTAIN_OPTION in ln), None)
        offered.append(line is not None)
        return json_response(completion(line.strip()[0] if line else default_answer(body)))

    run = tmp_path / "run"
    with ScriptedServer(respond) as srv:
        run_eval(EvalConfig(bench=bench,
                            model=ModelConfig("openai:m", base_urls=(srv.url,), extra={"backoff_initial_s": 0.01}),
                            out=run, abstain_option=True))
    assert any(offered) and not all(offered)  # single-choice items only
    assert json.loads((run / "manifest.json").read_text())["abstain_option"] is True
    metrics = score_run(run, n_resamples=20)
    rows = load_table(run)
    mcq = rows[rows["form"] == "mcq"]
    assert (mcq["verdict"] == "abstained").all() and len(mcq) == sum(offered)
    assert (rows.loc[rows["form"] != "mcq", "verdict"] != "abstained").all()
    rate = metrics["modes"]["independent"]["rates"]["abstained"]["value"]
    assert rate == pytest.approx(len(mcq) / len(rows))
    cal = json.loads((run / CALIBRATION_FILE).read_text())
    assert cal["abstain_option"] is True
    assert cal["modes"]["independent"]["abstention"]["over_abstention"]["value"] > 0


def test_merged_shards_keep_the_eval_options(tmp_path: Path) -> None:
    """A merged run is scored with its shards' ``--abstain-option`` and ``--confidence`` (read from the identity
    the merge keeps, ``medr2.run.manifest.eval_option``)."""
    from medr2.records import ABSTAIN_OPTION
    from medr2.run.merge import merge_runs
    from medr2.scoring.scorer import load_table

    bench = tmp_path / "bench"
    make_bench(bench, n_cases=4)

    async def respond(request: web.Request, raw: bytes, body: Any) -> web.StreamResponse:
        text = "\n".join(_texts(body["messages"][-1:]))
        line = next((ln for ln in text.splitlines() if ABSTAIN_OPTION in ln), None)
        return json_response(completion((line.strip()[0] if line else default_answer(body)) + "\nConfidence: 60%"))

    shards = [tmp_path / "s0", tmp_path / "s1"]
    with ScriptedServer(respond) as srv:
        for i, out in enumerate(shards):
            run_eval(EvalConfig(bench=bench,
                                model=ModelConfig("openai:m", base_urls=(srv.url,), extra={"backoff_initial_s": 0.01}),
                                out=out, shard=(i, 2), abstain_option=True, confidence="verbal"))
    merged = tmp_path / "merged"
    merge_runs(shards, merged, command=[])
    score_run(merged, n_resamples=20)
    rows = load_table(merged)
    assert (rows.loc[rows["form"] == "mcq", "verdict"] == "abstained").all()
    cal = json.loads((merged / CALIBRATION_FILE).read_text())
    assert cal["abstain_option"] is True and cal["confidence_option"] == "verbal"
    assert cal["modes"]["independent"]["confidence"]["sources"] == ["verbal"]
