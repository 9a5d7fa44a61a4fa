"""``medr2 review``'s costs: one review written and committed (``ReviewStore.add``: WAL, ``synchronous = FULL``,
a commit per review, what each POST waits for), then, on a reviews file of ``--items`` items reviewed by two
reviewers (``--items`` × 2 rows, 80% accept, the rest reject or fix, seeded), reading every row, the outcomes and
counts (``medr2 info``'s figures) and the agreement per task (``--tasks`` tasks, one pair of reviewers, 1,000
bootstrap resamples each: what the start and queue pages compute once after each new review).

    PYTHONPATH=src:. .venv/bin/python bench/bench_review.py [--items 20000] [--tasks 10] [--adds 200]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))


def main() -> None:
    from medr2.bench.reviews import ReviewStore, read_reviews, review_counts
    from medr2.scoring.reviews import agreement

    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=20_000)
    ap.add_argument("--tasks", type=int, default=10)
    ap.add_argument("--adds", type=int, default=200)
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="medr2-review-bench-"))
    store = ReviewStore(folder)
    store.add("reviews", "warm", "i-warm", "accept", "", {})  # the file and its tables created
    t = time.perf_counter()
    for k in range(args.adds):
        store.add("reviews", "ana", f"x{k}", "accept", "", {})
    per_add = (time.perf_counter() - t) / args.adds
    rng = random.Random(0)
    rows = []
    for k in range(args.items):
        for who in ("ana", "ben"):
            v = rng.choice(["accept"] * 8 + ["reject", "fix"])
            rows.append((who, f"i{k}", v, "" if v == "accept" else "other",
                         json.dumps({"question": "q"}) if v == "fix" else "{}", "", 0.0))
    conn = sqlite3.connect(folder / "reviews.sqlite")
    conn.executemany("INSERT INTO reviews (reviewer, item_id, verdict, reason, edits, note, at) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    conn.commit()
    conn.close()
    t = time.perf_counter()
    got = read_reviews(folder)
    t_read = time.perf_counter() - t
    t = time.perf_counter()
    review_counts(got, args.items)
    t_counts = time.perf_counter() - t
    tasks = {f"i{k}": f"t{k % args.tasks}" for k in range(args.items)}
    t = time.perf_counter()
    agreement(got, tasks)
    t_agree = time.perf_counter() - t
    shutil.rmtree(folder)
    print(f"load average {os.getloadavg()[0]:.1f}; one review committed: {per_add * 1000:.1f} ms (mean of "
          f"{args.adds}); {len(got.reviews):,} rows read: {t_read:.2f} s; outcomes and counts: {t_counts:.2f} s; "
          f"agreement, {args.tasks} tasks x 1 pair, {args.items // args.tasks:,} items each, 1,000 resamples: "
          f"{t_agree:.2f} s")


if __name__ == "__main__":
    main()
