"""``medr2 eval --serve CMD``: real server processes (tests/openai_server.py run as a script, ``http.server``,
shell commands that crash), real ``medr2`` processes; the server's process group must be gone afterwards."""

from __future__ import annotations

import json
import os
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from medr2 import BadInput
from medr2.run.serve import plan_serve
from medr2.run.store import Store
from tests.openai_server import OpenAIServer
from tests.run_fixtures import make_bench
from tests.servers import free_port

REPO = Path(__file__).resolve().parent.parent
SRC = str(REPO / "src")
SERVER = f"{shlex.quote(sys.executable)} {shlex.quote(str(REPO / 'tests' / 'openai_server.py'))} --port {{port}}"


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bench")
    make_bench(root, n_cases=6)
    return root


def medr2_cmd(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "medr2", *map(str, args)]


def sigint(disposition: signal.Handlers) -> Any:
    """A ``preexec_fn`` that starts the child with SIGINT ``disposition`` (whatever this test process has:
    pytest started in the background by a script ignores SIGINT, and its children would inherit that)."""
    return lambda: signal.signal(signal.SIGINT, disposition)


def medr2(*args: str | Path, timeout: float = 180,
          sigint_as: signal.Handlers = signal.SIG_DFL) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC, "COLUMNS": "200"}
    return subprocess.run(medr2_cmd(*args), capture_output=True, text=True, timeout=timeout, env=env,
                          preexec_fn=sigint(sigint_as))


def eval_args(bench: Path, out: Path, *more: str | Path) -> list[str | Path]:
    return ["eval", "--split", "all", "--bench", bench, "--model", "openai:test", "--out", out, "--no-progress", *more]


def served(pidfile: Path, then: str) -> str:
    """A --serve command that writes its process group id (the shell's pid) to ``pidfile`` first."""
    return f"echo $$ > {shlex.quote(str(pidfile))}; {then}"


def group_gone(pidfile: Path) -> bool:
    try:
        os.killpg(int(pidfile.read_text()), 0)
    except ProcessLookupError:
        return True
    return False


def rows(run: Path) -> set[tuple[Any, ...]]:
    with Store.open(run) as st:
        return {(r.prediction.request_hash, r.prediction.item_id, r.prediction.mode, r.prediction.raw,
                 r.prediction.status) for r in st.iter_predictions()}


def stored(run: Path) -> int:
    """Rows stored so far by a running eval (0 while its store is not there or not set up yet)."""
    try:
        return len(rows(run)) if (run / "store.sqlite").exists() else 0
    except (sqlite3.Error, BadInput):
        return 0


def last_invocation(run: Path) -> dict[str, Any]:
    inv: dict[str, Any] = json.loads((run / "manifest.json").read_text())["invocations"][-1]
    return inv


def test_a_served_run_equals_a_run_against_the_server_started_by_hand(bench: Path, tmp_path: Path) -> None:
    """medr2.evaluate(serve=...) (what ``--serve`` calls): health waited for (the command sleeps 1 s first),
    the same stored rows as against the same server started by hand, the server stopped after."""
    import medr2

    with OpenAIServer() as srv:
        medr2.evaluate(bench, "openai:test", tmp_path / "hand", split="all", base_url=srv.url, limit=12)
    pidfile = tmp_path / "pid"
    summary = medr2.evaluate(bench, "openai:test", tmp_path / "served", split="all", limit=12,
                             serve=served(pidfile, f"sleep 1; exec {SERVER}"))
    counts = summary.modes["independent"]
    assert counts.ok == counts.planned > 0 and counts.error == 0
    assert group_gone(pidfile)
    assert rows(tmp_path / "served") == rows(tmp_path / "hand")
    serve = last_invocation(tmp_path / "served")["serve"]
    assert serve["ready_s"] >= 1.0 and serve["log"] == "serve.log" and "{port}" not in serve["command"]


@pytest.mark.slow
def test_shards_served_per_task_merge_to_the_run_against_a_hand_started_server(bench: Path, tmp_path: Path) -> None:
    """The Slurm array sequence at small scale: each shard starts its own server (health waited for: the
    command sleeps 1 s before serving), evaluates, stops it; the merged run equals one run against the same
    server started by hand."""
    modes = ("--mode", "independent,chain-own")
    with OpenAIServer() as srv:
        hand = medr2(*eval_args(bench, tmp_path / "hand", "--base-url", srv.url, *modes))
    assert hand.returncode == 0, hand.stderr
    shards = []
    for i in range(2):
        out, pidfile = tmp_path / f"shard{i}", tmp_path / f"pid{i}"
        done = medr2(*eval_args(bench, out, "--shard", f"{i}/2", *modes,
                                "--serve", served(pidfile, f"sleep 1; exec {SERVER}")))
        assert done.returncode == 0, done.stderr
        assert group_gone(pidfile)
        inv = last_invocation(out)
        assert inv["status"] == "complete"
        assert inv["serve"]["ready_s"] >= 1.0  # it waited through the server's start
        assert inv["serve"]["health"] == [inv["serve"]["health"][0]] and inv["serve"]["health"][0].endswith(
            "/v1/models")
        log = (out / "serve.log").read_text()
        assert log.startswith("=== medr2 eval --serve") and "http://127.0.0.1:" in log  # the server's own output
        assert rows(out)
        shards.append(out)
    merged = medr2("merge", *shards, "--out", tmp_path / "merged")
    assert merged.returncode == 0, merged.stderr
    assert rows(tmp_path / "merged") == rows(tmp_path / "hand")
    assert len(rows(tmp_path / "hand")) == sum(len(rows(s)) for s in shards)


def test_a_crashing_server_command_is_exit_2_with_its_log(bench: Path, tmp_path: Path) -> None:
    out, pidfile = tmp_path / "run", tmp_path / "pid"
    crash = served(pidfile, "echo loading weights; sleep 30 & echo 'boom: no such model' >&2; exit 3")
    done = medr2(*eval_args(bench, out, "--base-url", f"http://127.0.0.1:{free_port()}/v1", "--serve", crash))
    assert done.returncode == 2, done.stderr
    assert "exited with code 3 before it was healthy" in done.stderr
    assert "boom: no such model" in done.stderr and "loading weights" in done.stderr  # the log's tail
    assert group_gone(pidfile)  # the child it left behind (sleep 30) was killed with the group
    assert last_invocation(out)["status"] == "failed" and last_invocation(out)["serve"]["exit_code"] == 3
    assert rows(out) == set()


def test_a_never_healthy_server_is_exit_2_and_stopped(bench: Path, tmp_path: Path) -> None:
    """A server that listens but never answers the health URL with 2xx (http.server: 404) is stopped after
    --serve-timeout, with the log tail."""
    out, pidfile = tmp_path / "run", tmp_path / "pid"
    t0 = time.monotonic()
    done = medr2(*eval_args(bench, out, "--serve-timeout", "3", "--serve", served(
        pidfile, f"exec {shlex.quote(sys.executable)} -m http.server --bind 127.0.0.1 {{port}}")))
    assert done.returncode == 2, done.stderr
    assert "not healthy after 3 s" in done.stderr and "HTTP 404" in done.stderr
    assert '"GET /v1/models HTTP/1.1" 404' in done.stderr  # http.server's own log lines
    assert group_gone(pidfile)
    assert time.monotonic() - t0 < 60
    assert last_invocation(out)["status"] == "failed" and rows(out) == set()


@pytest.mark.slow
@pytest.mark.parametrize("sigint_as", [signal.SIG_DFL, signal.SIG_IGN], ids=["sigint-default", "sigint-ignored"])
def test_a_server_that_dies_mid_run_fails_the_eval_and_a_rerun_resumes(bench: Path, tmp_path: Path,
                                                                      sigint_as: signal.Handlers) -> None:
    """Also when medr2 starts with SIGINT ignored (`medr2 eval … &` in a script): the watcher's interrupt must
    reach it all the same (before, it did not, and the eval went on asking the dead server)."""
    out, pidfile = tmp_path / "run", tmp_path / "pid"
    dying = served(pidfile, f"{SERVER} --delay 0.2 & sleep 4; kill $!; exit 7")
    done = medr2(*eval_args(bench, out, "--concurrency", "1", "--serve", dying), sigint_as=sigint_as)
    assert done.returncode == 1, done.stderr
    assert "exited with code 7 during the run" in done.stderr and "rerun the same command" in done.stderr
    assert group_gone(pidfile)
    inv = last_invocation(out)
    assert inv["status"] == "failed" and inv["serve"]["exited_during_run"] == 7
    first = rows(out)
    assert first and all(r[4] == "ok" for r in first)  # the interrupt came before any retry ran out
    assert len(first) < inv["items"]
    again = medr2(*eval_args(bench, out, "--concurrency", "1", "--serve", served(pidfile, f"exec {SERVER}")))
    assert again.returncode == 0, again.stderr
    assert group_gone(pidfile)
    final = rows(out)
    assert first <= final and len(final) == inv["items"] and all(r[4] == "ok" for r in final)


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "ready"), [(signal.SIGINT, True), (signal.SIGTERM, False)])
def test_ctrl_c_or_sigterm_stops_the_server(bench: Path, tmp_path: Path, sig: signal.Signals, ready: bool) -> None:
    """Interrupted while asking (SIGINT) or while waiting for health (SIGTERM): exit 130, the invocation is
    marked interrupted, the server's process group is gone."""
    out, pidfile = tmp_path / "run", tmp_path / "pid"
    cmd = served(pidfile, f"exec {SERVER} --delay 0.2" if ready else "sleep 300")
    extra = ["--concurrency", "1"] if ready else ["--base-url", f"http://127.0.0.1:{free_port()}/v1"]
    proc = subprocess.Popen(medr2_cmd(*eval_args(bench, out, *extra, "--serve", cmd)), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": SRC},
                            preexec_fn=sigint(signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # asking (a stored answer) or waiting (the server started)
        if stored(out) if ready else pidfile.exists():
            break
        time.sleep(0.2)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert group_gone(pidfile)
    assert last_invocation(out)["status"] == "interrupted"


def test_serve_options_are_checked_before_anything_starts(bench: Path, tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="needs --base-url"):
        plan_serve("vllm serve m", [])
    spec, urls = plan_serve("serve --port {port}", [])
    port = int(spec.command.rsplit(" ", 1)[1])
    assert urls == (f"http://127.0.0.1:{port}/v1",) and spec.health_urls == (f"http://127.0.0.1:{port}/v1/models",)
    spec, urls = plan_serve("router --port {port}", [], health="http://127.0.0.1:{port}/readiness")
    port = int(spec.command.rsplit(" ", 1)[1])
    assert urls == (f"http://127.0.0.1:{port}/v1",) and spec.health_urls == (f"http://127.0.0.1:{port}/readiness",)
    spec, urls = plan_serve("serve", ["http://h:1/v1", "http://h:2/v1/"], health="http://h:1/health")
    assert urls == ("http://h:1/v1", "http://h:2/v1/") and spec.health_urls == ("http://h:1/health",)
    assert plan_serve("serve", ["http://h:1/v1", "http://h:2/v1/"])[0].health_urls == (
        "http://h:1/v1/models", "http://h:2/v1/models")
    with pytest.raises(BadInput, match="not an http"):
        plan_serve("serve", ["http://h:1/v1"], health="h:1/health")
    import medr2

    with pytest.raises(BadInput, match="go with --serve"):
        medr2.evaluate(bench, "openai:test", tmp_path / "r", split="all", serve_timeout=5)
    assert not (tmp_path / "r").exists()


def test_a_server_that_ignores_sigterm_is_killed_after_the_grace_period(tmp_path: Path) -> None:
    """medr2.run.serve.serving directly: the group's leader and a child both ignore SIGTERM; after the grace
    period SIGKILL takes the whole group."""
    from medr2.run.serve import serving

    pidfile = tmp_path / "pid"
    spec, _ = plan_serve(served(pidfile, f"trap '' TERM; sleep 300 & exec {SERVER}"), [], startup_s=60,
                         stop_grace_s=1.0)
    t0 = time.monotonic()
    with serving(spec, tmp_path) as server:
        assert server is not None and server.ready_s is not None
        t_stop = time.monotonic()
    assert group_gone(pidfile)
    assert server.proc.returncode == -signal.SIGKILL
    assert 1.0 <= time.monotonic() - t_stop < 10 and time.monotonic() - t0 < 60
