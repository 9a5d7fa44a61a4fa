"""Where the memory of ``medr2 score`` goes.

``--items BENCH ...``: the RSS that reading a bench's items adds, as a record of every item (``ScoringItems.records``
of every row) and held by columns (``open_scoring_items``), each in a fresh process (after ``gc.collect()``),
with the Arrow bytes held.

``--trace RUN``: one in-process ``score_run`` of a copy of RUN (the original is left as it is), printing the
RSS at each progress step and every 50,000 answers, with the highest RSS since the line before (sampled every
10 ms); at each step it also calls glibc's ``malloc_trim(0)`` and
the Arrow pool's ``release_unused()`` and prints the RSS after them (what is live vs what the allocators keep).

    PYTHONPATH=src .venv/bin/python bench/bench_score_memory.py --items /tmp/val-bench/b100 /tmp/val-bench/b1000
    PYTHONPATH=src .venv/bin/python bench/bench_score_memory.py --trace /tmp/scale-runs/r-b1000

``--processes RUN``: one in-process ``score_run(workers=N)`` (``--workers``, default 2) of a copy of RUN, sampling
every process's PSS and USS (``/proc/PID/smaps_rollup``, via psutil) every ``--every`` seconds: a line per sample
(the main process first, then each worker) and at the end each step's peak per process kind and summed. It shows
whether memory grows with the answers scored (within one run) or is set by the bench's size (between runs).

    PYTHONPATH=src .venv/bin/python bench/bench_score_memory.py --processes /tmp/scale-runs/r-b3000 --every 2
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ITEMS = r"""
import gc, sys, time
import pyarrow as pa
def rss(): return int(open('/proc/self/statm').read().split()[1]) * 4096 / 2**20
import numpy as np
from medr2.scoring.itemcols import open_scoring_items
r0, c0 = rss(), time.process_time()
_, items = open_scoring_items(sys.argv[1])
if sys.argv[2] == "records":
    items = items.records(np.arange(len(items)))
gc.collect()
n = len(items)
grew = rss() - r0
print(f"{sys.argv[1]}  {sys.argv[2]:8s} items {n:>10,}  RSS +{grew:6.0f} MiB ({grew * 2**20 / n:6.0f} B/item)"
      f"  CPU {time.process_time() - c0:6.2f} s  Arrow held {pa.total_allocated_bytes() / n:5.0f} B/item", flush=True)
"""


def rss() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * 4096 / 2**20


def items(benches: list[Path]) -> None:
    for bench in benches:
        for how in ("records", "columns"):
            subprocess.run([sys.executable, "-c", ITEMS, str(bench), how], check=True)


def trace(run: Path) -> None:
    import pyarrow as pa

    from medr2.arrowmem import use_lean_pool
    from medr2.progress import Quiet
    from medr2.scoring.scorer import score_run

    use_lean_pool()  # as the command does

    libc = ctypes.CDLL("libc.so.6")

    import threading

    peak = [0.0]
    done = threading.Event()

    def sample() -> None:  # the highest RSS since the last line printed (sampled every 10 ms)
        while not done.is_set():
            peak[0] = max(peak[0], rss())
            time.sleep(0.01)

    threading.Thread(target=sample, daemon=True).start()

    def since() -> str:
        got, peak[0] = peak[0], 0.0
        return f"(peak since the last line {max(got, rss()):6.0f} MiB)"

    class Steps(Quiet):
        def __init__(self) -> None:
            self.n = 0
            self.t0 = time.process_time()

        def step(self, name: str, total: int | None = None) -> None:
            print(f"        {since()}", flush=True)
            before = rss()
            gc.collect()
            libc.malloc_trim(0)
            pa.default_memory_pool().release_unused()
            from medr2.scoring import scorer

            print(f"{time.process_time() - self.t0:7.1f} CPU s  RSS {before:6.0f} MiB, after malloc_trim "
                  f"{rss():6.0f} MiB, Arrow {pa.total_allocated_bytes() / 2**20:5.0f} MiB, answer memos "
                  f"{len(scorer._CHOICE_MEMO):,} + {len(scorer._BOX_MEMO):,} entries  -> {name}", flush=True)

        def advance(self, n: int = 1) -> None:
            self.n += n
            if self.n % 50_000 < n:
                print(f"{time.process_time() - self.t0:7.1f} CPU s  RSS {rss():6.0f} MiB at {self.n:,} answers "
                      f"{since()}", flush=True)

    with tempfile.TemporaryDirectory(dir=run.parent) as tmp:
        copy = Path(tmp) / run.name
        shutil.copytree(run, copy)
        progress: Any = Steps()
        score_run(copy, progress=progress, mixed_splits=True)
        print(f"end: RSS {rss():.0f} MiB {since()}")
        done.set()


def processes(run: Path, workers: int, every: float) -> None:
    import threading

    import psutil

    from medr2.arrowmem import use_lean_pool
    from medr2.progress import Quiet
    from medr2.scoring.scorer import score_run

    use_lean_pool()  # as the command does
    step = ["start"]
    peaks: dict[tuple[str, str], float] = {}
    busy: dict[str, list[float]] = {}  # per step: [wall s sampled, CPU s of the main process, CPU s of the workers]
    last_cpu: dict[int, float] = {}
    done = threading.Event()
    t0 = time.monotonic()

    def sample() -> None:
        me = psutil.Process()
        last_t = time.monotonic()
        while not done.wait(every):
            now = time.monotonic()
            total, parts = 0.0, []
            acc = busy.setdefault(step[0], [0.0, 0.0, 0.0])
            acc[0] += now - last_t
            for k, p in enumerate([me, *me.children()]):
                try:
                    m = p.memory_full_info()
                    c = p.cpu_times()
                except psutil.Error:
                    continue
                cpu = c.user + c.system
                dcpu = cpu - last_cpu.get(p.pid, 0.0 if k else cpu)
                last_cpu[p.pid] = cpu
                acc[1 if k == 0 else 2] += dcpu
                pss, uss = m.pss / 2**20, m.uss / 2**20
                total += pss
                kind = "main" if k == 0 else "worker"
                peaks[(step[0], kind)] = max(peaks.get((step[0], kind), 0.0), pss)
                parts.append(f"{kind} PSS {pss:5.0f} USS {uss:5.0f} CPU {100 * dcpu / (now - last_t):3.0f}%")
            last_t = now
            peaks[(step[0], "all")] = max(peaks.get((step[0], "all"), 0.0), total)
            print(f"{time.monotonic() - t0:7.1f} s  {step[0][:24]:24s} all PSS {total:6.0f} MiB | " + " | ".join(parts),
                  flush=True)

    class Steps(Quiet):
        def step(self, name: str, total: int | None = None) -> None:
            step[0] = name

    with tempfile.TemporaryDirectory(dir=run.parent) as tmp:
        copy = Path(tmp) / run.name
        shutil.copytree(run, copy)
        threading.Thread(target=sample, daemon=True).start()
        progress: Any = Steps()
        score_run(copy, progress=progress, workers=workers, mixed_splits=True)
        done.set()
    print(f"peaks (MiB PSS, sampled every {every} s), wall {time.monotonic() - t0:.1f} s:")
    for name in dict.fromkeys(step for step, _ in peaks):  # the steps in the order they came
        for kind in ("main", "worker", "all"):
            if (name, kind) in peaks:
                print(f"  {name[:40]:40s} {kind:6s} {peaks[(name, kind)]:7.0f}")
    print("CPU per step (sampled; a worker's CPU counted from its first sample): wall s, main CPU s, workers CPU s, "
          "cores busy on average:")
    for name, (wall, main_cpu, workers_cpu) in busy.items():
        cores = (main_cpu + workers_cpu) / wall
        print(f"  {name[:40]:40s} {wall:7.1f} {main_cpu:7.1f} {workers_cpu:7.1f} {cores:5.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=Path, nargs="+", default=None, help="benches: records vs columns")
    ap.add_argument("--trace", type=Path, default=None, help="a run folder (scored in a copy)")
    ap.add_argument("--processes", type=Path, default=None, help="a run folder: PSS per process over time")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--every", type=float, default=2.0, help="seconds between samples (--processes)")
    args = ap.parse_args()
    if args.items:
        items(args.items)
    if args.trace:
        trace(args.trace)
    if args.processes:
        processes(args.processes, args.workers, args.every)


if __name__ == "__main__":
    main()
