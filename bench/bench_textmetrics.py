"""Report-text metrics (ROUGE, sentence BLEU, METEOR) per distinct (answer, reference) pair of a real run.

Collects the run's report answers (ok rows of report tasks) and their references from its bench, then, in a fresh
process per measurement, computes ``medr2.scoring.textmetrics.item_text_metrics`` once per distinct pair (the models
loaded first, outside the timing) and prints the CPU seconds, microseconds per pair and a sha256 of every value.
``--before-src DIR`` times a copy of ``src/`` taken before a change in the same sitting, alternating with this
checkout, and checks that both give the same values::

    mkdir -p /tmp/before && git archive main src | tar -x -C /tmp/before
    .venv/bin/python bench/bench_textmetrics.py --run /tmp/scale-runs/r-b1000 --before-src /tmp/before/src --repeats 3
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sqlite3
import statistics
import sys
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from fresh_process import json_result  # noqa: E402


def pairs(run: Path, limit: int) -> list[tuple[str, str]]:
    """Distinct (answer, reference) pairs of the run's report items, in stored order."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from medr2.scoring.scorer import REPORT_TASKS

    bench = json.loads((run / "manifest.json").read_text())["bench"]["path"]
    t = pq.read_table(Path(bench) / "items.parquet", columns=["item_id", "task", "answer"])
    t = t.filter(pc.is_in(t["task"], value_set=pa.array(sorted(REPORT_TASKS))))
    ref = dict(zip(t["item_id"].to_pylist(), t["answer"].to_pylist(), strict=True))
    con = sqlite3.connect(f"file:{run / 'store.sqlite'}?mode=ro", uri=True)
    out: dict[tuple[str, str], None] = {}
    for item_id, raw in con.execute("SELECT item_id, raw FROM predictions WHERE status = 'ok' ORDER BY rowid"):
        if item_id in ref and raw and ref[item_id]:
            out[(raw, ref[item_id])] = None
            if len(out) >= limit:
                break
    con.close()
    return list(out)


def child(path: Path) -> None:
    from medr2.scoring import textmetrics as tm

    work = json.loads(path.read_text())
    tm.load_models()
    t0 = time.process_time()
    got = [tm.item_text_metrics(h, r) for h, r in work]
    cpu = time.process_time() - t0
    digest = hashlib.sha256(json.dumps(got, sort_keys=True).encode()).hexdigest()
    print(json.dumps({"cpu_s": cpu, "n": len(work), "sha256": digest}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", type=Path)
    ap.add_argument("--limit", type=int, default=3000, help="distinct pairs (default 3000)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--before-src", type=Path)
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.child)
        return
    if a.run is None:
        ap.error("--run is required")
    sys.path.insert(0, str(SRC))
    work = Path(f"/tmp/bench-textmetrics-{os.getpid()}.json")
    work.write_text(json.dumps(pairs(a.run, a.limit)))
    print(f"machine: {os.uname().machine}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; "
          f"{len(json.loads(work.read_text()))} distinct pairs of {a.run}")
    variants = {"after": SRC, **({"before": a.before_src} if a.before_src else {})}
    got: dict[str, list[dict[str, float | str]]] = {k: [] for k in variants}
    for r in range(a.repeats):
        for name, src in variants.items():
            m = json_result([sys.executable, __file__, "--child", str(work)], src)
            got[name].append(m)
            print(f"  {name} #{r + 1}: {m['cpu_s']:.2f} CPU s, {1e6 * float(m['cpu_s']) / float(m['n']):.0f} µs per "
                  f"pair, load {os.getloadavg()[0]:.1f}", flush=True)
    med = {k: statistics.median(float(m["cpu_s"]) for m in v) for k, v in got.items()}
    for k, v in med.items():
        print(f"{k}: median {v:.2f} CPU s ({1e6 * v / float(got[k][0]['n']):.0f} µs per pair)")
    if "before" in med:
        same = {m["sha256"] for v in got.values() for m in v}
        print(f"before/after: {med['before'] / med['after']:.2f}x less CPU; same values: {len(same) == 1}")
    work.unlink()


if __name__ == "__main__":
    main()
