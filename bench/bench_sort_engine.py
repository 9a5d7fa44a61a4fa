"""Before/after of the out-of-core sort (issue 38: ``medr2.bench.runs.RunSorter`` replaced by DuckDB,
``medr2.bench.sorting``) and the id set against DuckDB, side by side in one sitting.

``enlarge``: a bench of ``--copies`` times a built bench's items (each copy's item, parent, chain and pair ids
renamed; the same cases, images (hard links) and renders), to reach a size where the sort spills.
``compare``: ``write_bench`` of the bench's records (``bench_bench_write``'s child: CPU, wall and peak RSS of the
write, the records loaded first) and ``medr2 export --format swift --with-variants`` (a fresh process measured
whole), with ``--before-src`` and this checkout's sources alternating, ``--repeats`` each; the medians, the ratios
after/before, and whether ``items.parquet`` and every exported file are the same bytes.
``floor``: DuckDB's memory floor: ``--pieces`` x 20,000 random rows of ``--width`` bytes sorted by
``medr2.bench.sorting.Sorter`` under ``--memory``, in this process (whether it fits, what spilled, CPU, peak RSS).
``idset``: the writer's duplicate check (ids a block of 1,024 at a time, first occurrence wins) on ``--n`` random
ids, with ``medr2.bench.idset.IdSet`` and with a DuckDB table keyed by the id, each in a fresh process.

    .venv/bin/python bench/bench_sort_engine.py enlarge --bench /tmp/b220 --copies 4 --out /tmp/b4x
    .venv/bin/python bench/bench_sort_engine.py compare --bench /tmp/b4x --before-src /tmp/before/src --repeats 3
    .venv/bin/python bench/bench_sort_engine.py floor --memory 256MiB --pieces 80 --width 1000
    .venv/bin/python bench/bench_sort_engine.py idset --n 300000 1000000
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parent.parent / "src"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_bench_write import WRITE  # noqa: E402
from bench_export import differing  # noqa: E402
from fresh_process import json_result, run  # noqa: E402


def enlarge(bench: Path, copies: int, out: Path) -> None:
    from medr2.bench.format import WRITER_KEYS, load_bench, read_manifest, write_bench

    b = load_bench(bench, validate=False)
    extra = {k: v for k, v in read_manifest(bench).items() if k not in WRITER_KEYS}

    def renamed(k: int, x: str | None) -> str | None:
        return x if x is None or k == 0 else hashlib.sha256(f"{x}:{k}".encode()).hexdigest()[:16]

    items = [it if k == 0 else it.model_copy(update={
        "item_id": renamed(k, it.item_id), "parent_id": renamed(k, it.parent_id),
        "chain_id": it.chain_id and f"{it.chain_id}~{k}", "pair_id": it.pair_id and f"{it.pair_id}~{k}"})
        for k in range(copies) for it in b.items]
    out.mkdir(parents=True)
    shutil.copytree(bench / "images", out / "images", copy_function=os.link)  # hard links: no symlink leaves the root
    if (bench / "renders.parquet").exists():
        shutil.copy(bench / "renders.parquet", out / "renders.parquet")
    write_bench(out, b.cases, items, extra)
    print(f"{out}: {len(items)} items, {len(b.cases)} cases")


def _median(rows: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def compare(bench: Path, before: Path, repeats: int, out_root: Path) -> None:
    sources = {"before": before, "after": SRC}
    got: dict[tuple[str, str], list[dict[str, float]]] = {}
    print(f"load average at start: {os.getloadavg()}", flush=True)
    for rep in range(repeats):
        for label, src in sources.items():
            out = out_root / f"write-{label}"
            shutil.rmtree(out, ignore_errors=True)
            w = json_result([sys.executable, "-c", WRITE, str(bench), str(out)], src)
            w["sha"] = int(hashlib.sha256((out / "items.parquet").read_bytes()).hexdigest()[:12], 16)
            got.setdefault(("write", label), []).append(w)
            exp = out_root / f"export-{label}"
            shutil.rmtree(exp, ignore_errors=True)
            wall, cpu, rss = run([sys.executable, "-m", "medr2", "export", "--bench", str(bench), "--format", "swift",
                                  "--out", str(exp), "--with-variants"], src)
            got.setdefault(("export", label), []).append({"wall": wall, "cpu": cpu, "rss": rss})
            print(f"rep {rep} {label}: write wall {w['wall']:.1f} s CPU {w['cpu']:.1f} s peak {w['rss']:.0f} MiB "
                  f"(loaded {w['rss_load']:.0f}); export wall {wall:.1f} s CPU {cpu:.1f} s peak {rss:.0f} MiB; "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)
        same_items = got[("write", "before")][-1]["sha"] == got[("write", "after")][-1]["sha"]
        swift_a, swift_b = out_root / "export-before", out_root / "export-after"
        diff = differing(swift_a, swift_b)[0]
        diff = [d for d in diff if not _same_but_paths(swift_a / d, swift_b / d, swift_a, swift_b)]
        print(f"  items.parquet same bytes: {same_items}; export files differing: {diff[:5] or 'none'}", flush=True)
    n = json.loads((bench / "manifest.json").read_text())["counts"]["items"]
    print(f"\n{n:,} items, median of {repeats}; load average at end {os.getloadavg()}")
    print("| step | code | wall s | CPU s | peak RSS MiB |\n|---|---|---|---|---|")
    for (step, label), rows in got.items():
        extra = f" (records loaded: {_median(rows, 'rss_load'):.0f})" if step == "write" else ""
        print(f"| {step} | {label} | {_median(rows, 'wall'):.1f} | {_median(rows, 'cpu'):.2f} | "
              f"{_median(rows, 'rss'):.0f}{extra} |")
    for step in ("write", "export"):
        b, a = got[(step, "before")], got[(step, "after")]
        print(f"{step} after/before: wall {_median(a, 'wall') / _median(b, 'wall'):.2f}, "
              f"CPU {_median(a, 'cpu') / _median(b, 'cpu'):.2f}, peak RSS {_median(a, 'rss') / _median(b, 'rss'):.2f}")


def _same_but_paths(a: Path, b: Path, root_a: Path, root_b: Path) -> bool:
    """Two swift files equal once the absolute export folder in them is the same."""
    if not (a.is_file() and b.is_file()):
        return False
    return a.read_bytes().replace(str(root_a.resolve()).encode(), str(root_b.resolve()).encode()) == b.read_bytes()


IDSET = r"""
import json, resource, sys, time
import numpy as np
n, engine = int(sys.argv[1]), sys.argv[2]
ids = np.random.default_rng(0).integers(0, 2**63, n, dtype=np.uint64)
ids[n - 1] = ids[n // 3]  # one repeat, the last id: the check must find it, with every other id held
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
t0, c0 = time.perf_counter(), time.process_time()
first = None
if engine == "idset":
    from medr2.bench.idset import IdSet
    s = IdSet()
    for start in range(0, n, 1024):
        k = s.add_ints(ids[start:start + 1024])
        if k is not None:
            first = start + k
            break
else:
    import duckdb, pyarrow as pa
    con = duckdb.connect(config={"memory_limit": "256MiB", "threads": 1})
    con.execute("CREATE TABLE seen (id UBIGINT PRIMARY KEY)")
    for start in range(0, n, 1024):
        block = pa.table({"id": ids[start:start + 1024], "i": np.arange(min(1024, n - start))})
        hit = con.sql("SELECT min(b.i) FROM block b WHERE b.id IN (SELECT id FROM seen) "
                      "OR b.i > (SELECT min(i) FROM block c WHERE c.id = b.id)").fetchall()[0][0]
        if hit is not None:
            first = start + hit
            break
        con.execute("INSERT INTO seen SELECT id FROM block")
print(json.dumps({"cpu": time.process_time() - c0, "wall": time.perf_counter() - t0, "first": first,
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - rss0}))
"""


def idset(sizes: list[int]) -> None:
    print("| ids | engine | wall s | CPU s | peak RSS above the ids MiB (imports included) | first repeat at |\n"
          "|---|---|---|---|---|---|")
    for n in sizes:
        for engine in ("idset", "duckdb"):
            r: dict[str, Any] = json_result([sys.executable, "-c", IDSET, str(n), engine], SRC)
            print(f"| {n:,} | {engine} | {r['wall']:.2f} | {r['cpu']:.2f} | {r['rss']:.0f} | {r['first']} |",
                  flush=True)


def floor(memory: str, pieces: int, width: int) -> None:
    import resource
    import time

    import numpy as np
    import pyarrow as pa

    sys.path.insert(0, str(SRC))  # this checkout's sorter
    from medr2.bench import sorting
    from medr2.errors import WorkFailed

    sorting.SORT_MEMORY = memory
    rng = np.random.default_rng(0)
    n = 20_000

    def wide() -> pa.Array:
        offsets = pa.py_buffer((np.arange(n + 1, dtype=np.int32) * width).tobytes())
        return pa.Array.from_buffers(pa.binary(), n, [None, offsets, pa.py_buffer(rng.bytes(n * width))])

    c0 = time.process_time()
    with tempfile.TemporaryDirectory() as d:
        try:
            with sorting.Sorter(Path(d), ['"k"']) as s:
                for p in range(pieces):
                    s.add(pa.table({"k": rng.integers(0, 50, n), "v": np.arange(p * n, (p + 1) * n), "w": wide()}))
                spilled = sum(f.stat().st_size for f in Path(d).rglob("*") if f.is_file()) >> 20
                rows = sum(b.num_rows for b in s.batches())
            what = f"sorted {rows:,} rows, {spilled} MiB spilled after the adds"
        except WorkFailed:
            what = "out of memory"
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10
    print(f"{memory}, {pieces * n:,} rows of {width} B ({pieces * n * width >> 20} MiB): {what}; "
          f"CPU {time.process_time() - c0:.2f} s, peak RSS {peak} MiB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("enlarge")
    e.add_argument("--bench", type=Path, required=True)
    e.add_argument("--copies", type=int, default=4)
    e.add_argument("--out", type=Path, required=True)
    c = sub.add_parser("compare")
    c.add_argument("--bench", type=Path, required=True)
    c.add_argument("--before-src", type=Path, required=True)
    c.add_argument("--repeats", type=int, default=3)
    c.add_argument("--out-root", type=Path, default=None)
    f = sub.add_parser("floor")
    f.add_argument("--memory", default="256MiB")
    f.add_argument("--pieces", type=int, default=20)
    f.add_argument("--width", type=int, default=1000)
    i = sub.add_parser("idset")
    i.add_argument("--n", type=int, nargs="+", default=[1_000_000, 4_000_000])
    a = ap.parse_args()
    if a.cmd == "enlarge":
        enlarge(a.bench, a.copies, a.out)
    elif a.cmd == "compare":
        with tempfile.TemporaryDirectory(dir=a.out_root) as d:
            compare(a.bench, a.before_src, a.repeats, Path(d))
    elif a.cmd == "floor":
        floor(a.memory, a.pieces, a.width)
    else:
        idset(a.n)


if __name__ == "__main__":
    main()
