"""``medr2.scoring.workers.OrderedPool``: results in the arguments' order from forked workers, errors raised in the
caller, and workers that end when their main process is killed (so none keeps the run's spill folder locked)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from medr2.scoring.workers import OrderedPool

SRC = str(Path(__file__).resolve().parent.parent / "src")


def _slow_square(k: int) -> tuple[int, int]:
    time.sleep(0.01 * ((7 * k) % 5))  # later arguments often finish first
    return k * k, os.getpid()


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_results_come_in_the_arguments_order(workers: int) -> None:
    with OrderedPool(_slow_square, workers) as pool:
        got = list(pool.map((k,) for k in range(40)))
    assert [a for a, _ in got] == [(k,) for k in range(40)]
    assert [r[0] for _, r in got] == [k * k for k in range(40)]
    pids = {r[1] for _, r in got}
    assert (pids == {os.getpid()}) if workers == 1 else (os.getpid() not in pids and 1 <= len(pids) <= workers)


class _Boom:
    def __init__(self) -> None:
        self.state = "inherited"  # set before the fork: the workers see it without pickling

    def __call__(self, k: int) -> str:
        if k == 5:
            raise ValueError(f"bad argument {k}")
        return self.state


def test_an_error_in_a_worker_is_raised_in_the_caller() -> None:
    pool = OrderedPool(_Boom(), 2)
    got = []
    with pytest.raises(ValueError, match="bad argument 5"):
        for _, r in pool.map((k,) for k in range(20)):
            got.append(r)
    pool.close()
    assert got == ["inherited"] * 5


def test_at_least_one_worker_and_one_in_flight() -> None:
    with pytest.raises(ValueError):
        OrderedPool(_slow_square, 0)
    with pytest.raises(ValueError):
        OrderedPool(_slow_square, 2, in_flight=0)


_SCRIPT = """
import sys, time
from medr2.scoring.workers import OrderedPool
def wait(k):
    time.sleep(60)
pool = OrderedPool(wait, 2)
it = pool.map((k,) for k in range(10))
print("started", flush=True)
next(it)
"""


def test_workers_end_when_the_main_process_is_killed() -> None:
    proc = subprocess.Popen([sys.executable, "-c", _SCRIPT], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": SRC})
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "started"
        deadline = time.monotonic() + 20
        workers: list[psutil.Process] = []
        while len(workers) < 2 and time.monotonic() < deadline:  # the executor forks its workers
            workers = [p for p in psutil.Process(proc.pid).children() if p.is_running()]
            time.sleep(0.1)
        assert len(workers) >= 2
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        gone, alive = psutil.wait_procs(workers, timeout=10)
        assert not alive, f"workers outlived their killed main process: {[p.pid for p in alive]}"
    finally:
        if proc.poll() is None:
            proc.kill()
