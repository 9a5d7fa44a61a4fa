"""``medr2 build --executor ray`` on a one-machine Ray cluster of 1, then 2, … worker CPUs (issue 44, item 4).

For each cluster size in ``--cpus`` the script starts a Ray head on the loopback (``ray start --head --num-cpus C
--include-dashboard=false``), runs ``medr2 build --source sample --cases N --executor ray --ray-address …`` as a
child process into a fresh folder, and stops the cluster. Per run: wall seconds, the build process's own CPU
seconds (``os.wait4``: the driver) and the Ray cluster's CPU seconds (every process whose command line names Ray,
sampled every 0.5 s: :class:`process_cpu.ProcessCpu`), the bench checksum. One local build (``--workers`` the
largest C, process pool) gives the reference bytes: every Ray build must give the same ``items.parquet`` and bench
checksum (the executor changes where the worker passes run, never what they make). Printed: a table per size,
the speed-up of each size over the first, and the share of wall time the workers could be busy
((driver CPU + Ray CPU) / (wall × C)).

    .venv/bin/python bench/bench_build_ray.py --cases 300 --cpus 1 2 [--variants all] [--repeats 1]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from bench_build import file_sha  # noqa: E402
from bench_ray import RAY, run_measured, start_cluster  # noqa: E402


def build(out: Path, n: int, seed: int, variants: str | None, *, workers: int = 1,
          ray_address: str | None = None) -> dict[str, Any]:
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, "-c", "from medr2.cli import main; main()", "build", "--source", "sample", "--out",
           str(out), "--cases", str(n), "--seed", str(seed), "--workers", str(workers)]
    if variants:
        cmd += ["--variants", variants]
    if ray_address:
        cmd += ["--executor", "ray", "--ray-address", ray_address]
    run = run_measured(cmd, "build")
    manifest = json.loads((out / "manifest.json").read_text())
    res = {"wall_s": run["wall_s"], "driver_cpu_s": run["cpu_s"], "ray_cpu_s": run["ray_cpu_s"],
           "items": manifest["counts"]["items"], "bench_sha": manifest["checksums"]["bench"],
           "items_sha": file_sha(out / "items.parquet")}
    shutil.rmtree(out, ignore_errors=True)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--cpus", type=int, nargs="+", default=[1, 2], help="Ray cluster sizes (worker CPUs)")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--variants", default=None)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "medr2-build-ray-bench")
    a = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start; {a.cases} cases, "
          f"variants {a.variants or 'none'}", flush=True)
    ref = build(a.work / "local", a.cases, a.seed, a.variants, workers=max(a.cpus))
    print(f"local --workers {max(a.cpus)}: {ref['wall_s']:.1f} s wall, {ref['items']} items", flush=True)
    runs: dict[int, list[dict[str, Any]]] = {}
    for rep in range(a.repeats):
        for cpus in a.cpus:
            address = start_cluster(cpus)
            try:
                r = build(a.work / f"ray{cpus}", a.cases, a.seed, a.variants, ray_address=address)
            finally:
                subprocess.run([RAY, "stop"], capture_output=True)
            same = (r["bench_sha"], r["items_sha"]) == (ref["bench_sha"], ref["items_sha"])
            if not same:
                raise SystemExit(f"Ray build with {cpus} CPUs made other bytes than the local build")
            runs.setdefault(cpus, []).append(r)
            print(f"  rep {rep} ray {cpus} CPU: {r['wall_s']:.1f} s wall, driver CPU {r['driver_cpu_s']:.1f} s, "
                  f"Ray CPU {r['ray_cpu_s']:.1f} s, same bytes as local", flush=True)
    med = {c: {k: statistics.median(x[k] for x in rs) for k in ("wall_s", "driver_cpu_s", "ray_cpu_s")}
           for c, rs in runs.items()}
    first = a.cpus[0]
    print(f"\nmedians over {a.repeats} repeat(s); {ref['items']} items; local --workers {max(a.cpus)}: "
          f"{ref['wall_s']:.1f} s")
    print(f"{'Ray CPUs':>8} {'wall s':>8} {'items/s':>8} {'driver CPU s':>12} {'Ray CPU s':>9} {'speed-up':>8} "
          f"{'busy':>5}")
    for c in a.cpus:
        m = med[c]
        busy = (m["driver_cpu_s"] + m["ray_cpu_s"]) / (m["wall_s"] * c)
        print(f"{c:>8} {m['wall_s']:>8.1f} {ref['items'] / m['wall_s']:>8.0f} {m['driver_cpu_s']:>12.1f} "
              f"{m['ray_cpu_s']:>9.1f} {med[first]['wall_s'] / m['wall_s']:>7.2f}x {busy:>5.2f}")


if __name__ == "__main__":
    main()
