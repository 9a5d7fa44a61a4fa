"""Memory and CPU of a full evaluation: ``medr2 eval --bench B --model baseline:random --variants all --out R``
(every item, mode independent), one fresh process per bench and source, with the peak RSS and CPU seconds
(user + system) from ``os.wait4``, the per-item slopes between consecutive benches, and the stored answers
compared between sources (the same request hashes and answers, whatever the code: ``--before-src``).

    PYTHONPATH=src .venv/bin/python bench/bench_eval_memory.py --bench /tmp/val-bench/b100 /tmp/val-bench/b1000 \\
        --before-src /tmp/medr2-before/src --base /tmp/eval-memory

``--before-src DIR``: run DIR's sources too (e.g. ``git archive`` of main's ``src/``), alternating with this
checkout's, bench by bench. The runs are left under ``--base`` (removed first).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import sqlite3
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from fresh_process import run  # noqa: E402


def answers_digest(run_dir: Path) -> str:
    """sha256 of every stored (request_hash, item_id, mode, status, raw), in request-hash order."""
    h = hashlib.sha256()
    with sqlite3.connect(f"file:{run_dir / 'store.sqlite'}?mode=ro", uri=True) as conn:
        for row in conn.execute("SELECT request_hash, item_id, mode, status, raw FROM predictions "
                                "ORDER BY request_hash"):
            h.update(json.dumps(row).encode())
    return h.hexdigest()


def n_items(bench: Path) -> int:
    return int(json.loads((bench / "manifest.json").read_text())["counts"]["items"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", type=Path, nargs="+", required=True)
    ap.add_argument("--before-src", type=Path, default=None)
    ap.add_argument("--base", type=Path, default=Path("/tmp/eval-memory"))
    args = ap.parse_args()
    sources = {"before": args.before_src, "after": SRC} if args.before_src else {"after": SRC}
    shutil.rmtree(args.base, ignore_errors=True)
    args.base.mkdir(parents=True)
    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}")
    rows: dict[str, list[tuple[int, float, float]]] = {label: [] for label in sources}
    for bench in args.bench:
        digests = set()
        for label, src in sources.items():
            out = args.base / f"{bench.name}-{label}"
            load = os.getloadavg()[0]
            # every split (sources before issue 50 ask every split by default and know no "all")
            every = ["--split", "all"] if "ALL_SPLITS" in (Path(src) / "medr2/run/runner.py").read_text() else []
            wall, cpu, rss = run([sys.executable, "-m", "medr2", "eval", *every, "--bench", str(bench),
                                  "--model", "baseline:random", "--variants", "all", "--out", str(out)], src)
            n = n_items(bench)
            digests.add(answers_digest(out))
            rows[label].append((n, cpu, rss))
            print(f"{bench.name:<8} {label:<6} items {n:>9,}  wall {wall:7.1f} s  CPU {cpu:7.1f} s "
                  f"({cpu / n * 1e6:5.0f} us/item)  peak RSS {rss:6.0f} MiB  load {load:4.1f}", flush=True)
        print(f"{bench.name:<8} stored answers {'identical' if len(digests) == 1 else 'DIFFER'} across sources")
    for label, got in rows.items():
        for (n0, c0, r0), (n1, c1, r1) in zip(got, got[1:], strict=False):
            print(f"{label:<6} {n0:>9,} -> {n1:>9,} items: peak RSS {(r1 - r0) * 2**20 / (n1 - n0):6.0f} B/item, "
                  f"CPU {(c1 - c0) / (n1 - n0) * 1e6:5.0f} us/item")


if __name__ == "__main__":
    main()
