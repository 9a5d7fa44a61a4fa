"""kill -9 in the middle of a run, then resume: exactly one stored result per request."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from medr2.run.store import Store
from tests.openai_server import FaultPlan, OpenAIServer
from tests.run_fixtures import make_bench, stored_count

EVAL = "import sys; from medr2.cli import app; app(['eval'] + sys.argv[1:])"


def test_kill_9_mid_run_then_resume(tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    make_bench(bench, n_cases=6)
    run = tmp_path / "run"
    concurrency = 4
    with OpenAIServer(FaultPlan(rate_500=0.1, seed=1), delay_s=0.05) as srv:
        args = ["--bench", str(bench), "--model", "openai:m", "--out", str(run), "--mode", "independent,chain-own",
                "--base-url", srv.url, "--concurrency", str(concurrency), "--no-progress", "--timeout", "10",
                "--split", "all"]
        proc = subprocess.Popen([sys.executable, "-c", EVAL, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.time() + 60
        while stored_count(run / "store.sqlite") < 20:
            assert proc.poll() is None, proc.communicate()
            assert time.time() < deadline, "run did not store 20 results in time"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL
        killed_at = stored_count(run / "store.sqlite")
        done = subprocess.run([sys.executable, "-c", EVAL, *args], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        answered_ok = srv.stats.ok
    with Store.open(run) as st:
        rows = list(st.iter_predictions())
    slots = Counter((r.prediction.item_id, r.prediction.mode) for r in rows)
    hashes = Counter(r.prediction.request_hash for r in rows)
    assert max(slots.values()) == 1 and max(hashes.values()) == 1
    from medr2.bench import load_bench

    total_items = len(load_bench(bench).items)
    assert len(rows) == 2 * total_items  # nothing missing in either mode
    assert killed_at >= 20
    # answers the server gave but the store never got: only what was in flight at the kill
    stored_ok = sum(1 for r in rows if r.prediction.status == "ok")
    assert 0 <= answered_ok - stored_ok <= concurrency
