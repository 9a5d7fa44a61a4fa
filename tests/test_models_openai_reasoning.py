"""Reasoning models through the openai adapter, against real servers on 127.0.0.1 (tests/scripted_server.py):
finish_reason, usage and the separate reasoning text are stored; an answer cut off by the token limit is
scored ``truncated`` end to end (eval + score), counted wrong in accuracy and reported as its own rate."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from aiohttp import web

from medr2 import GenSettings, Message, ModelConfig, Part, Request
from medr2.models.openai import OpenAIAdapter, read_completion
from medr2.models.registry import load_adapter
from medr2.models.truncation import is_truncated, scan_text, unfinished_reasoning
from medr2.run.runner import EvalConfig, run_eval
from medr2.run.store import Store
from medr2.scoring.scorer import score_run
from tests.openai_server import default_answer
from tests.run_fixtures import make_bench
from tests.scripted_server import ScriptedServer, completion, json_response


def _req(text: str) -> Request:
    return Request(key=text, messages=(Message("user", (Part("text", text=text),)),), settings=GenSettings(),
                   bench_root=Path("."))


def test_reasoning_fields_of_each_server_shape() -> None:
    """vLLM < 0.11 / SGLang / DeepSeek: ``reasoning_content``; vLLM >= 0.11: ``reasoning``; the answer is the
    content only; a null content at the token limit is an (empty) answer, not an error."""
    c = read_completion(json.dumps(completion("B", reasoning_content="maybe A... no, B")).encode())
    assert (c.text, c.reasoning, c.finish_reason) == ("B", "maybe A... no, B", "stop")
    c = read_completion(json.dumps(completion("yes", reasoning="looked at it")).encode())
    assert (c.text, c.reasoning) == ("yes", "looked at it")
    c = read_completion(json.dumps(completion(None, finish_reason="length", reasoning_content="so far")).encode())
    assert (c.text, c.reasoning, c.finish_reason) == ("", "so far", "length")
    huge = {"prompt_tokens": 10**20, "completion_tokens": True}
    c = read_completion(json.dumps(completion("A", usage=huge)).encode())
    assert (c.prompt_tokens, c.completion_tokens) == (None, None)
    assert any("21-digit" in n for n in c.notes) and any("completion_tokens" in n for n in c.notes)


def test_truncation_rules() -> None:
    assert is_truncated("A", "length") and is_truncated("", "length")
    assert is_truncated("<think>the image shows", "stop")  # an unfinished think block
    assert is_truncated("◁think▷ still thinking", None)
    assert not is_truncated("<think>done</think> B", "stop")
    assert not is_truncated("thought</think>B", None)  # template-opened block, closed by the model
    assert not is_truncated("B", "stop") and not is_truncated("B", None)
    assert unfinished_reasoning("<think>a</think><think>b")  # the last block is open
    long = "<think>" + "x" * 100_000 + "</think> The answer is B. " + "y" * 100_000
    assert scan_text(long).startswith(" The answer is B.") and len(scan_text(long)) <= 32_770


def test_adapter_stores_finish_reason_reasoning_and_thinking_options(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []

    async def respond(request: web.Request, raw: bytes, body: Any) -> web.StreamResponse:
        seen.append(body)
        return json_response(completion("C", finish_reason="stop", reasoning_content="step 1, step 2",
                                        usage={"prompt_tokens": 12, "completion_tokens": 345}))

    with ScriptedServer(respond) as srv:
        ad = load_adapter(ModelConfig("openai:m", preset="qwen3-vl-thinking", base_urls=(srv.url,),
                                      extra={"thinking_token_budget": 1024, "enable_thinking": True,
                                             "reasoning_effort": "low",
                                             "extra_body": {"chat_template_kwargs": {"custom": 1}}}))
        try:
            (resp,) = ad.generate([_req("q")])
        finally:
            ad.close()
    assert (resp.status, resp.text, resp.reasoning, resp.finish_reason) == ("ok", "C", "step 1, step 2", "stop")
    assert (resp.prompt_tokens, resp.completion_tokens) == (12, 345)
    (body,) = seen
    assert body["thinking_token_budget"] == 1024 and body["reasoning_effort"] == "low"
    assert body["chat_template_kwargs"] == {"custom": 1, "enable_thinking": True}


def _cut(body: dict[str, Any]) -> str | None:
    """How the scripted reasoning server cuts this request: "length", "think" (an unclosed <think> in the
    content), "null" (content null at the limit, vLLM's reasoning parser) or None (a finished answer)."""
    h = hashlib.sha256(json.dumps(body["messages"], sort_keys=True).encode()).digest()[0] % 4
    return {0: "length", 1: "think", 2: "null"}.get(h)


def test_truncated_answers_scored_truncated_end_to_end(tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    make_bench(bench, n_cases=6)

    async def respond(request: web.Request, raw: bytes, body: Any) -> web.StreamResponse:
        answer = default_answer(body)
        cut = _cut(body)
        if cut == "length":  # the answer text is there but the model was still going: never read
            return json_response(completion(answer, finish_reason="length", reasoning_content="thinking"))
        if cut == "think":
            return json_response(completion(f"<think>first I look at {answer}", finish_reason="stop"))
        if cut == "null":
            return json_response(completion(None, finish_reason="length", reasoning_content="thinking"))
        return json_response(completion(f"<think>easy</think>{answer}", reasoning_content=None))

    run = tmp_path / "run"
    with ScriptedServer(respond) as srv:
        summary = run_eval(EvalConfig(split="all", bench=bench,
                                      model=ModelConfig("openai:m", base_urls=(srv.url,), preset="generic-reasoning",
                                                        extra={"backoff_initial_s": 0.01}), out=run))
        bodies = [json.loads(b) for b in srv.bodies]
    assert all(b["max_tokens"] == 16384 for b in bodies)  # the reasoning preset's budget
    with Store.open(run) as st:
        stored = {r.prediction.item_id: r.prediction for r in st.iter_predictions()}
    cuts = [_cut(b) for b in bodies]  # one request per item
    assert len(cuts) == len(stored) and all(p.status == "ok" for p in stored.values())
    n_cut = sum(1 for c in cuts if c is not None)
    assert 0 < n_cut < len(stored)
    assert summary.modes["independent"].truncated == n_cut
    assert sum(p.finish_reason == "length" for p in stored.values()) == sum(c in ("length", "null") for c in cuts)
    assert all(p.reasoning == "thinking" for p in stored.values() if p.finish_reason == "length")

    metrics = score_run(run, mixed_splits=True, n_resamples=0)
    scores = pq.read_table(run / "scores.parquet").to_pylist()
    by_item = {s["item_id"]: s for s in scores}
    truncated = {i for i, s in by_item.items() if s["verdict"] == "truncated"}
    expected = {i for i, p in stored.items() if is_truncated(p.raw, p.finish_reason)}
    assert truncated == expected and len(truncated) == n_cut
    # a finished answer from this server is the default (mostly right) answer: read normally
    assert all(by_item[i]["verdict"] != "truncated" for i in set(by_item) - truncated)
    m = metrics["modes"]["independent"]
    assert m["rates"]["truncated"]["value"] == pytest.approx(len(truncated) / len(scores))
    assert m["rates"]["unparsed"]["value"] == pytest.approx(
        sum(s["verdict"] == "unparsed" for s in scores) / len(scores))
    # accuracy counts a truncated answer wrong, even where its cut-off text held the right letter
    task = [s for s in scores if s["task"] == "s1.modality" and s["variant"] == "clean"]
    assert any(s["verdict"] == "truncated" for s in task)
    acc = sum(s["verdict"] == "correct" for s in task) / len(task)
    assert m["tasks"]["s1.modality"]["value"] == pytest.approx(acc)
    assert metrics["run"]["truncated"] == len(truncated) and "max-new-tokens" in metrics["run"]["hint"]
    assert all(by_item[i]["method"] == "none" and by_item[i]["parsed"] is None for i in truncated)


def test_truncated_rate_in_leaderboard_and_score_console(tmp_path: Path) -> None:
    """The rate appears wherever the unparsed rate does: the score console line and the leaderboard."""
    from typer.testing import CliRunner

    from medr2.cli import app
    from medr2.reporting.inputs import load_run
    from medr2.reporting.leaderboard import build_leaderboard, to_csv

    bench = tmp_path / "bench"
    make_bench(bench, n_cases=2)

    async def respond(request: web.Request, raw: bytes, body: Any) -> web.StreamResponse:
        return json_response(completion(default_answer(body), finish_reason="length"))

    run = tmp_path / "run"
    with ScriptedServer(respond) as srv:
        run_eval(EvalConfig(split="all", bench=bench, model=ModelConfig("openai:m", base_urls=(srv.url,)), out=run))
    res = CliRunner().invoke(app, ["score", str(run), "--mixed-splits", "--resamples", "0"])
    assert res.exit_code == 0, res.output
    assert "truncated 1.000" in res.output and "max-new-tokens" in res.output
    lines = to_csv(build_leaderboard([load_run(run)])).splitlines()
    header = lines[0].split(",")
    assert "truncated" in header
    assert all(float(row.split(",")[header.index("truncated")]) == 1.0 for row in lines[1:])


def test_null_content_without_reasoning_or_limit_is_still_an_error() -> None:
    async def respond(request: web.Request, raw: bytes, body: Any) -> web.StreamResponse:
        return json_response(completion(None, finish_reason="stop", refusal="no"))

    with ScriptedServer(respond) as srv:
        ad = OpenAIAdapter("m", base_urls=[srv.url], retries=0)
        try:
            (resp,) = ad.generate([_req("q")])
        finally:
            ad.close()
    assert resp.status == "error" and "no text content" in (resp.error or "")


def test_thinking_options_are_part_of_the_run_identity(tmp_path: Path) -> None:
    """A resume with another thinking budget would mix answers of two settings in one run: refused."""
    from medr2 import BadInput

    bench = tmp_path / "bench"
    make_bench(bench, n_cases=1)

    async def respond(request: web.Request, raw: bytes, body: Any) -> web.StreamResponse:
        return json_response(completion(default_answer(body)))

    run = tmp_path / "run"
    with ScriptedServer(respond) as srv:
        cfg = EvalConfig(split="all", bench=bench,
                         model=ModelConfig("openai:m", base_urls=(srv.url,), extra={"thinking_token_budget": 512}),
                         out=run, limit=2)
        run_eval(cfg)
        run_eval(cfg)  # the same setting resumes
        cfg.model = replace(cfg.model, extra={"thinking_token_budget": 1024})
        with pytest.raises(BadInput, match="request_extra"):
            run_eval(cfg)
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["identity"]["request_extra"] == {"thinking_token_budget": 512}
