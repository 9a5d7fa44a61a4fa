"""``medr2 build`` stopped by SIGTERM (``timeout``, a scheduler) leaves no worker process behind: the command turns
SIGTERM into an interrupt, the process pool drops its queued chunks, and the workers exit with the build (before,
the build exited at once and its pool workers kept running as orphans)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("skimage")


def _children(pid: int) -> set[int]:
    kids = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            kids.add(int(entry.name))
    return kids


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process parents from /proc (Linux)")
def test_sigterm_stops_the_build_and_its_workers(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "medr2", "build", "--source", "sample", "--cases", "400", "--workers", "2",
           "--variants", "all", "--out", str(tmp_path / "bench")]
    log = (tmp_path / "build.log").open("w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        deadline = time.monotonic() + 300
        workers: set[int] = set()
        while time.monotonic() < deadline and proc.poll() is None:
            workers = {k for k in _children(proc.pid) if _alive(k)}
            if len(workers) >= 2:
                break
            time.sleep(0.2)
        assert proc.poll() is None, "the build ended before its process pool started"
        assert len(workers) >= 2, f"no pool workers seen: {workers}"
        time.sleep(2.0)  # chunks queued and running
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=300)
        assert rc == 130, (tmp_path / "build.log").read_text()[-2000:]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and any(_alive(w) for w in workers):
            time.sleep(0.2)
        assert not any(_alive(w) for w in workers), f"workers left running: {[w for w in workers if _alive(w)]}"
    finally:
        if proc.poll() is None:
            proc.kill()
        log.close()
