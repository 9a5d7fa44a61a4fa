"""``medr2 report`` on scored runs of benches of different sizes: wall, CPU and peak RSS, with this checkout's
sources and, with ``--before-src DIR``, with other sources (e.g. ``git archive`` of an older ``src/``), side by
side; the two reports are compared byte for byte.

Each sample is a fresh process (``python -m medr2 report RUN --out DIR``); peak RSS is the child's
``ru_maxrss`` (``os.wait4``), CPU its user + system time. Samples alternate between the sources (noise hits
both); the median of ``--repeats`` is printed, with the per-item and per-scored-row slope between the first and
the last run given (make them on benches of two sizes).

    .venv/bin/python bench/bench_report.py --run /tmp/r100 /tmp/r300 --repeats 3 --before-src /tmp/before/src
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from fresh_process import run  # noqa: E402


def sizes(run_dir: Path) -> tuple[int, int]:
    """(bench items, scored rows) of a run."""
    import pyarrow.parquet as pq

    manifest = json.loads((run_dir / "manifest.json").read_text())
    bench = manifest["bench"]["path"] if isinstance(manifest.get("bench"), dict) else manifest["bench"]
    bench_path = Path(bench) if Path(bench).is_absolute() else run_dir / bench
    items = int(json.loads((bench_path / "manifest.json").read_text())["counts"]["items"])
    return items, int(pq.read_metadata(str(run_dir / "scores.parquet")).num_rows)


def same_files(a: Path, b: Path) -> list[str]:
    """Files that differ (or exist in one only) between two report folders."""
    names = {p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file()}
    names |= {p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file()}
    return sorted(n for n in names if not (a / n).is_file() or not (b / n).is_file()
                  or (a / n).read_bytes() != (b / n).read_bytes())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", type=Path, nargs="+", required=True, help="scored run folders")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--before-src", type=Path, default=None)
    ap.add_argument("--max-items", type=int, default=None, help="passed to medr2 report (default: its own)")
    args = ap.parse_args()
    extra = ["--max-items", str(args.max_items)] if args.max_items is not None else []
    sources = {"after": SRC}
    if args.before_src:
        sources = {"before": args.before_src, "after": SRC}
    print(f"machine: {os.cpu_count()} cores, {platform.python_version()}, load {os.getloadavg()[0]:.1f}")
    results: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    work = Path(tempfile.mkdtemp(prefix="bench-report-"))
    try:
        for run_dir in args.run:
            for _ in range(args.repeats):
                for label, src in sources.items():
                    out = work / f"{run_dir.name}-{label}"
                    shutil.rmtree(out, ignore_errors=True)
                    got = run([sys.executable, "-m", "medr2", "report", str(run_dir), "--out", str(out), *extra], src)
                    results.setdefault((run_dir.name, label), []).append(got)
            if "before" in sources:
                diff = same_files(work / f"{run_dir.name}-before", work / f"{run_dir.name}-after")
                print(f"{run_dir.name}: reports {'identical' if not diff else 'differ: ' + ', '.join(diff)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    med = {k: tuple(statistics.median(s[i] for s in v) for i in range(3)) for k, v in results.items()}
    print(f"\nmedians of {args.repeats}: medr2 report RUN --out DIR {' '.join(extra)}")
    print(f"{'run':<14}{'items':>9}{'scored':>9}  {'code':<7}{'wall s':>8}{'CPU s':>8}{'peak RSS MiB':>14}")
    for run_dir in args.run:
        n_items, n_scored = sizes(run_dir)
        for label in sources:
            wall, cpu, rss = med[(run_dir.name, label)]
            print(f"{run_dir.name:<14}{n_items:>9}{n_scored:>9}  {label:<7}{wall:>8.2f}{cpu:>8.2f}{rss:>14.0f}")
    if len(args.run) >= 2:
        small, large = args.run[0], args.run[-1]
        (i0, s0), (i1, s1) = sizes(small), sizes(large)
        print(f"\nslope from {small.name} to {large.name} ({i1 - i0} more items, {s1 - s0} more scored rows)")
        for label in sources:
            a, b = med[(small.name, label)], med[(large.name, label)]
            print(f"  {label:<7} peak RSS {(b[2] - a[2]) * 2**20 / (i1 - i0):>8.0f} B/item"
                  f"  {(b[2] - a[2]) * 2**20 / max(1, s1 - s0):>8.0f} B/scored row"
                  f"  CPU {(b[1] - a[1]) * 1e6 / (i1 - i0):>8.1f} µs/item")


if __name__ == "__main__":
    main()
