"""Runs under server faults (docs/reliability.md): a run against a fault-injecting server on 127.0.0.1 completes
with every request stored once, as ok or as an error with its reason, and reports its retries."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.fault_server import FAULT_KINDS, LONG_ANSWER_CHARS, Faults, FaultServer
from tests.run_fixtures import make_bench

MEDR2 = [sys.executable, "-m", "medr2.cli"]


def _rows(run: Path) -> list[dict[str, object]]:
    con = sqlite3.connect(f"file:{run / 'store.sqlite'}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in con.execute("SELECT request_hash, item_id, mode, status, error, raw, attempts "
                                             "FROM predictions")]
    finally:
        con.close()


def faulted_run(tmp_path: Path, *, n_cases: int, total_rate: float, concurrency: int, rate_long: float,
                seed: int) -> dict[str, object]:
    """Run ``medr2 eval`` against a FaultServer; check the store; return the figures."""
    bench = tmp_path / "bench"
    items = make_bench(bench, n_cases=n_cases).items
    run = tmp_path / "run"
    faults = Faults.uniform(total_rate, rate_long=rate_long, hang_s=2.5, seed=seed)
    with FaultServer(faults) as srv:
        args = [*MEDR2, "eval", "--split", "all", "--bench", str(bench), "--model", "openai:m", "--out", str(run),
                "--base-url",
                srv.url, "--concurrency", str(concurrency), "--timeout", "1", "--retries", "5", "--backoff", "0.05",
                "--no-progress"]
        done = subprocess.run(args, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        attempts_seen = srv.stats.requests
        injected = dict(srv.injected)
        sent = set(srv.sent_answers)
        n_long = srv.long_answers
        # a second invocation resumes: nothing is sent again
        again = subprocess.run(args, capture_output=True, text=True, timeout=300)
        assert again.returncode == 0, again.stderr[-3000:]
        assert srv.stats.requests == attempts_seen
    rows = _rows(run)
    # every request stored exactly once, none missing
    assert len(rows) == len(items)
    assert Counter(r["item_id"] for r in rows).most_common(1)[0][1] == 1
    assert {r["item_id"] for r in rows} == {it.item_id for it in items}
    assert len({r["request_hash"] for r in rows}) == len(rows)
    ok = [r for r in rows if r["status"] == "ok"]
    err = [r for r in rows if r["status"] == "error"]
    assert len(ok) + len(err) == len(rows)
    # ok answers are exactly what the server sent (long ones intact); errors carry their reason
    assert all(r["raw"] in sent for r in ok)
    long_stored = [r for r in ok if len(str(r["raw"])) == LONG_ANSWER_CHARS]
    assert len(long_stored) >= min(1, n_long)
    for r in err:
        assert r["raw"] is None and r["error"] and "attempts: 6" in str(r["error"]), r["error"]
    # retry counts reported: in the manifest (per invocation), in the store, and on the console
    manifest = json.loads((run / "manifest.json").read_text())
    first = manifest["invocations"][0]
    assert first["status"] == "complete"
    stored_retries = sum(int(r["attempts"]) - 1 for r in rows)  # type: ignore[call-overload]
    assert first["summary"]["retries"] == stored_retries
    assert f"retries: {stored_retries}" in done.stderr
    faulted = sum(injected.values())
    assert attempts_seen == len(items) + stored_retries  # every attempt the server saw is accounted for
    assert set(injected) == set(FAULT_KINDS)
    return {"requests": len(items), "attempts": attempts_seen, "faults_injected": faulted,
            "fault_share": round(faulted / attempts_seen, 3), "faults_by_kind": injected, "ok": len(ok),
            "error": len(err), "retries": stored_retries, "long_answers": len(long_stored), "records_lost": 0}


def test_every_fault_kind_small_run(tmp_path: Path) -> None:
    """About 110 requests, 40 % of attempts faulted with every kind: all stored once."""
    figures = faulted_run(tmp_path, n_cases=10, total_rate=0.4, concurrency=32, rate_long=0.02, seed=3)
    print("RELIABILITY-FIGURES faults-small", json.dumps(figures, sort_keys=True))


@pytest.mark.slow
def test_2000_requests_30_percent_faulted(tmp_path: Path) -> None:
    figures = faulted_run(tmp_path, n_cases=182, total_rate=0.3, concurrency=64, rate_long=0.005, seed=11)
    assert figures["requests"] >= 2000
    assert 0.25 <= float(figures["fault_share"]) <= 0.35  # type: ignore[arg-type]
    print("RELIABILITY-FIGURES faults-2000", json.dumps(figures, sort_keys=True))
