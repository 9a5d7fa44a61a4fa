"""Hostile model output (DESIGN §9, §12) and secrets (DESIGN §7, §12).

Script injection, control characters, gigantic answers, invalid UTF-8 and lone surrogates come back
from a real server on 127.0.0.1: every answer is stored (intact where it is valid text), scoring
does not crash, the HTML report shows it escaped. An API key passed with ``--api-key-env`` never
appears in any file under the run or report folder, in the console output or in error texts,
even when the server echoes it back.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fault_server import Faults, FaultServer
from tests.openai_server import default_answer
from tests.run_fixtures import make_bench

MEDR2 = [sys.executable, "-m", "medr2.cli"]
SCRIPT = '</script><script>alert("pwned")</script><img src=x onerror=alert(1)>'
CONTROL = "A\x00\x01\x07\x08\x0b\x1b[31mred\x1b[0m\r\n\u2028\u2029\ufeff\x7f end"
GIGANTIC = "<b>B</b>" * 125_000  # 1 MB
INVALID_UTF8 = b"A \xff\xfe \xc3\x28 invalid"
LONE_SURROGATE = b"A \\udcff \\ud800 lone"
KINDS = ("script", "control", "gigantic", "invalid-utf8", "surrogate")


def _kind(body: dict[str, Any]) -> str:
    h = hashlib.sha256(json.dumps(body["messages"], sort_keys=True).encode()).digest()[0]
    return KINDS[h % len(KINDS)]


def hostile_answer(body: dict[str, Any], *, giant_text: bool = True) -> str:
    kind = _kind(body)
    plain = default_answer(body)
    if kind == "gigantic" and (giant_text or not plain.startswith("Findings")):
        return f"{plain} {GIGANTIC}"
    if kind in ("script", "gigantic"):
        return f"{plain} {SCRIPT}"
    if kind == "control":
        return f"{plain} {CONTROL}"
    return "placeholder"


def hostile_bytes(body: dict[str, Any]) -> bytes | None:
    return {"invalid-utf8": INVALID_UTF8, "surrogate": LONE_SURROGATE}.get(_kind(body))


def _run(args: list[str], env: dict[str, str] | None = None, expect: int = 0) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*MEDR2, *args], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == expect, (done.returncode, done.stderr[-3000:])
    return done


@pytest.mark.parametrize("giant_text", [
    False, pytest.param(True, marks=pytest.mark.slow, id="gigantic-free-text")])
def test_hostile_output_stored_scored_and_escaped(tmp_path: Path, giant_text: bool) -> None:
    """Fast: 1 MB answers on the closed-form items; slow: also on free-text (report) items, whose text
    metrics (METEOR, BLEU) take seconds per megabyte."""
    bench = tmp_path / "bench"
    items = make_bench(bench, n_cases=5).items
    run, report = tmp_path / "run", tmp_path / "report"
    answer = functools.partial(hostile_answer, giant_text=giant_text)
    with FaultServer(Faults(), answer=answer, raw_answer=hostile_bytes) as srv:
        _run(["eval", "--bench", str(bench), "--model", "openai:m", "--out", str(run), "--base-url", srv.url,
              "--retries", "1", "--timeout", "10", "--no-progress"])
        sent = set(srv.sent_answers)
    con = sqlite3.connect(run / "store.sqlite")
    rows = con.execute("SELECT status, raw, error FROM predictions").fetchall()
    con.close()
    assert len(rows) == len(items)
    assert all(st == "ok" for st, _, _ in rows), [e for st, _, e in rows if st != "ok"][:3]
    raws = [r for _, r, _ in rows]
    # valid text is stored exactly as sent, however long or strange
    assert sum(SCRIPT in r for r in raws) >= 1 and sum(CONTROL in r for r in raws) >= 1
    assert any(GIGANTIC in r for r in raws)
    assert all(r in sent for r in raws if SCRIPT in r or CONTROL in r or GIGANTIC in r)
    # undecodable bytes are kept as U+FFFD, the rest of the answer intact
    assert any(r.startswith("A \ufffd") and r.endswith(" invalid") for r in raws)
    assert any(r.startswith("A \ufffd") and r.endswith(" lone") for r in raws)
    _run(["score", str(run)])
    _run(["report", str(run), "--out", str(report)])
    html = (report / "index.html").read_text("utf-8")
    assert "pwned" in html  # the answers are in the per-item browser data ...
    assert "<script>alert" not in html and "onerror=alert(1)>" not in html and "\x00" not in html  # ... escaped
    assert "\x1b" not in html
    for name in ("leaderboard.md", "leaderboard.csv", "leaderboard.json"):
        text = (report / name).read_text("utf-8")
        assert "<script>alert" not in text


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _grep_tree(root: Path, secret: str) -> list[str]:
    hits = []
    for p in root.rglob("*"):
        if p.is_file() and secret.encode() in p.read_bytes():
            hits.append(str(p))
    return hits


@pytest.fixture
def secret_env() -> tuple[str, dict[str, str]]:
    secret = "sk-medr2-" + hashlib.sha256(os.urandom(16)).hexdigest()[:32]
    return secret, {**os.environ, "MEDR2_RELIABILITY_KEY": secret}


def test_api_key_never_reaches_disk_logs_or_errors(tmp_path: Path, secret_env: tuple[str, dict[str, str]]) -> None:
    secret, env = secret_env
    bench = tmp_path / "bench"
    make_bench(bench, n_cases=4)
    outputs: list[str] = []

    def echo(body: dict[str, Any]) -> str:  # a server that puts the key into the model's answer
        return f"{default_answer(body)} (your key is {secret})"

    key_args = ["--api-key-env", "MEDR2_RELIABILITY_KEY", "--no-progress", "--timeout", "5", "--backoff", "0.05"]
    # 1. a server that checks the key and echoes it in its error bodies and in answers
    faults = Faults(rates={"500": 0.3, "429": 0.2}, secret_echo=secret, seed=2)
    with FaultServer(faults, api_key=secret, answer=echo) as srv:
        done = _run(["eval", "--bench", str(bench), "--model", "openai:m", "--out", str(tmp_path / "run"),
                     "--base-url", srv.url, "--retries", "1", *key_args], env)
        outputs += [done.stdout, done.stderr]
        assert srv.stats.auth_headers == {f"Bearer {secret}"}  # the key was sent, in the header only
    # 2. the server rejects the key (401 echoing it): every request fails, exit 1
    with FaultServer(Faults(secret_echo=secret), api_key="another-key") as srv:
        done = _run(["eval", "--bench", str(bench), "--model", "openai:m", "--out", str(tmp_path / "run401"),
                     "--base-url", srv.url, "--retries", "0", *key_args], env, expect=1)
        outputs += [done.stdout, done.stderr]
    # 3. nothing listens: connection errors
    done = _run(["eval", "--bench", str(bench), "--model", "openai:m", "--out", str(tmp_path / "rundown"),
                 "--base-url", f"http://127.0.0.1:{_free_port()}/v1", "--retries", "0", *key_args], env, expect=1)
    outputs += [done.stdout, done.stderr]
    # 4. scoring and reporting the run
    outputs += [_run(["score", str(tmp_path / "run")], env).stderr]
    outputs += [_run(["report", str(tmp_path / "run"), "--out", str(tmp_path / "report")], env).stderr]
    hits = _grep_tree(tmp_path, secret)
    assert not hits, hits
    assert not [o for o in outputs if secret in o]
    con = sqlite3.connect(tmp_path / "run401" / "store.sqlite")
    errors = [e for (e,) in con.execute("SELECT error FROM predictions")]
    con.close()
    assert errors and all("401" in e and "***" in e for e in errors)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["model"]["settings"]["api_key_env"] == "MEDR2_RELIABILITY_KEY"  # the name, not the value


def test_api_key_not_in_exception_texts(secret_env: tuple[str, dict[str, str]]) -> None:
    """In-process: the adapter's errors, settings and repr never carry the key."""
    from medr2.models.openai import OpenAIAdapter

    secret, env = secret_env
    os.environ["MEDR2_RELIABILITY_KEY"] = secret
    try:
        ad = OpenAIAdapter("m", base_urls=[f"http://127.0.0.1:{_free_port()}/v1"],
                           api_key_env="MEDR2_RELIABILITY_KEY", retries=0, timeout_s=2)
        texts = [repr(ad), json.dumps(ad.settings()), str(vars(ad).get("urls"))]
        with FaultServer(Faults(rates={"500": 1.0}, secret_echo=secret), api_key=secret) as srv:
            ad2 = OpenAIAdapter("m", base_urls=[srv.url], api_key_env="MEDR2_RELIABILITY_KEY", retries=0,
                                timeout_s=5)
            from medr2.models.base import GenSettings, Message, Part, Request

            req = Request("k", (Message("user", (Part("text", text="hi"),)),), GenSettings(), Path("."))
            resp = ad2.generate([req])[0]
            ad2.close()
        assert resp.status == "error" and "500" in (resp.error or "")
        texts.append(resp.error or "")
        assert not [t for t in texts if secret in t]
    finally:
        del os.environ["MEDR2_RELIABILITY_KEY"]


def test_cli_tracebacks_never_show_locals() -> None:
    """An unexpected crash prints a traceback; local variables (request headers) must not be in it."""
    from medr2.cli import app

    assert app.pretty_exceptions_show_locals is False
