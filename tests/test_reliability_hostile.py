"""Hostile model output (docs/report.md, docs/reliability.md) and secrets (docs/reliability.md).

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
        _run(["eval", "--split", "all", "--bench", str(bench), "--model", "openai:m", "--out", str(run),
              "--base-url", srv.url,
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
    _run(["score", str(run), "--mixed-splits"])
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
        done = _run(["eval", "--split", "all", "--bench", str(bench), "--model", "openai:m", "--out",
                     str(tmp_path / "run"),
                     "--base-url", srv.url, "--retries", "1", *key_args], env)
        outputs += [done.stdout, done.stderr]
        assert srv.stats.auth_headers == {f"Bearer {secret}"}  # the key was sent, in the header only
    # 2. the server rejects the key (401 echoing it): every request fails, exit 1
    with FaultServer(Faults(secret_echo=secret), api_key="another-key") as srv:
        done = _run(["eval", "--split", "all", "--bench", str(bench), "--model", "openai:m", "--out",
                     str(tmp_path / "run401"),
                     "--base-url", srv.url, "--retries", "0", *key_args], env, expect=1)
        outputs += [done.stdout, done.stderr]
    # 3. nothing listens: connection errors
    done = _run(["eval", "--split", "all", "--bench", str(bench), "--model", "openai:m", "--out",
                 str(tmp_path / "rundown"),
                 "--base-url", f"http://127.0.0.1:{_free_port()}/v1", "--retries", "0", *key_args], env, expect=1)
    outputs += [done.stdout, done.stderr]
    # 4. scoring and reporting the run
    outputs += [_run(["score", str(tmp_path / "run"), "--mixed-splits"], env).stderr]
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
            from medr2 import GenSettings, Message, Part, Request

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


# -- hostile servers II (issue 21 items 11 and 12): scripted servers on 127.0.0.1 ------------------------------

def _one_request(url: str, **kw: Any) -> Any:
    from medr2 import GenSettings, Message, Part, Request
    from medr2.models.openai import OpenAIAdapter

    ad = OpenAIAdapter("m", base_urls=[url], timeout_s=20, backoff_initial_s=0.01, backoff_max_s=0.02, **kw)
    try:
        return ad.generate([Request("k", (Message("user", (Part("text", text="hi"),)),), GenSettings(), Path("."))])[0]
    finally:
        ad.close()


def test_huge_usage_numbers_do_not_stop_the_run(tmp_path: Path) -> None:
    """usage.prompt_tokens = 10**20 used to raise OverflowError in SQLite on every resume: now stored as NULL
    with a note, the run finishes, and a resume has nothing left to send."""
    from aiohttp import web

    from tests.scripted_server import ScriptedServer, completion, json_response

    async def respond(request: web.Request, raw: bytes, body: Any) -> web.StreamResponse:
        return json_response(completion(default_answer(body), usage={"prompt_tokens": 10**20,
                                                                      "completion_tokens": -(10**30)}))

    bench, run = tmp_path / "bench", tmp_path / "run"
    make_bench(bench, n_cases=2)
    with ScriptedServer(respond) as srv:
        args = ["eval", "--split", "all", "--bench", str(bench), "--model", "openai:m", "--out", str(run),
                "--base-url", srv.url,
                "--no-progress"]
        _run(args)
        sent = srv.stats.requests
        done = _run(args)  # the resume: everything is stored
        assert srv.stats.requests == sent
    assert "0 ok, 0 errors" in done.stderr
    con = sqlite3.connect(run / "store.sqlite")
    rows = con.execute("SELECT status, prompt_tokens, completion_tokens, meta FROM predictions").fetchall()
    con.close()
    assert rows and all(r[0] == "ok" and r[1] is None and r[2] is None for r in rows)
    assert all("usage.prompt_tokens" in " ".join(json.loads(r[3])["notes"]) for r in rows)


def test_endless_body_is_an_error_not_a_memory_exhaustion() -> None:
    from aiohttp import web

    from tests.scripted_server import ScriptedServer

    streamed = [0]

    async def respond(request: web.Request, raw: bytes, body: Any) -> web.StreamResponse:
        resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
        await resp.prepare(request)
        chunk = b'{"choices": [{"message": {"content": "' + b"A" * (1 << 20)
        try:
            while streamed[0] < (1 << 30):  # 1 GiB at most, should the client not stop
                await resp.write(chunk)
                streamed[0] += len(chunk)
                chunk = b"A" * (1 << 20)
        except (ConnectionError, RuntimeError):
            pass
        return resp

    with ScriptedServer(respond) as srv:
        resp = _one_request(srv.url, retries=0, max_response_bytes=4 << 20)
        big_declared = ScriptedServer(lambda r, raw, b: _declared_big())
    assert resp.status == "error" and "larger than 4194304 bytes" in (resp.error or "")
    assert streamed[0] < 256 << 20  # the client stopped reading long before the server's 1 GiB
    with big_declared as srv:  # a Content-Length over the limit is refused before reading
        resp = _one_request(srv.url, retries=0, max_response_bytes=1 << 20)
    assert resp.status == "error" and "max_response_bytes" in (resp.error or "")


async def _declared_big() -> Any:
    from aiohttp import web

    return web.Response(body=b"x" * (2 << 20), content_type="application/json")


def test_cross_origin_redirect_is_refused_same_origin_followed() -> None:
    """A 307/308 re-sends the POST body (images, prompts): never to an origin --base-url does not name."""
    from aiohttp import web

    from tests.scripted_server import ScriptedServer, completion, json_response

    async def answer(request: web.Request, raw: bytes, body: Any) -> web.StreamResponse:
        return json_response(completion("A"))

    with ScriptedServer(answer) as other:
        async def redirect_away(request: web.Request, raw: bytes, body: Any) -> web.StreamResponse:
            return web.Response(status=307, headers={"Location": f"http://user:pw@127.0.0.1:{other.port}/v1/x"})

        with ScriptedServer(redirect_away) as srv:
            resp = _one_request(srv.url, retries=2)
        assert other.paths == []  # nothing, body or not, reached the other host
    assert resp.status == "error" and "another origin" in (resp.error or "") and "pw" not in (resp.error or "")
    assert "(attempts: 1)" in (resp.error or "")  # permanent: not retried

    async def moved(request: web.Request, raw: bytes, body: Any) -> web.StreamResponse:
        if request.path == "/v1/chat/completions":
            return web.Response(status=308, headers={"Location": "/v2/chat/completions"})
        assert body is not None and body["model"] == "m"  # the body came along, on the same origin
        return json_response(completion("B"))

    with ScriptedServer(moved) as srv:
        resp = _one_request(srv.url)
        assert srv.paths == ["/v1/chat/completions", "/v2/chat/completions"]
    assert resp.status == "ok" and resp.text == "B"


def _fragments(secret: str, n: int = 8) -> list[str]:
    return [secret[i:i + n] for i in range(len(secret) - n + 1)]


def test_echoed_key_scrubbed_before_the_message_is_cut(secret_env: tuple[str, dict[str, str]]) -> None:
    """A 400 that echoes the Authorization header at character 280 used to leave a 20-character fragment after
    the cut to 300; a server echoing only a 30-character fragment of the key left it whole."""
    from aiohttp import web

    from tests.scripted_server import ScriptedServer, json_response

    secret, _ = secret_env
    messages = ["x" * 280 + f" headers: {{'Authorization': 'Bearer {secret}'}}",
                f"bad key ...{secret[4:34]}...", "y" * 295 + secret, f"{secret[:12]}|{secret[-9:]}"]
    errors = []
    os.environ["MEDR2_RELIABILITY_KEY"] = secret
    try:
        for message in messages:
            async def respond(request: web.Request, raw: bytes, body: Any, m: str = message) -> web.StreamResponse:
                return json_response({"error": {"message": m}}, status=400)

            with ScriptedServer(respond) as srv:
                resp = _one_request(srv.url, retries=0, api_key_env="MEDR2_RELIABILITY_KEY")
            assert resp.status == "error" and "HTTP 400" in (resp.error or "")
            errors.append(resp.error or "")
    finally:
        del os.environ["MEDR2_RELIABILITY_KEY"]
    leaks = [(e, f) for e in errors for f in _fragments(secret) if f in e]
    assert not leaks, leaks
    assert all("***" in e for e in errors[1:])  # (in the first, the masked key lies past the cut)


def test_credentials_in_base_url_never_written(tmp_path: Path) -> None:
    from aiohttp import web

    from tests.scripted_server import ScriptedServer, completion, json_response

    auth_seen: set[str] = set()

    async def respond(request: web.Request, raw: bytes, body: Any) -> web.StreamResponse:
        auth_seen.add(request.headers.get("Authorization", ""))
        return json_response(completion(default_answer(body)))

    password = "pw-" + hashlib.sha256(b"medr2").hexdigest()[:20]
    bench, run = tmp_path / "bench", tmp_path / "run"
    make_bench(bench, n_cases=1)
    with ScriptedServer(respond) as srv:
        url = f"http://medr2user:{password}@127.0.0.1:{srv.port}/v1"
        done = _run(["eval", "--split", "all", "--bench", str(bench), "--model", "openai:m", "--out", str(run),
                     "--base-url", url,
                     "--no-progress"])
        _run(["score", str(run), "--mixed-splits"])
    assert auth_seen and all(a.startswith("Basic ") for a in auth_seen)  # the credentials were used ...
    assert not _grep_tree(tmp_path, password) and password not in done.stderr + done.stdout  # ... never written
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["model"]["settings"]["base_urls"] == [f"http://***@127.0.0.1:{srv.port}/v1"]
    assert any(f"http://***@127.0.0.1:{srv.port}/v1" in a for a in manifest["invocations"][0]["command"])


def test_huge_answers_scored_fast_and_stored_whole(tmp_path: Path) -> None:
    """A 50 MB answer took 10-30 s to extract; the readers now scan a bounded part of it."""
    import time

    from medr2 import BoxConvention, Prediction
    from medr2.scoring.scorer import score_items

    items = make_bench(tmp_path / "bench", n_cases=1).items
    mcq = next(it for it in items if it.form == "mcq" and it.variant == "clean")
    yn = next(it for it in items if it.form == "yesno" and it.variant == "clean")
    box = next(it for it in items if it.form == "box" and it.variant == "clean")
    filler = "lorem ipsum (B) dolor [1, 2, 3, 4] no " * 1_400_000  # ~53 MB, full of answer-like text
    preds = [Prediction(model_key="m", item_id=it.item_id, mode="independent", request_hash=it.item_id,
                        raw=f"The answer is {ans}. {filler}", status="ok")
             for it, ans in ((mcq, mcq.answer), (yn, yn.answer), (box, "[1, 2, 30, 40]"))]
    t0 = time.perf_counter()
    scores = score_items(items, preds, BoxConvention())
    elapsed = time.perf_counter() - t0
    assert elapsed < 5.0, elapsed
    assert [s.verdict for s in scores][:2] == ["correct", "correct"]


def test_scrub_secret_leaves_no_fragment_property() -> None:
    """For any text built around pieces of the key, no 8-character piece of it survives the scrub."""
    from hypothesis import given, settings, strategies as st

    from medr2.redact import scrub_secret

    alphabet = "abcdef0123-_ XYZ"

    @settings(deadline=None, max_examples=300)
    @given(secret=st.text(alphabet, min_size=8, max_size=60), pieces=st.lists(
        st.tuples(st.text(alphabet, max_size=20), st.integers(0, 59), st.integers(0, 60)), max_size=6))
    def check(secret: str, pieces: list[tuple[str, int, int]]) -> None:
        text = "".join(noise + secret[a:a + n] for noise, a, n in pieces)
        out = scrub_secret(text, secret)
        assert not [f for f in _fragments(secret) if f in out]

    check()


def test_redact_credentials_in_urls() -> None:
    from medr2.redact import redact_credentials

    assert redact_credentials("http://u:p@h:1/v1") == "http://***@h:1/v1"
    assert redact_credentials("x --base-url=https://tok@api.example/v1?api_key=abc&x=1") == \
        "x --base-url=https://***@api.example/v1?api_key=***&x=1"
    assert redact_credentials("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"


def test_gzip_bomb_body_is_capped_after_decompression() -> None:
    import gzip

    from aiohttp import web

    from tests.scripted_server import ScriptedServer

    bomb = gzip.compress(b'{"choices": [{"message": {"content": "' + b"A" * (64 << 20) + b'"}}]}', 9)

    async def respond(request: web.Request, raw: bytes, body: Any) -> web.StreamResponse:
        return web.Response(body=bomb, headers={"Content-Encoding": "gzip", "Content-Type": "application/json"})

    assert len(bomb) < 1 << 20
    with ScriptedServer(respond) as srv:
        resp = _one_request(srv.url, retries=0, max_response_bytes=8 << 20)
    assert resp.status == "error" and "larger than 8388608 bytes" in (resp.error or "")


def test_deeply_nested_bodies_are_clear_errors() -> None:
    """JSON nested 5,000 deep in a 200 or an error body: a malformed-body message, never RecursionError."""
    from medr2.models.openai import Transient, error_text, read_completion

    deep = b'{"error": ' * 5000 + b"1" + b"}" * 5000
    with pytest.raises(Transient, match="malformed response body"):
        read_completion(b"[" * 5000 + b"]" * 5000)
    assert error_text(deep).startswith('{"error": {"error"') and len(error_text(deep)) == 300


def test_url_credentials_and_api_key_together_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from medr2 import BadInput
    from medr2.models.openai import OpenAIAdapter

    monkeypatch.setenv("MEDR2_TEST_KEY", "sk-test-123456789")
    with pytest.raises(BadInput, match="cannot be combined") as e:
        OpenAIAdapter("m", base_urls=["http://u:secretpw@127.0.0.1:1/v1"], api_key_env="MEDR2_TEST_KEY")
    assert "secretpw" not in str(e.value)
