"""Overhead of ``medr2 eval --executor ray`` against the local client, on the same workload and server.

Starts ``bench/instant_server.py`` (answers at once, or after ``--latency``) and a Ray head on this machine
(``ray start --head --num-cpus 2 --include-dashboard=false``, stopped at the end; or ``--ray-address`` of a
running one), builds the client workload (``bench/workload.py``: one distinct PNG per item), then for each size
in ``--n`` and each repeat runs ``medr2 eval`` as a child process into a fresh run folder, once with the local
executor and once with ``--executor ray`` (in turn, so both see the same load). Per run: wall seconds, the eval
process's CPU seconds and peak RSS (``os.wait4``), and the Ray cluster's CPU seconds (every process whose command
line names Ray, sampled every 0.5 s: a worker that exits between samples loses at most its last 0.5 s). Cells
are medians over ``--repeats``; the per-request overhead is the slope between the two sizes (fixed costs, such
as starting the Ray workers, cancel out), next to the whole difference per request at each size.

    .venv/bin/python bench/bench_ray.py [--n 100 2000] [--repeats 2] [--concurrency 2] [--latency 0]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from bench_client import Servers  # noqa: E402
from process_cpu import ProcessCpu  # noqa: E402
from workload import make_workload  # noqa: E402

RAY = str(Path(sys.executable).with_name("ray"))


RAY_PROCESS_MARKS = ("ray::", "raylet", "gcs_server", "site-packages/ray/", "default_worker")


def ray_processes() -> list[psutil.Process]:
    """The Ray cluster's processes, by command line (not this one)."""
    return [p for p in psutil.process_iter(["pid", "cmdline"]) if p.info["pid"] != os.getpid()
            and any(k in " ".join(p.info["cmdline"] or ()) for k in RAY_PROCESS_MARKS)]


def start_cluster(cpus: int) -> str:
    """Start a one-machine Ray head of ``cpus`` worker CPUs on the loopback; its address."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    # Ray's own switch keeps a one-machine cluster on the loopback (else it binds the outward address)
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    subprocess.run([RAY, "start", "--head", "--num-cpus", str(cpus), "--include-dashboard=false", "--port", str(port),
                    "--node-ip-address", "127.0.0.1", "--disable-usage-stats"], check=True, capture_output=True)
    return f"127.0.0.1:{port}"


def run_measured(cmd: list[str], what: str) -> dict[str, float]:
    """Run ``cmd`` as a child process: wall seconds, its own CPU seconds and peak RSS (``os.wait4``), and the Ray
    cluster's CPU seconds meanwhile; SystemExit with its stderr if it fails."""
    t0 = time.perf_counter()
    with ProcessCpu(ray_processes) as ray_cpu:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        assert proc.stderr is not None
        raise SystemExit(f"{what} failed: {proc.stderr.read().decode()[-3000:]}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024,
            "ray_cpu_s": ray_cpu.cpu_s}


def run_eval(bench: Path, out: Path, url: str, concurrency: int, ray_address: str | None) -> dict[str, float]:
    args = [sys.executable, "-m", "medr2", "eval", "--split", "all", "--bench", str(bench), "--model", "openai:bench",
            "--out",
            str(out), "--base-url", url, "--concurrency", str(concurrency), "--no-progress"]
    if ray_address:
        args += ["--executor", "ray", "--ray-address", ray_address]
    return run_measured(args, "eval")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, nargs=2, default=[100, 2000], help="two workload sizes (items)")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--latency", type=float, default=0.0, help="server seconds per answer")
    ap.add_argument("--ray-address", default=None, help="a running Ray cluster (default: start one here)")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "medr2-ray-bench")
    a = ap.parse_args()
    address = a.ray_address
    started = False
    if address is None:
        address, started = start_cluster(2), True
    servers = Servers(1, a.latency)
    try:
        results: dict[tuple[int, str], list[dict[str, float]]] = {}
        for n in a.n:
            bench = make_workload(a.work / f"bench-{n}", n=n)
            for r in range(a.repeats):
                for name, addr in (("local", None), ("ray", address)):
                    out = a.work / f"run-{name}-{n}-{r}"
                    shutil.rmtree(out, ignore_errors=True)
                    res = run_eval(bench, out, servers.url, a.concurrency, addr)
                    results.setdefault((n, name), []).append(res)
                    print(f"n={n} repeat={r} {name}: " + ", ".join(f"{k}={v:.2f}" for k, v in res.items()), flush=True)
                    shutil.rmtree(out, ignore_errors=True)
        med = {key: {k: statistics.median(x[k] for x in runs) for k in runs[0]} for key, runs in results.items()}
        print(f"\nmedians over {a.repeats} repeats; concurrency {a.concurrency}, server latency {a.latency} s")
        print(f"{'n':>5} {'executor':>8} {'wall s':>8} {'eval CPU s':>10} {'eval RSS MB':>11} {'Ray CPU s':>9}")
        for (n, name), m in sorted(med.items()):
            print(f"{n:>5} {name:>8} {m['wall_s']:>8.2f} {m['cpu_s']:>10.2f} {m['rss_mb']:>11.0f} "
                  f"{m['ray_cpu_s']:>9.2f}")
        n1, n2 = a.n
        for n in a.n:
            d = med[(n, "ray")]["wall_s"] - med[(n, "local")]["wall_s"]
            print(f"n={n}: ray - local wall = {d:.2f} s ({1000 * d / n:.1f} ms per request, fixed costs included); "
                  f"wall ratio ray/local {med[(n, 'ray')]['wall_s'] / med[(n, 'local')]['wall_s']:.1f}x")
        for what in ("wall_s", "ray_cpu_s", "cpu_s"):
            slope = {name: (med[(n2, name)][what] - med[(n1, name)][what]) / (n2 - n1) for name in ("local", "ray")}
            print(f"{what} per extra request (slope {n1}->{n2}): local {1000 * slope['local']:.2f} ms, ray "
                  f"{1000 * slope['ray']:.2f} ms, overhead {1000 * (slope['ray'] - slope['local']):.2f} ms")
    finally:
        servers.close()
        if started:
            subprocess.run([RAY, "stop"], capture_output=True)


if __name__ == "__main__":
    main()
