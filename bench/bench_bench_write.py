"""``BenchWriter`` on the records of an existing bench: wall, CPU and peak RSS of writing its tables (the items
sorted at close since the columnar change), with this checkout's sources and, with ``--before-src DIR``, other
sources, in fresh processes alternating, median of ``--repeats``. The records are loaded first (that load is
outside the timed part; peak RSS includes it, so compare the two columns, not the absolute figure).

    .venv/bin/python bench/bench_bench_write.py --bench /tmp/b400 --repeats 3 --before-src /tmp/medr2-before/src
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"

WRITE = r"""
import json, resource, sys, time
from medr2.bench.format import load_bench, write_bench
b = load_bench(sys.argv[1], validate=False)
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
t0, c0 = time.perf_counter(), time.process_time()
write_bench(sys.argv[2], b.cases, b.items, {"name": "x"})
print(json.dumps({"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0, "rss_load": rss0,
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", type=Path, required=True)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--before-src", type=Path, default=None)
    args = ap.parse_args()
    sources = {"before": args.before_src, "after": SRC} if args.before_src else {"after": SRC}
    got: dict[str, list[dict[str, float]]] = {k: [] for k in sources}
    with tempfile.TemporaryDirectory() as d:
        for rep in range(args.repeats):
            for label, src in sources.items():
                out = Path(d) / f"{label}-{rep}"
                env = {**os.environ, "PYTHONPATH": str(src)}
                done = subprocess.run([sys.executable, "-c", WRITE, str(args.bench), str(out)], env=env,
                                      capture_output=True, text=True, check=True)
                got[label].append(json.loads(done.stdout.strip().splitlines()[-1]))
    n = json.loads((args.bench / "manifest.json").read_text())["counts"]["items"]
    print(f"write_bench of {n} items from {args.bench.name}, median of {args.repeats} (load {os.getloadavg()[0]:.1f})")
    for label, rows in got.items():
        med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        print(f"  {label:<7} wall {med['wall']:.2f} s  CPU {med['cpu']:.2f} s  peak RSS {med['rss']:.0f} MiB "
              f"(after loading the records: {med['rss_load']:.0f} MiB)")


if __name__ == "__main__":
    main()
