"""Reading the answers that count from a run's store (``Store.counted_rows``, what ``medr2 score`` and ``medr2
report`` read first): seconds to the first batch, to the last, and CPU seconds, in a fresh process per measurement.
``--before-src DIR`` times a copy of ``src/`` taken before a change in the same sitting, alternating, and checks
that both read the same rows (sha256 over every row, in order)::

    mkdir -p /tmp/before && git archive main src | tar -x -C /tmp/before
    .venv/bin/python bench/bench_store_read.py --run /tmp/scale-runs/r-b3000 --before-src /tmp/before/src --repeats 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from fresh_process import json_result  # noqa: E402

CHILD = r"""
import hashlib, json, sys, time
from medr2.run.store import Store
t0, c0 = time.monotonic(), time.process_time()
h, n, first = hashlib.sha256(), 0, None
with Store.open(sys.argv[1]) as store:
    for batch in store.counted_rows():
        if first is None:
            first = time.monotonic() - t0
        if not isinstance(batch, list):  # a batch by column (CountedBatch): its rows, to hash as before
            batch = list(zip(*(getattr(batch, f) for f in batch.__slots__)))
        n += len(batch)
        h.update(json.dumps(batch).encode())
print(json.dumps({"first_s": first, "wall_s": time.monotonic() - t0, "cpu_s": time.process_time() - c0, "rows": n,
                  "sha256": h.hexdigest()}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", type=Path, required=True)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--before-src", type=Path)
    a = ap.parse_args()
    print(f"machine: {os.uname().machine}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; {a.run}")
    variants = {"after": SRC, **({"before": a.before_src} if a.before_src else {})}
    got: dict[str, list[dict[str, float | str]]] = {k: [] for k in variants}
    for r in range(a.repeats):
        for name, src in variants.items():
            m = json_result([sys.executable, "-c", CHILD, str(a.run)], src)
            got[name].append(m)
            print(f"  {name} #{r + 1}: first batch {float(m['first_s']):.2f} s, all {m['rows']:,} rows "
                  f"{float(m['wall_s']):.2f} s wall, {float(m['cpu_s']):.2f} CPU s, load {os.getloadavg()[0]:.1f}",
                  flush=True)
    for name, ms in got.items():
        med = {k: statistics.median(float(m[k]) for m in ms) for k in ("first_s", "wall_s", "cpu_s")}
        print(f"{name}: median first batch {med['first_s']:.2f} s, all rows {med['wall_s']:.2f} s wall, "
              f"{med['cpu_s']:.2f} CPU s")
    print(f"same rows: {len({m['sha256'] for ms in got.values() for m in ms}) == 1}")


if __name__ == "__main__":
    main()
