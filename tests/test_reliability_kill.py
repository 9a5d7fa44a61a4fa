"""Runs (docs/running.md): SIGKILL at random moments, then resume.

``medr2 eval``: killed at least 20 times, resumed each time; the final store holds exactly one
result per request and equals an uninterrupted run. ``medr2 build``: killed at least 20 times; a
killed build never leaves a bench that reads as complete, and a rerun finishes it with the same
bytes as an uninterrupted build.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from medr2 import BadInput
from medr2.bench.format import load_bench
from tests.fault_server import Faults, FaultServer
from tests.interop_fixtures import write_png
from tests.run_fixtures import make_bench

MEDR2 = [sys.executable, "-m", "medr2.cli"]
MIN_KILLS = 20


def _store_rows(run: Path) -> dict[str, tuple[str, str, str, str | None]]:
    db = run / "store.sqlite"
    if not db.exists():
        return {}
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = con.execute("SELECT request_hash, item_id, mode, status, raw FROM predictions").fetchall()
    finally:
        con.close()
    slots = [(r[1], r[2]) for r in rows]
    assert len(slots) == len(set(slots)), "an (item, mode) stored twice"
    return {r[0]: (r[1], r[2], r[3], r[4]) for r in rows}


def _count(run: Path) -> int:
    try:
        con = sqlite3.connect(f"file:{run / 'store.sqlite'}?mode=ro", uri=True, timeout=1)
        try:
            return int(con.execute("SELECT COUNT(*) FROM predictions").fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    os.killpg(proc.pid, signal.SIGKILL)  # the command and any worker processes it started
    proc.wait()


def _kill_loop(cmd: list[str], *, rng: random.Random, window: tuple[float, float], check: object,
               busy: object = None, max_starts: int = 80) -> dict[str, int]:
    """Start ``cmd``, SIGKILL it after a random delay, ``check()`` the folder; until MIN_KILLS kills
    landed while it ran. With ``busy`` (a callable), three kills in four wait until ``busy()`` says
    the command is in the middle of its work and land at a random moment after that; the others
    land anywhere, start-up included. Returns counts."""
    kills = finished = 0
    for _ in range(max_starts):
        if kills >= MIN_KILLS:
            break
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        if busy is not None and rng.random() < 0.75:
            deadline = time.time() + 60
            while proc.poll() is None and not busy() and time.time() < deadline:  # type: ignore[operator]
                time.sleep(0.01)
            time.sleep(rng.uniform(0.0, 0.4))
        else:
            time.sleep(rng.uniform(*window))
        if proc.poll() is None:
            _kill_group(proc)
            kills += 1
        else:
            err = proc.stderr.read().decode() if proc.stderr else ""
            assert proc.returncode == 0, err[-2000:]
            finished += 1
        if proc.stderr:
            proc.stderr.close()
        check()  # type: ignore[operator]
    assert kills >= MIN_KILLS
    return {"kills": kills, "finished_early": finished}


@pytest.mark.slow
def test_eval_survives_20_kills(tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    make_bench(bench, n_cases=40)
    # some faults too (retries in flight when the kill lands), never more than 2 per request
    faults = Faults.uniform(0.15, hang_s=0.5, seed=5, max_faults_per_body=2)
    with FaultServer(faults, delay_s=0.04) as srv:
        def cmd(out: Path) -> list[str]:
            return [*MEDR2, "eval", "--split", "all", "--bench", str(bench), "--model", "openai:m", "--out", str(out),
                    "--mode", "independent,chain-own", "--base-url", srv.url, "--concurrency", "4",
                    "--timeout", "2", "--retries", "5", "--no-progress"]

        killed = tmp_path / "killed"
        progress: list[int] = []

        def check() -> None:
            rows = _store_rows(killed)
            assert all(st == "ok" for _, _, st, _ in rows.values())
            if (killed / "manifest.json").exists():
                json.loads((killed / "manifest.json").read_text())  # never half written
            progress.append(len(rows))

        def busy() -> bool:
            return _count(killed) > (progress[-1] if progress else 0)

        counts = _kill_loop(cmd(killed), rng=random.Random(7), window=(0.3, 3.0), check=check, busy=busy)
        done = subprocess.run(cmd(killed), capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        ref = tmp_path / "reference"
        done = subprocess.run(cmd(ref), capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
    final, expected = _store_rows(killed), _store_rows(ref)
    assert final == expected  # same request hashes, same answers, one row each
    assert len(final) == 2 * len(load_bench(bench).items)
    kills_mid_run = sum(1 for a, b in zip(progress, progress[1:], strict=False) if b > a)
    assert kills_mid_run >= 5  # many kills landed while answers were being stored
    figures = {**counts, "kills_while_storing": kills_mid_run, "requests": len(final), "records_lost": 0,
               "duplicates": 0}
    print("RELIABILITY-FIGURES kill-eval", json.dumps(figures, sort_keys=True))


def _folder_data(root: Path, n: int) -> None:
    rng = np.random.default_rng(0)
    rows = ["image,modality,diagnosis,findings"]
    for i in range(n):
        arr = rng.integers(0, 255, (96, 96), dtype=np.uint8)
        write_png(root / f"img{i:03d}.png", arr)
        x = 10 + i % 40
        box = json.dumps([{"label": "nodule", "box": [x, 20, x + 20, 44]}]).replace('"', '""')
        rows.append(f'img{i:03d}.png,CT,{["nodule", "normal", "cyst"][i % 3]},"{box}"')
    (root / "labels.csv").write_text("\n".join(rows) + "\n")


@pytest.mark.slow
def test_build_survives_20_kills(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _folder_data(data, 120)
    out = tmp_path / "bench"

    def cmd(o: Path) -> list[str]:
        return [*MEDR2, "build", "--source", f"folder:{data}", "--out", str(o), "--seed", "3", "--workers", "2",
                "--variants", "T4,T6,V1,V8"]

    states = {"complete": 0, "incomplete": 0}

    def check() -> None:
        try:
            load_bench(out)  # a bench that reads as complete must be whole and valid
            states["complete"] += 1
        except BadInput as e:
            assert e.field == "complete" or "no manifest.json" in e.reason, str(e)
            states["incomplete"] += 1

    counts = _kill_loop(cmd(out), rng=random.Random(11), window=(0.5, 6.0), check=check)
    done = subprocess.run(cmd(out), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    ref = tmp_path / "reference"
    done = subprocess.run(cmd(ref), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    a, b = load_bench(out), load_bench(ref)
    assert a.checksum == b.checksum and len(a.items) == len(b.items)
    for name in ("cases.parquet", "items.parquet", "quarantine.jsonl"):
        assert (out / name).read_bytes() == (ref / name).read_bytes() if (ref / name).exists() else True
    assert sorted(p.name for p in (out / "images").iterdir()) == sorted(p.name for p in (ref / "images").iterdir())
    leftovers = [p.name for p in out.iterdir() if p.name.startswith(".")]
    assert not leftovers, leftovers
    figures = {**counts, **{f"after_kill_{k}": v for k, v in states.items()}, "items": len(a.items),
               "records_lost": 0}
    print("RELIABILITY-FIGURES kill-build", json.dumps(figures, sort_keys=True))
