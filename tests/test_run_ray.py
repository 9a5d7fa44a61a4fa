"""``medr2 eval --executor ray``: a real local Ray cluster (``ray start --head`` on this machine, 2 CPUs) sends the
pending requests through ray.data.llm's HTTP processor to a real test server on 127.0.0.1.

The slow tests share one cluster (module fixture; ``ray stop`` at the end). Measured on the 2-core dev machine
(shared with other jobs, load average ~15), last run: the fixture's ``ray start`` 17 s and ``ray stop`` 10 s, the
equality test 62 s, the kill test 49 s, the retry test 12 s, the build test 32 s: 184 s for the module (123 s in
an earlier run without the retry test).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from medr2 import BadInput, GenSettings, Message, Part, Request
from medr2.cli import app
from medr2.models.openai import OpenAIAdapter
from medr2.run.store import Store
from tests.openai_server import FaultPlan, OpenAIServer, default_answer
from tests.run_fixtures import make_bench, stored_count
from tests.servers import free_port

EVAL = "import sys; from medr2.cli import app; app(['eval'] + sys.argv[1:])"
RAY = str(Path(sys.executable).with_name("ray"))


class Recorder:
    """The test server's answer function: counts every answered request by its body as JSON (canonical: sorted
    keys), so bodies sent by the local client and by Ray's HTTP stage (which re-serializes them) compare."""

    def __init__(self) -> None:
        self.bodies: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> str:
        with self._lock:
            self.bodies[canonical(body)] += 1
        return default_answer(body)


def canonical(body: Any) -> str:
    return json.dumps(body, sort_keys=True, ensure_ascii=False)


# Ray resolves 127.0.0.1 to the machine's outward address (``resolve_ip_for_localhost``) unless its own switch
# for single-machine clusters is off; with it off, every Ray process binds and connects on the loopback only
# (checked with ``ss``: no connection to another address). Ray reads it when ``ray`` is first imported, and
# ``ray start``, the workers and the CLI runs below inherit it. It is Ray's setting for this test cluster, not
# a medr2 option.
LOOPBACK_ONLY = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
os.environ.update(LOOPBACK_ONLY)  # at collection, before any test of the session imports ray


def _ray_missing() -> str | None:
    try:
        import ray.data.llm  # noqa: F401
    except ImportError as e:
        return f"ray[data] is not installed (pip install 'medr2[ray]'): {e}"
    return None


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[str]:
    """A Ray head on this machine with the 2 CPUs (no dashboard); its address; ``ray stop`` afterwards."""
    missing = _ray_missing()
    if missing:
        pytest.skip(missing)
    port = free_port()
    started = subprocess.run([RAY, "start", "--head", "--num-cpus", "2", "--include-dashboard=false",
                              "--node-ip-address", "127.0.0.1", "--port", str(port), "--disable-usage-stats"],
                             capture_output=True, text=True, timeout=180)
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        yield f"127.0.0.1:{port}"
    finally:
        subprocess.run([RAY, "stop"], capture_output=True, timeout=120)


def _rows(run: Path) -> dict[str, Any]:
    with Store.open(run) as st:
        return {r.prediction.request_hash: r for r in st.iter_predictions(with_request=True)}


@pytest.mark.slow
def test_ray_answers_equal_a_local_run(ray_cluster: str, tmp_path: Path) -> None:
    """Same requests, same stored answers, one row per request, each request sent once; the run scores."""
    import medr2

    bench = tmp_path / "bench"
    n_items = len(make_bench(bench, n_cases=3).items)
    modes = "independent,chain-gold"
    local_rec, ray_rec = Recorder(), Recorder()
    with OpenAIServer(answer=local_rec) as local_srv, OpenAIServer(answer=ray_rec) as srv_a, \
            OpenAIServer(answer=ray_rec) as srv_b:
        medr2.evaluate(bench, "openai:m", tmp_path / "local", split="all", mode=modes, base_url=local_srv.url,
                       concurrency=2)
        t0 = time.perf_counter()
        summary = medr2.evaluate(bench, "openai:m", tmp_path / "ray", split="all", mode=modes, base_url=[srv_a.url,
                                                                                                         srv_b.url],
                                 concurrency=2, executor="ray", ray_address=ray_cluster)
        ray_s = time.perf_counter() - t0
        served = (srv_a.stats.requests, srv_b.stats.requests)
    assert summary.sent == 2 * n_items and not summary.interrupted
    local, ray_rows = _rows(tmp_path / "local"), _rows(tmp_path / "ray")
    assert len(local) == len(ray_rows) == 2 * n_items
    assert set(local) == set(ray_rows)  # the same request hashes
    slots = Counter((r.prediction.item_id, r.prediction.mode) for r in ray_rows.values())
    assert max(slots.values()) == 1
    for h, a in local.items():
        b = ray_rows[h]
        pa, pb = a.prediction, b.prediction
        # prompt tokens too: the test server counts them from the raw body, which is byte-identical
        assert (pa.item_id, pa.mode, pa.model_key, pa.status, pa.raw, pa.finish_reason, pa.prompt_tokens,
                pa.completion_tokens, pa.reasoning, pa.error) == (
            pb.item_id, pb.mode, pb.model_key, pb.status, pb.raw, pb.finish_reason, pb.prompt_tokens,
            pb.completion_tokens, pb.reasoning, pb.error), h
        assert (a.step, a.chain_id, a.meta, a.request) == (b.step, b.chain_id, b.meta, b.request), h
    # the Ray path sent the bodies the local client sent, each as often (identical items share a body)
    assert ray_rec.bodies == local_rec.bodies
    assert min(served) > 0 and sum(served) == 2 * n_items  # both base URLs got requests
    manifest = json.loads((tmp_path / "ray" / "manifest.json").read_text())
    assert manifest["identity"] == json.loads((tmp_path / "local" / "manifest.json").read_text())["identity"]
    assert manifest["invocations"][-1]["executor"]["name"] == "ray"
    assert manifest["invocations"][-1]["status"] == "complete"
    # scoring reads the run unchanged: the same metrics (but the run's own folder)
    scored = [medr2.score(tmp_path / name, mixed_splits=True) for name in ("ray", "local")]
    assert [s["run"].pop("run_dir") for s in scored] == [str(tmp_path / "ray"), str(tmp_path / "local")]
    assert scored[0] == scored[1]
    # the executor is no part of the run's identity: the local executor resumes the Ray run and finds it all stored
    with OpenAIServer(answer=local_rec) as srv:
        again = medr2.evaluate(bench, "openai:m", tmp_path / "ray", split="all", mode=modes, base_url=srv.url,
                               concurrency=2)
        assert again.sent == 0 and srv.stats.requests == 0
    assert sum(c.stored_before for c in again.modes.values()) == 2 * n_items
    test_the_executor_is_checked_before_the_run_folder_is_touched(tmp_path / "refused", slow=True)
    print(f"ray run of {2 * n_items} requests: {ray_s:.1f}s")


def _body(bench: Path, request_doc: list[dict[str, Any]], settings: GenSettings) -> str:
    """The canonical body the openai client builds for a stored request (messages from the store's request
    column)."""
    msgs = tuple(Message(m["role"], tuple(Part("text", text=p["text"]) if p["type"] == "text"
                                          else Part("image", image=p["image"], image_sha256=p["sha256"])
                                          for p in m["parts"])) for m in request_doc)
    body = OpenAIAdapter("m", base_urls=["http://127.0.0.1:9/v1"]).body(Request("k", msgs, settings, bench))
    return canonical(json.loads(body))


@pytest.mark.slow
def test_ray_driver_killed_then_resumed(ray_cluster: str, tmp_path: Path) -> None:
    """SIGKILL the driver mid-run, rerun: every request stored once, none that was stored is requested again."""
    bench = tmp_path / "bench"
    total = len(make_bench(bench, n_cases=8).items)
    run = tmp_path / "run"
    rec = Recorder()
    with OpenAIServer(answer=rec, delay_s=0.2) as srv:
        args = ["--bench", str(bench), "--split", "all", "--model", "openai:m", "--out", str(run), "--base-url",
                srv.url, "--concurrency", "2", "--no-progress", "--executor", "ray", "--ray-address", ray_cluster,
                "--ray-batch-size", "2"]
        proc = subprocess.Popen([sys.executable, "-c", EVAL, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.time() + 240
        while stored_count(run / "store.sqlite") < 24:  # answers stream back once the Ray workers are up
            assert proc.poll() is None, proc.communicate()
            assert time.time() < deadline, "the Ray run did not store 24 answers in time"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL
        served_at_kill = srv.stats.requests
        stored_at_kill = set(_rows(run))
        time.sleep(5)
        served_after = srv.stats.requests
        assert 24 <= len(stored_at_kill) < total
        done = subprocess.run([sys.executable, "-c", EVAL, *args], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    rows = _rows(run)
    assert len(rows) == total  # no answer lost
    slots = Counter((r.prediction.item_id, r.prediction.mode) for r in rows.values())
    assert max(slots.values()) == 1 and all(r.prediction.status == "ok" for r in rows.values())
    manifest = json.loads(run.joinpath("manifest.json").read_text())
    gen = manifest["identity"]["generation"]
    settings = GenSettings(gen["max_new_tokens"], gen["temperature"], gen["top_p"], gen["seed"])
    asked = {h: rec.bodies[_body(bench, r.request, settings)] for h, r in rows.items()}
    assert all(asked[h] == 1 for h in stored_at_kill)  # none requested twice that was stored
    assert all(n >= 1 for n in asked.values()) and sum(rec.bodies.values()) == sum(asked.values())
    # requested twice: only answers that were in flight or not yet handed to the driver at the kill
    print(f"stored at kill {len(stored_at_kill)}/{total}, served at kill {served_at_kill}, 5 s later {served_after}, "
          f"max in flight {srv.stats.max_in_flight}; requested twice: {sum(n - 1 for n in asked.values())}")
    assert [i["status"] for i in manifest["invocations"]] == ["running", "complete"]


@pytest.mark.slow
def test_ray_retries_429_and_stores_a_refused_request_as_its_error(ray_cluster: str, tmp_path: Path) -> None:
    """Through ray.data.llm's HTTP stage: a 429 is retried (``--retries``, ``--backoff``) and answered; a 400 is not
    retried and is stored as that request's error with the server's message; the rest of the run goes on."""
    import medr2

    bench = tmp_path / "bench"
    n_items = len(make_bench(bench, n_cases=2).items)

    def refuse(body: dict[str, Any]) -> int | None:
        return 400 if "yes or no" in json.dumps(body["messages"][-1]) else None

    plan = FaultPlan(rate_429=0.3, max_faults_per_body=1, permanent=refuse, seed=2)
    with OpenAIServer(plan) as srv:
        summary = medr2.evaluate(bench, "openai:m", tmp_path / "run", split="all", base_url=srv.url, concurrency=2,
                                 backoff=0.05, executor="ray", ray_address=ray_cluster)
        faults = dict(srv.stats.faults)
    rows = _rows(tmp_path / "run")
    assert len(rows) == n_items and faults.get("429", 0) > 0
    errors = [r.prediction for r in rows.values() if r.prediction.status == "error"]
    assert errors and all("scripted failure" in (e.error or "") for e in errors)
    counts = summary.modes["independent"]
    assert counts.error == len(errors) and counts.ok == n_items - len(errors)


@pytest.mark.slow
def test_ray_build_is_byte_identical_to_the_local_build(ray_cluster: str, tmp_path: Path,
                                                        build_sample: Any) -> None:
    """``medr2 build --executor ray``: the worker passes as Ray tasks; the same bench, byte for byte."""
    import hashlib as h

    from medr2.bench import load_bench

    opts = {"n_cases": 6, "variants": "T1,V1,V2", "name": "b"}
    build_sample(tmp_path / "local", workers=2, **opts)
    t0 = time.perf_counter()
    build_sample(tmp_path / "ray", executor="ray", ray_address=ray_cluster, **opts)
    print(f"ray build: {time.perf_counter() - t0:.1f}s")

    def files(root: Path) -> dict[str, str]:
        return {str(p.relative_to(root)): h.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*"))
                if p.is_file()}

    local, ray_files = files(tmp_path / "local"), files(tmp_path / "ray")
    assert local == ray_files and any(k.startswith("images/") for k in local)
    assert load_bench(tmp_path / "ray").checksum == load_bench(tmp_path / "local").checksum
    assert any(it.variant != "clean" for it in load_bench(tmp_path / "ray").items)


def test_the_executor_is_checked_before_the_run_folder_is_touched(tmp_path: Path, slow: bool = False) -> None:
    """Fast: no Ray import. The slow equality test runs it again with ``slow=True`` (ray refuses a non-openai
    model)."""
    bench = tmp_path / "bench"
    make_bench(bench, n_cases=1)
    base = ["eval", "--split", "all", "--bench", str(bench), "--out", str(tmp_path / "run"), "--no-progress"]

    def refused(*args: str) -> str:
        r = CliRunner().invoke(app, [*base, *args])
        assert isinstance(r.exception, BadInput) and r.exception.field in ("--executor", "--ray-address"), r.output
        return str(r.exception)

    assert "unknown executor 'nope'; known: local, ray" in refused("--model", "baseline:oracle", "--executor", "nope")
    assert "go with --executor ray" in refused("--model", "baseline:oracle", "--ray-address", "127.0.0.1:1")
    if _ray_missing() is None and slow:
        assert "OpenAI-compatible servers" in refused("--model", "baseline:oracle", "--executor", "ray")
    assert not (tmp_path / "run").exists()


def test_the_ray_workers_send_the_local_clients_body_bytes(tmp_path: Path) -> None:
    """Fast, no Ray: what the Ray workers run (``_preprocess``, then the HTTP stage's ``_BodySession``) posts the
    exact bytes of the local client's body; a body that cannot be built becomes the row's error, not a request."""
    import asyncio

    from medr2.run import ray_executor as rx
    from medr2.run.prompts import get_mode, messages_json, render_messages

    bench = make_bench(tmp_path / "bench", n_cases=1)
    item = bench.items[0]
    conv = OpenAIAdapter("m", base_urls=["http://127.0.0.1:9/v1"]).box_convention
    msgs = render_messages(item, mode=get_mode("independent"), history=[], conv=conv)
    settings = GenSettings(max_new_tokens=7, temperature=0.0, seed=3)
    spec = rx._BodySpec(model="m", extra_body=json.dumps({"top_k": 2}), max_tokens_field="max_tokens",
                        bench_root=str(bench.root), settings=json.dumps(rx._settings_dict(settings)))
    row = rx._request_row("h1", item, messages_json(msgs))
    out = rx._preprocess(spec, dict(row))
    assert out["__inference_error__"] == ""
    local = OpenAIAdapter("m", base_urls=["http://127.0.0.1:9/v1"], extra_body={"top_k": 2}).body(
        Request("h1", msgs, settings, bench.root, item.item_id))
    received: list[bytes] = []

    async def post(url: str) -> None:
        async with rx._BodySession(10.0) as session:
            # as ray.data.llm's HTTP stage sends it: the payload as JSON text
            request = session.post(url, headers={"Content-Type": "application/json"}, data=json.dumps(out["payload"]))
            async with await request as r:
                assert r.status == 200

    with OpenAIServer(answer=lambda body: received.append(canonical(body)) or "A") as srv:
        asyncio.run(post(srv.url + "/chat/completions"))
        assert list(srv.stats.by_body) == [hashlib.sha256(local).hexdigest()]  # the very bytes
    assert received == [canonical(json.loads(local))]
    # an image that is not there: the row carries the error and skips the HTTP stage
    (bench.root / next(p.image for m in msgs for p in m.parts if p.type == "image")).unlink()
    rx._builder.cache_clear()
    bad = rx._preprocess(spec, dict(row))
    assert "cannot read image" in bad["__inference_error__"]


def test_the_ray_path_stores_the_local_clients_logprob_confidences(tmp_path: Path) -> None:
    """Fast, no Ray (issue 45): with ``--confidence logprobs`` the Ray workers' body asks for the log-probabilities
    (the local client's body bytes), and the driver reads the server's answer into the same stored confidence as the
    local client, for every item of a built bench: mapped where the server sent log-probabilities, absent with the
    same note where it sent none (the server below sends them for about half of its "A"/"yes" answers)."""
    import asyncio

    from medr2 import ModelConfig
    from medr2.models.registry import load_adapter
    from medr2.run import ray_executor as rx
    from medr2.run.prompts import get_mode, messages_json, render_messages
    from tests.scripted_server import ScriptedServer, completion, json_response
    from tests.test_score_calibration_e2e import _logprobs

    async def respond(request: Any, raw: bytes, body: Any) -> Any:
        answer = default_answer(body)
        out = completion(answer)
        h = hashlib.sha256(raw).digest()
        if answer in ("A", "yes") and h[1] % 2:
            out["choices"][0]["logprobs"] = _logprobs(answer, 0.4 + 0.55 * h[0] / 255)  # one per request
        return json_response(out)

    bench = make_bench(tmp_path / "bench", n_cases=2)
    settings = GenSettings(max_new_tokens=7, temperature=0.0, seed=0)
    with ScriptedServer(respond) as srv:
        # the adapter as `medr2 eval --confidence logprobs` makes it (runner._with_confidence: top_logprobs=20)
        local = load_adapter(ModelConfig("openai:m", base_urls=(srv.url,), extra={"top_logprobs": 20}))
        assert isinstance(local, OpenAIAdapter)
        spec = rx._BodySpec(model="m", extra_body=json.dumps(local.extra_body, sort_keys=True),
                            max_tokens_field=local.max_tokens_field, bench_root=str(bench.root),
                            settings=json.dumps(rx._settings_dict(settings)))
        kinds: Counter[str] = Counter()
        try:
            for item in bench.items:
                msgs = render_messages(item, mode=get_mode("independent"), history=[], conv=local.box_convention)
                req = Request(f"h-{item.item_id}", msgs, settings, bench.root, item.item_id, meta={"item": item})
                body = rx._preprocess(spec, rx._request_row(req.key, item, messages_json(msgs)))["payload"][rx.BODY_KEY]
                assert body.encode("utf-8") == local.body(req)
                assert json.loads(body)["logprobs"] is True and json.loads(body)["top_logprobs"] == 20

                async def post(payload: str = body) -> bytes:
                    async with rx._BodySession(10.0) as session, \
                            await session.post(srv.url + "/chat/completions", data=json.dumps({rx.BODY_KEY: payload}),
                                               headers={"Content-Type": "application/json"}) as r:
                        return await r.read()

                # what ray.data.llm's HTTP stage keeps (the body as JSON), through medr2's postprocess, to the driver
                row = rx._postprocess({"request_hash": req.key, "http_response": json.loads(asyncio.run(post()))})
                via_ray = rx._response(local, {req.key: item}, row)
                [direct] = local.generate([req])
                assert (via_ray.status, via_ray.text, via_ray.confidence, via_ray.notes) == \
                    (direct.status, direct.text, direct.confidence, direct.notes)
                if item.form not in ("mcq", "yesno"):
                    kinds["no answers to map"] += 1
                    assert direct.confidence is None and not direct.notes
                elif direct.confidence is not None:
                    kinds["logprobs"] += 1
                    assert direct.confidence.source == "logprobs" and direct.text in direct.confidence.probs
                    assert 0.0 < direct.confidence.probs[direct.text or ""] <= 1.0
                else:
                    kinds["none sent"] += 1
                    assert any(n.startswith("no confidence: the server sent no token log-probabilities")
                               for n in direct.notes), direct.notes
        finally:
            local.close()
    assert kinds["logprobs"] > 0 and kinds["none sent"] > 0 and kinds["no answers to map"] > 0, kinds
