"""The audited judge (issue 42, part 3): ``medr2 score --judge MODEL --judge-base-url URL`` sends only the closed
answers the reader left unparsed to a real OpenAI-compatible judge on 127.0.0.1, counts them apart (method
``judge``), measures the judge's agreement with the reader (Cohen's κ, bootstrap interval, n) on a seeded sample
of parsed answers, stores every judge reply as it arrives (rescoring asks nothing again), and fails clearly when
the judge is down."""

from __future__ import annotations

import json
import re
import shutil
import socket
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from aiohttp import web
from hypothesis import given, settings, strategies as st
from sklearn.metrics import cohen_kappa_score
from typer.testing import CliRunner

from medr2 import ModelConfig
from medr2.cli import app
from medr2.run.runner import EvalConfig, run_eval
from medr2.scoring.judge import AuditSample, cohen_kappa
from medr2.scoring.scorer import load_table, score_run
from tests.cli_inproc import run_cli
from tests.openai_server import default_answer
from tests.run_fixtures import make_bench
from tests.scripted_server import ScriptedServer, completion, json_response

UNREADABLE = "xyzzy plugh frobnicate"
SECRET = "sk-judge-secret-0123456789abcdef"


@given(st.lists(st.tuples(st.sampled_from("ABCD"), st.sampled_from("ABCDN")), min_size=2, max_size=60))
@settings(max_examples=200, deadline=None)
def test_kappa_is_the_metric_librarys(pairs: list[tuple[str, str]]) -> None:
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    ours = float(cohen_kappa(a, b)[0])
    if len(set(a) | set(b)) == 1:
        assert np.isnan(ours)
        return
    with np.errstate(all="ignore"):
        ref = cohen_kappa_score(a, b)
    assert ours == pytest.approx(ref, abs=1e-9) or (np.isnan(ours) and np.isnan(ref))


@given(st.lists(st.text(min_size=1, max_size=6), min_size=0, max_size=80, unique=True), st.integers(0, 20),
       st.integers(0, 3), st.randoms(use_true_random=False))
@settings(max_examples=100, deadline=None)
def test_audit_sample_is_seeded_and_order_free(ids: list[str], k: int, seed: int, rnd: Any) -> None:
    """The same seed gives the same sample whatever the order and batching of the answers."""
    def sample(order: list[str], cut: int) -> list[str]:
        whole = AuditSample(k, seed)
        for part in (order[:cut], order[cut:]):
            s = AuditSample(k, seed)
            for i in part:
                s.offer(i, "m", None, i, i)
            whole.merge(s)
        return [p.raw for p in whole.picks()]

    shuffled = list(ids)
    rnd.shuffle(shuffled)
    first = sample(ids, len(ids) // 2)
    assert first == sample(shuffled, rnd.randint(0, len(ids))) and len(first) == min(k, len(ids))


def _model_answer(body: dict[str, Any]) -> str:
    """The evaluated model: the usual answers, except that one mcq question in two is unreadable."""
    answer = default_answer(body)
    text = json.dumps(body["messages"])
    if len(answer) == 1 and "diagnosis" in text:
        return UNREADABLE
    return answer


def _response_of(prompt: str) -> str:
    return re.search(r"Response: <<<(.*)>>>", prompt, re.S).group(1)  # type: ignore[union-attr]


def agreeing(prompt: str) -> str:
    """A judge that reads as the reader does, and reads the unreadable answer as B."""
    if "Reference" in prompt:
        return "CORRECT"
    response = _response_of(prompt)
    return "B" if response == UNREADABLE else response.split(",")[0] if "letters" in prompt else response


def disagreeing(prompt: str) -> str:
    """A judge that reads every parsed answer otherwise than the reader."""
    if "Reference" in prompt:
        return "WRONG"
    response = _response_of(prompt)
    if response == UNREADABLE:
        return "B"
    return {"yes": "no", "no": "yes"}.get(response, "D" if response != "D" else "C")


class JudgeServer(ScriptedServer):
    def __init__(self, reply: Any, fail: Any = None) -> None:
        self.asked: list[str] = []
        self.auth: set[str | None] = set()

        async def respond(request: web.Request, raw: bytes, body: Any) -> web.StreamResponse:
            prompt = body["messages"][-1]["content"]
            self.asked.append(prompt)
            self.auth.add(request.headers.get("Authorization"))
            if fail is not None and fail(prompt):
                return json_response({"error": {"message": "bad request"}}, status=400)
            return json_response(completion(reply(prompt)))

        super().__init__(respond)


@pytest.fixture(scope="module")
def model_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("judged")
    make_bench(root / "bench", n_cases=6)

    async def respond(request: web.Request, raw: bytes, body: Any) -> web.StreamResponse:
        return json_response(completion(_model_answer(body)))

    with ScriptedServer(respond) as srv:
        run_eval(EvalConfig(bench=root / "bench",
                            model=ModelConfig("openai:m", base_urls=(srv.url,), extra={"backoff_initial_s": 0.01}),
                            out=root / "run", split="all"))
    return root / "run"


def _copy(run: Path, to: Path) -> Path:
    shutil.copytree(run, to)
    (to / "judge_cache.sqlite").unlink(missing_ok=True)
    return to


def _score(run: Path, url: str, **kw: Any) -> dict[str, Any]:
    return score_run(run, judge=ModelConfig("openai:judge-model", base_urls=(url,)), n_resamples=200,
                     mixed_splits=True, **kw)


def test_only_unparsed_closed_answers_are_judged_and_counted_apart(model_run: Path, tmp_path: Path) -> None:
    run = _copy(model_run, tmp_path / "run")
    plain = score_run(run, n_resamples=0, mixed_splits=True)
    unparsed = {(r.item_id, r.mode) for r in load_table(run).itertuples()
                if r.verdict == "unparsed" and r.form != "text"}
    assert unparsed
    with JudgeServer(agreeing) as srv:
        metrics = _score(run, srv.url)
        closed_prompts = [p for p in srv.asked if "Reference" not in p]
    table = load_table(run)
    judged = {(r.item_id, r.mode) for r in table.itertuples() if r.method == "judge" and r.form != "text"}
    assert judged == unparsed  # exactly the answers the reader left unparsed, each marked judged
    assert all(r.parsed == "B" for r in table.itertuples() if (r.item_id, r.mode) in judged)
    sent = [p for p in closed_prompts if _response_of(p) == UNREADABLE]
    assert len(sent) == len({_response_of(p) + p for p in sent})  # each asked once (cached per prompt)
    block = metrics["judge"]
    assert block["model"] == "openai:judge-model" and block["judged"] == sum(
        1 for r in table.itertuples() if r.method == "judge")
    assert metrics["modes"]["independent"]["rates"]["judged"]["value"] > 0
    assert plain["modes"]["independent"]["rates"]["judged"]["value"] == 0
    audit = block["audit"]
    assert audit["n"] == min(200, audit["sample"]["eligible"]) and audit["no_reply"] == 0
    assert audit["kappa"]["value"] == pytest.approx(1.0) and audit["kappa"]["n"] == audit["n"]
    assert audit["agreement"]["value"] == pytest.approx(1.0)
    written = json.loads((run / "metrics.json").read_text())
    assert written["judge"] == json.loads(json.dumps(block))


def test_a_disagreeing_judge_shows_low_kappa_with_its_interval(model_run: Path, tmp_path: Path) -> None:
    from medr2.reporting.write import write_report

    run = _copy(model_run, tmp_path / "run")
    with JudgeServer(disagreeing) as srv:
        metrics = _score(run, srv.url, judge_sample=30)
    audit = metrics["judge"]["audit"]
    assert audit["n"] == 30 and audit["agreement"]["value"] == 0.0
    k = audit["kappa"]
    assert k["value"] < 0.2 and k["lo"] is not None and k["lo"] <= k["value"] <= k["hi"] < 0.5
    html = write_report([run], tmp_path / "report", max_items=5).read_text("utf-8")
    assert "Cohen" in html and "answers judged" in html
    assert "Judged" in (tmp_path / "report" / "leaderboard.md").read_text("utf-8")
    plain = tmp_path / "plain"
    shutil.copytree(model_run, plain)
    score_run(plain, n_resamples=0, mixed_splits=True)
    write_report([plain], tmp_path / "report-plain", max_items=5)
    assert "Judged" not in (tmp_path / "report-plain" / "leaderboard.md").read_text("utf-8")


def test_rescoring_asks_nothing_again_and_a_failed_reply_is_asked_next_time(model_run: Path,
                                                                            tmp_path: Path) -> None:
    run = _copy(model_run, tmp_path / "run")
    with JudgeServer(agreeing, fail=lambda p: "Response: <<<A>>>" in p) as srv:  # some prompts fail (HTTP 400)
        first = _score(run, srv.url)
        failed = {p for p in srv.asked if "Response: <<<A>>>" in p}
    assert failed and first["judge"]["audit"]["no_reply"] > 0
    with JudgeServer(agreeing) as srv:
        again = _score(run, srv.url)
        assert set(srv.asked) == failed  # only what had no stored reply
    assert again["judge"]["audit"]["no_reply"] == 0
    with JudgeServer(agreeing) as srv:
        third = _score(run, srv.url)
        assert srv.asked == []
    assert third["judge"] == again["judge"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_cli_judge_with_a_key_and_a_dead_judge(model_run: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    run = _copy(model_run, tmp_path / "run")
    monkeypatch.setenv("MY_JUDGE_KEY", SECRET)
    with JudgeServer(agreeing) as srv:
        res = CliRunner().invoke(app, ["score", str(run), "--mixed-splits", "--resamples", "50", "--judge",
                                       "judge-model", "--judge-base-url", srv.url, "--judge-api-key-env",
                                       "MY_JUDGE_KEY"])
        assert srv.auth == {f"Bearer {SECRET}"}
    assert res.exit_code == 0, res.output
    assert "Cohen's κ 1.00" in res.output and SECRET not in res.output
    assert SECRET not in (run / "metrics.json").read_text()

    dead = f"http://127.0.0.1:{_free_port()}/v1"
    code, out = run_cli("score", str(_copy(model_run, tmp_path / "dead")), "--mixed-splits", "--resamples", "0",
                        "--judge", "judge-model", "--judge-base-url", dead)
    assert code == 1, out  # failed work (a dead endpoint), not bad input
    assert "the judge openai:judge-model failed" in out and "cannot connect" in out and "Traceback" not in out
    assert not (tmp_path / "dead" / "metrics.json").exists()

    code, out = run_cli("score", str(run), "--mixed-splits", "--judge", "judge-model")
    assert code == 2 and "--judge-base-url" in out


def test_replies_are_stored_as_they_arrive_when_the_judge_dies(model_run: Path, tmp_path: Path) -> None:
    """Persist first: a judge that dies after 5 replies (a failed scoring, or answers left without a reply), the
    5 replies are kept, and the rerun asks only the rest."""
    from medr2 import WorkFailed

    run = _copy(model_run, tmp_path / "run")
    opts: dict[str, Any] = {"retries": 0, "concurrency": 1}

    class Dying(JudgeServer):
        def __init__(self) -> None:
            super().__init__(self._reply)

        def _reply(self, prompt: str) -> str:
            if len(self.asked) >= 5 and self._stop is not None:
                self._stop.set()  # the server goes away after this reply
            return agreeing(prompt)

    with Dying() as srv:
        try:  # fewer than 16 requests left after it died: each fails (no reply) rather than the endpoint
            metrics = score_run(run, judge=ModelConfig("openai:judge-model", base_urls=(srv.url,), **opts),
                                n_resamples=0, mixed_splits=True)
        except WorkFailed as e:
            assert "the judge openai:judge-model failed" in str(e)
            assert not (run / "metrics.json").exists()
        else:
            assert metrics["judge"]["audit"]["no_reply"] > 0  # counted, never guessed
    answered = srv.asked[:5]
    assert len(srv.asked) == 5
    import sqlite3

    with sqlite3.connect(run / "judge_cache.sqlite") as db:
        stored = {row[0] for row in db.execute("SELECT prompt FROM judged")}
    assert stored == set(answered)
    with JudgeServer(agreeing) as srv:
        score_run(run, judge=ModelConfig("openai:judge-model", base_urls=(srv.url,), **opts), n_resamples=0,
                  mixed_splits=True)
        assert srv.asked and not set(srv.asked) & stored
