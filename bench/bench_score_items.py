"""The bench's items as ``medr2 score`` holds them, alone: ``open_scoring_items(bench, folder)`` (the items loaded
into the columnar engine's table in a fresh spill folder), then every batch of 50,000 items in id order and every
chunk of 100,000 in case order loaded (joined) as scoring loads them. Prints CPU seconds of each step, wall time,
the peak RSS and the RSS after the open. Run it once per source tree, alternating, for before/after figures::

    for src in /tmp/before-score/src src; do
        PYTHONPATH=$src .venv/bin/python bench/bench_score_items.py /tmp/medr2-score-bench/n800000/bench
    done
"""

from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import psutil

from medr2.arrowmem import use_lean_pool
from medr2.scoring.itemcols import open_scoring_items


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench", type=Path)
    ap.add_argument("--spill", type=Path, default=Path(tempfile.gettempdir()), help="where the spill folder is made")
    a = ap.parse_args()
    use_lean_pool()  # the command's Arrow pool (medr2 score chooses it first)
    folder = Path(tempfile.mkdtemp(dir=a.spill, prefix="score-items-"))
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        _, items = open_scoring_items(a.bench, folder)
        c1 = time.process_time()
        after_open = psutil.Process().memory_info().rss
        by_id = np.argsort(np.asarray(list(items)), kind="stable")
        for s in range(0, len(by_id), 50_000):
            items.load(by_id[s:s + 50_000])
        c2 = time.process_time()
        by_case = np.argsort(items.codes("case_id")[0], kind="stable")
        for s in range(0, len(by_case), 100_000):
            items.load(by_case[s:s + 100_000])
        c3 = time.process_time()
        print(f"{len(items):,} items: open {c1 - c0:.1f} CPU s, batches by id {c2 - c1:.1f} CPU s, chunks by case "
              f"{c3 - c2:.1f} CPU s, wall {time.perf_counter() - t0:.1f} s, peak RSS "
              f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB, RSS after the open "
              f"{after_open / 2**20:.0f} MiB")
        items.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
