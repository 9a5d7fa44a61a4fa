"""Answer reading speed: microseconds per answer of ``medr2.scoring.extract.read`` (and ``read_box`` for box rows)
over a labelled corpus (default: ``tests/data/extraction_corpus.jsonl``), uncached, in a fresh process per
measurement. ``--before-src DIR`` times a copy of ``src/`` taken before a change on the *same* corpus file,
alternating with this checkout::

    mkdir -p /tmp/before && git archive HEAD src | tar -x -C /tmp/before
    cp tests/data/extraction_corpus.jsonl /tmp/before/corpus.jsonl
    .venv/bin/python bench/bench_extract.py --corpus /tmp/before/corpus.jsonl --before-src /tmp/before/src

Prints, per source, the median over ``--repeats`` of the per-answer CPU time (``time.process_time``: a shared
machine's other load changes wall time far more) (each repeat reads every row
``--loops`` times) and the ratio after/before.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "extraction_corpus.jsonl"


def child(corpus: Path, loops: int) -> float:
    """Seconds per answer (this process's ``medr2``), reading every corpus row ``loops`` times."""
    from medr2.models.base import BoxConvention
    from medr2.scoring.boxes import read_box
    from medr2.scoring.extract import read

    rows = [json.loads(line) for line in corpus.read_text("utf-8").splitlines() if line.strip()]
    conv = BoxConvention()
    for r in rows:  # warm imports and lazy tables (vocabulary) outside the timing
        read(r["form"], r["response"], r.get("options") or ())
    t0 = time.process_time()
    for _ in range(loops):
        for r in rows:
            if r["form"] == "box":
                read_box(r["response"], conv)
            else:
                read(r["form"], r["response"], r.get("options") or ())
    return (time.process_time() - t0) / (loops * len(rows))


def measure(src: Path, corpus: Path, loops: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run([sys.executable, __file__, "--child", "--corpus", str(corpus), "--loops", str(loops)],
                         env=env, check=True, capture_output=True, text=True).stdout
    return float(out.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--before-src", type=Path, default=None, help="a copy of src/ taken before the change")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--loops", type=int, default=5)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(child(a.corpus, a.loops))
        return
    srcs = {"after": SRC} if a.before_src is None else {"before": a.before_src, "after": SRC}
    times: dict[str, list[float]] = {k: [] for k in srcs}
    for _ in range(a.repeats):
        for name, src in srcs.items():
            times[name].append(measure(src, a.corpus, a.loops))
    n = sum(1 for line in a.corpus.read_text("utf-8").splitlines() if line.strip())
    print(f"corpus {a.corpus} ({n} answers), {a.repeats} repeats x {a.loops} loops")
    med = {k: statistics.median(v) for k, v in times.items()}
    for name, v in med.items():
        print(f"{name:>7}: {v * 1e6:8.1f} us per answer (min {min(times[name]) * 1e6:.1f})")
    if "before" in med:  # the minimum is the least disturbed by other load on a shared machine
        print(f"  ratio after/before: median {med['after'] / med['before']:.2f}, "
              f"min {min(times['after']) / min(times['before']):.2f}")


if __name__ == "__main__":
    main()
