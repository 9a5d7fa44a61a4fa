"""Two OpenAI-compatible servers behind a gateway (SGLang's router, ``sglang-router`` from .venv-router, made by
scripts/setup_router.sh): to medr2 it is one ``--base-url``; the stored run equals one against a server directly,
and both servers answered a share of the requests (docs/serving.md, "Several servers behind a gateway")."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

import medr2
from medr2.run.store import Store
from tests.openai_server import OpenAIServer, default_answer
from tests.run_fixtures import make_bench
from tests.servers import REPO, free_port, serve

pytestmark = pytest.mark.slow

ROUTER_VENV = REPO / ".venv-router"
ROUTER_READY_S = 120.0


def router_python() -> Path:
    if not (ROUTER_VENV / ".medr2-ready").exists():
        pytest.skip(f"no router environment at {ROUTER_VENV}: run `bash scripts/setup_router.sh` (.ci/run does)")
    return ROUTER_VENV / "bin" / "python"


def rows(run: Path) -> set[tuple[Any, ...]]:
    with Store.open(run) as st:
        return {(r.prediction.request_hash, r.prediction.item_id, r.prediction.mode, r.prediction.raw,
                 r.prediction.status, r.prediction.completion_tokens) for r in st.iter_predictions()}


def wait_workers(origin: str, n: int, timeout_s: float = 60.0) -> dict[str, Any]:
    """The router's ``/readiness`` once it counts ``n`` healthy workers (it registers them one by one)."""
    t0 = time.monotonic()
    last: dict[str, Any] = {}
    while time.monotonic() - t0 < timeout_s:
        try:
            with urllib.request.urlopen(origin + "/readiness", timeout=5) as r:  # noqa: S310 - local router
                last = json.loads(r.read())
            if last.get("healthy_workers") == n:
                return last
        except OSError as e:
            last = {"error": str(e)}
        time.sleep(0.5)
    raise AssertionError(f"the router did not count {n} healthy workers in {timeout_s:g} s: {last}")


def test_two_servers_behind_sglang_router_answer_as_one_endpoint(tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    make_bench(bench, n_cases=6)
    modes = "independent,chain-own"
    keys: list[frozenset[str]] = []

    def answer(body: dict[str, Any]) -> str:
        keys.append(frozenset(body))
        return default_answer(body)

    with OpenAIServer(answer=answer) as a, OpenAIServer(answer=answer) as b:
        medr2.evaluate(bench, "openai:test", tmp_path / "direct", split="all", mode=modes, base_url=a.url)
        direct_requests = a.stats.requests
        port = free_port()
        cmd = [str(router_python()), "-m", "sglang_router.launch_router", "--host", "127.0.0.1", "--port", str(port),
               "--worker-urls", a.url.removesuffix("/v1"), b.url.removesuffix("/v1"), "--policy", "round_robin"]
        with serve("sglang-router", cmd, url=f"http://127.0.0.1:{port}/v1", model="", log=tmp_path / "router.log",
                   ready_s=ROUTER_READY_S) as router:
            wait_workers(f"http://127.0.0.1:{port}", 2)
            direct_keys, keys[:] = set(keys), []
            summary = medr2.evaluate(bench, "openai:test", tmp_path / "gateway", split="all", mode=modes,
                                     base_url=router.url,
                                     concurrency=4)
        via_a, via_b = a.stats.requests - direct_requests, b.stats.requests
    sent = summary.sent
    assert sent == direct_requests and all(c.error == 0 for c in summary.modes.values())
    # the same answers; the test server's prompt_tokens count body bytes, and the router re-writes the body:
    # max_tokens becomes max_completion_tokens, and SGLang's sampling fields are added at their defaults
    assert rows(tmp_path / "gateway") == rows(tmp_path / "direct")
    assert all("max_tokens" in k for k in direct_keys)
    assert keys and all("max_completion_tokens" in k and "max_tokens" not in k and "skip_special_tokens" in k
                        for k in keys)
    print(f"gateway: {sent} requests, {via_a} answered by server a, {via_b} by server b")
    assert via_a + via_b == sent  # each request reached one server, once
    assert via_a > 0 and via_b > 0  # round robin: both servers answered
