"""One fresh process measured whole: wall time, CPU time (user + system) and peak RSS from ``os.wait4``, with a
given ``src`` folder first on the path (to run this checkout's code and an older one side by side). Shared by the
before/after benchmarks (report, eval memory, export); :func:`json_result` for those whose child measures itself
and prints its figures as JSON (text metrics, store read)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def run(cmd: list[str], src: Path, extra_env: Mapping[str, str] | None = None) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MiB) of ``cmd`` in a fresh process with ``src`` first on the path; a failing
    command stops the benchmark with its exit code and the tail of its stderr."""
    env = {**os.environ, "PYTHONPATH": str(src), "COLUMNS": "100", **(extra_env or {})}
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    err = proc.stderr.read().decode() if proc.stderr else ""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {os.waitstatus_to_exitcode(status)}\n{err[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def json_result(cmd: list[str], src: Path) -> dict[str, Any]:
    """The JSON object on the last line of ``cmd``'s output, run in a fresh process with ``src`` first on the
    path (the child times what it measures itself, without the interpreter's start)."""
    out = subprocess.run(cmd, env={**os.environ, "PYTHONPATH": str(src)}, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]
