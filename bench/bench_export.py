"""``medr2 export --with-variants`` on benches of different sizes: wall, CPU and peak RSS, with this checkout's
sources and, with ``--before-src DIR``, with other sources (e.g. ``git archive`` of an older ``src/``), side by
side; the two exports are written to the same folder in turn and compared file by file (``state.json`` of an
``hf`` export without its ``_fingerprint``, which ``datasets`` derives from an in-memory table; Arrow files that
differ are also compared by schema, record batches and values).

Each sample is a fresh process (``python -m medr2 export --bench B --format F --out DIR --with-variants``); peak
RSS is the child's ``ru_maxrss`` (``os.wait4``), CPU its user + system time. Samples alternate between the
sources; the median of ``--repeats`` is printed, with the per-item slope between the first and the last bench.
``--after-only FORMAT:BENCH_NAME`` runs only this checkout's sources there (a "before" that cannot fit).

    .venv/bin/python bench/bench_export.py --bench /tmp/b100 /tmp/b1000 --format swift --repeats 3 \\
        --before-src /tmp/before/src --out-root /tmp/exp
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from fresh_process import run as _run  # noqa: E402


def run(cmd: list[str], src: Path) -> tuple[float, float, float]:
    """:func:`fresh_process.run` without the datasets progress bars."""
    return _run(cmd, src, {"HF_DATASETS_DISABLE_PROGRESS_BARS": "1"})


def _content(path: Path) -> bytes:
    if path.name == "state.json":
        state = json.loads(path.read_text("utf-8"))
        state.pop("_fingerprint", None)
        return json.dumps(state, sort_keys=True).encode()
    return path.read_bytes()


def _same_arrow(a: Path, b: Path) -> bool:
    """Two Arrow stream files with the same schema, record batch sizes and values."""
    import pyarrow as pa

    with pa.memory_map(str(a)) as fa, pa.memory_map(str(b)) as fb:
        ra, rb = pa.ipc.open_stream(fa), pa.ipc.open_stream(fb)
        if not ra.schema.equals(rb.schema, check_metadata=True):
            return False
        for x, y in zip(ra, rb, strict=True):
            if x.num_rows != y.num_rows or not x.equals(y):
                return False
    return True


def differing(a: Path, b: Path) -> tuple[list[str], list[str]]:
    """Files that differ (or exist in one only), and of those the Arrow files whose content is the same."""
    names = {p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file()}
    names |= {p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file()}
    diff = sorted(n for n in names if not (a / n).is_file() or not (b / n).is_file()
                  or _content(a / n) != _content(b / n))
    return diff, [n for n in diff if n.endswith(".arrow") and (a / n).is_file() and (b / n).is_file()
                  and _same_arrow(a / n, b / n)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", nargs="+", type=Path, required=True)
    ap.add_argument("--format", nargs="+", default=["hf", "swift"])
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--before-src", type=Path)
    ap.add_argument("--after-only", nargs="*", default=[], help="FORMAT:BENCH_NAME pairs without a 'before'")
    ap.add_argument("--out-root", type=Path, required=True)
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()}", flush=True)
    results: dict[tuple[str, str, str], list[tuple[float, float, float]]] = {}
    items: dict[str, int] = {}
    for fmt in args.format:
        for bench in args.bench:
            items[bench.name] = int(json.loads((bench / "manifest.json").read_text())["counts"]["items"])
            out = args.out_root / f"{bench.name}_{fmt}"
            codes = [("after", SRC)]
            if args.before_src and f"{fmt}:{bench.name}" not in args.after_only:
                codes.insert(0, ("before", args.before_src))
            for rep in range(args.repeats):
                for code, src in codes:
                    shutil.rmtree(out, ignore_errors=True)
                    cmd = [sys.executable, "-m", "medr2", "export", "--bench", str(bench), "--format", fmt,
                           "--out", str(out), "--with-variants"]
                    sample = run(cmd, src)
                    results.setdefault((fmt, bench.name, code), []).append(sample)
                    n = json.loads((out / "medr2_export.json").read_text())["n_examples"]
                    print(f"{fmt} {bench.name} {code} rep {rep}: wall {sample[0]:.1f} s, CPU {sample[1]:.1f} s, "
                          f"peak {sample[2]:.0f} MiB, {n} examples, load {os.getloadavg()[0]:.1f}", flush=True)
                    if code == "before":
                        shutil.rmtree(out.with_name(out.name + ".before"), ignore_errors=True)
                        out.rename(out.with_name(out.name + ".before"))
                    elif len(codes) == 2:
                        diff, same_arrow = differing(out.with_name(out.name + ".before"), out)
                        print(f"  files differing from before: {diff[:10] or 'none'}; of those, Arrow files with the "
                              f"same schema, batches and values: {same_arrow[:10] or 'none'}", flush=True)
                        shutil.rmtree(out.with_name(out.name + ".before"))
                shutil.rmtree(out, ignore_errors=True)
    print("\n| format | bench | items | code | wall s | CPU s | peak RSS MiB |\n|---|---|---|---|---|---|---|")
    for (fmt, name, code), samples in results.items():
        med = [statistics.median(s[k] for s in samples) for k in range(3)]
        print(f"| {fmt} | {name} | {items[name]:,} | {code} | {med[0]:.1f} | {med[1]:.1f} | {med[2]:.0f} |")
    first, last = args.bench[0].name, args.bench[-1].name
    for fmt in args.format:
        for code in ("before", "after"):
            a, b = results.get((fmt, first, code)), results.get((fmt, last, code))
            if a and b and first != last:
                d = items[last] - items[first]
                rss = (statistics.median(s[2] for s in b) - statistics.median(s[2] for s in a)) * 2**20 / d
                cpu = (statistics.median(s[1] for s in b) - statistics.median(s[1] for s in a)) * 1e6 / d
                print(f"slope {fmt} {code}: {rss:,.0f} B per item, {cpu:,.1f} CPU µs per item")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
