"""A dead endpoint fails fast and says why (issue 50, point 4).

Against a real closed port on 127.0.0.1, ``medr2 eval`` stops within seconds (not after every item's retries)
with exit 1 and a console message naming the URL and the last error; against a real server that dies mid-run,
the run stops once requests in a row cannot connect, every answer before is stored, and the console shows the
last error. ``--limit N`` sends N requests per mode (plus retries): the server counts them.
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from medr2.run.store import Store
from tests.openai_server import OpenAIServer, default_answer
from tests.run_fixtures import make_bench
from tests.test_run_selection import medr2


@pytest.fixture(scope="module")
def bench_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("dead") / "bench"
    make_bench(root, n_cases=8)  # 4 test cases: 44 test items
    return root


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed when the block ends: connections are refused


def _eval(bench_dir: Path, run: Path, url: str, *extra: str) -> list[str | Path]:
    return ["eval", "--bench", bench_dir, "--model", "openai:test", "--base-url", url, "--out", run,
            "--no-progress", *extra]


def test_a_closed_port_fails_within_seconds_naming_the_url(bench_dir: Path, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    t0 = time.perf_counter()
    code, _, err = medr2(*_eval(bench_dir, tmp_path / "run", url, "--retries", "5", "--backoff", "0.5"))
    elapsed = time.perf_counter() - t0
    assert code == 1, err
    assert "Traceback" not in err
    assert f"cannot connect to {url}" in err and "last error: ClientConnectorError" in err, err
    assert elapsed < 15, elapsed  # 44 items x 6 attempts with backoff would take minutes


def test_a_server_dying_mid_run_stops_the_run_and_shows_the_last_error(bench_dir: Path, tmp_path: Path) -> None:
    served = [0]
    srv: OpenAIServer

    def answer(body: dict[str, Any]) -> str:
        served[0] += 1
        if served[0] == 6:  # the server goes away after its sixth answer (from another thread: stop joins)
            threading.Thread(target=srv.stop, daemon=True).start()
        return default_answer(body)

    srv = OpenAIServer(answer=answer)
    srv.start()
    run = tmp_path / "run"
    t0 = time.perf_counter()
    try:
        code, _, err = medr2(*_eval(bench_dir, run, srv.url, "--retries", "2", "--backoff", "0.01",
                                    "--concurrency", "2"))
    finally:
        srv.stop()
    elapsed = time.perf_counter() - t0
    assert code == 1, err
    assert "stopped answering" in err and srv.url in err and "last error: ClientConnectorError" in err, err
    assert "--retry-errors" in err
    assert elapsed < 60, elapsed
    with Store.open(run) as store:
        stored = list(store.iter_predictions())
    ok = [p for p in stored if p.prediction.status == "ok"]
    assert len(ok) >= 5  # what was answered before the server died is kept
    assert len(stored) < 44  # the run stopped: it did not try every remaining item


def test_errors_show_the_last_one_on_the_console(bench_dir: Path, tmp_path: Path) -> None:
    from tests.openai_server import FaultPlan

    plan = FaultPlan(permanent=lambda body: 400)  # every request answered 400: reached, never ok
    with OpenAIServer(plan) as srv:
        code, out, err = medr2(*_eval(bench_dir, tmp_path / "run", srv.url, "--limit", "3"))
    assert code == 1, err
    assert "last error: HTTP 400 from " in err.replace("\n", " "), err


@pytest.mark.parametrize("limit", [1, 5, 11, 23])
def test_limit_sends_that_many_requests(bench_dir: Path, tmp_path: Path, limit: int) -> None:
    with OpenAIServer() as srv:
        code, _, err = medr2(*_eval(bench_dir, tmp_path / "run", srv.url, "--limit", str(limit),
                                    "--mode", "independent,blind"))
        requests = srv.stats.requests
    assert code == 0, err
    with Store.open(tmp_path / "run") as store:
        items = {p.prediction.item_id for p in store.iter_predictions()}
    assert 1 <= len(items) <= max(limit, 11)  # whole cases (11 items each), at least one
    assert len(items) <= limit or len(items) == 11
    assert requests == 2 * len(items)  # one request per item and mode, no more
