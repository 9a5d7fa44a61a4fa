"""Build benchmark: ``medr2 build --source sample`` end to end, in fresh processes.

For every number of cases N and every worker count W the script runs ``medr2 build --source sample
--cases N --workers W`` ``--repeats`` times, interleaving the configurations (W=1, W=2, W=1, W=2, ...)
so that a speed-up is measured from runs that saw the same load on a shared machine. While a build
runs, the whole process tree (the builder and its worker processes) is sampled every 0.2 s with
psutil: the peak of the summed RSS (an upper bound: pages shared after fork count once per process)
and the peak of the summed PSS (shared pages split between the processes sharing them). Reported per
configuration: median wall time, items, items per second, peak tree RSS and PSS (max over repeats),
and the median over repeats of the W=1 / W=2 wall-time ratio. Every run's ``items.parquet`` sha256
and the set of image names are compared: the script fails if they differ between runs or worker
counts (same seed, same bytes).

``--before-src DIR`` also runs the medr2 sources in DIR (a copy of ``src/`` taken before a change)
in the same invocation, alternating with the current sources, and reports the before/after ratio of
median wall times (same outputs are checked for when the change was meant to keep them).
``--phases`` runs one build per N (and per source with ``--before-src``) through ``build_bench`` with
its progress messages and reports the peak tree RSS / PSS and the builder's own RSS in each pass
(realize, items, variants), to see which pass grows with N. ``--profile`` builds N cases once
in-process with one worker under cProfile and prints where the time goes (PNG encoding, PNG decoding,
background loading, task drafting, assembly and Parquet writing)
and the top functions; ``--png-levels`` re-encodes the images of that profile build (or, with
``--png-bench DIR``, of an existing bench) at several zlib levels and prints the encode time per image
and the size, measured in the same run.

    .venv/bin/python bench/bench_build.py --cases 500 2000 --workers 1 2 --repeats 3
    .venv/bin/python bench/bench_build.py --cases 1000 --workers 2 --before-src /tmp/medr2-build-before/src
    .venv/bin/python bench/bench_build.py --cases 100 400 --workers 2 --variants all --phases
    .venv/bin/python bench/bench_build.py --cases 300 --profile --png-levels 6 3 1
    .venv/bin/python bench/bench_build.py --png-bench /tmp/some-bench --png-levels 6 3 2 1 --png-images 120
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import io
import json
import os
import platform
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parents[1]


# -- one build in a fresh process ---------------------------------------------------------------------

class TreeSampler(threading.Thread):
    """Samples the summed RSS and PSS (bytes) of a process and its descendants until stopped."""

    def __init__(self, pid: int, every_s: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.pid, self.every_s = pid, every_s
        self.peak_rss = 0
        self.peak_pss = 0
        self.peak_procs = 0
        self.timeline: list[tuple[float, int, int, int]] = []  # (time.time(), tree RSS, tree PSS, root RSS)
        self._halt = threading.Event()

    def run(self) -> None:
        try:
            root = psutil.Process(self.pid)
        except psutil.NoSuchProcess:
            return
        while not self._halt.is_set():
            try:
                procs = [root, *root.children(recursive=True)]
            except psutil.NoSuchProcess:
                return
            rss = pss = root_rss = 0
            for p in procs:
                try:
                    mi = p.memory_full_info()
                except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                    continue
                rss += mi.rss
                pss += getattr(mi, "pss", mi.rss)
                if p.pid == self.pid:
                    root_rss = mi.rss
            self.timeline.append((time.time(), rss, pss, root_rss))
            self.peak_rss = max(self.peak_rss, rss)
            self.peak_pss = max(self.peak_pss, pss)
            self.peak_procs = max(self.peak_procs, len(procs))
            self._halt.wait(self.every_s)

    def stop(self) -> None:
        self._halt.set()
        self.join()


def image_set_hash(bench: Path) -> str:
    names = sorted(p.name for p in (bench / "images").iterdir() if p.suffix == ".png")
    return hashlib.sha256("\n".join(names).encode()).hexdigest()


def file_sha(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def run_sampled(cmd: list[str], env: dict[str, str]) -> tuple[str, float, TreeSampler]:
    """Run a build command while sampling its process tree's memory; its stdout, wall seconds and sampler."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    sampler = TreeSampler(proc.pid)
    sampler.start()
    stdout, stderr = proc.communicate()
    wall = time.perf_counter() - t0
    sampler.stop()
    if proc.returncode != 0:
        raise SystemExit(f"build failed ({proc.returncode}):\n{stdout[-3000:]}\n{stderr[-3000:]}")
    return stdout, wall, sampler


def run_build(out: Path, n: int, workers: int, seed: int, variants: str | None, src: str | None) -> dict[str, Any]:
    """One ``medr2 build`` in a fresh interpreter; returns timings, memory, counts and output hashes."""
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src
    cmd = [sys.executable, "-c", "from medr2.cli import main; main()", "build", "--source", "sample",
           "--out", str(out), "--cases", str(n), "--workers", str(workers), "--seed", str(seed)]
    if variants:
        cmd += ["--variants", variants]
    stdout, wall, sampler = run_sampled(cmd, env)
    ru = psutil.Process().cpu_times()  # children's CPU is folded in after wait()
    manifest = json.loads((out / "manifest.json").read_text())
    counts = manifest["counts"]
    res = {
        "n": n, "workers": workers, "src": src or "current", "wall_s": wall,
        "items": counts["items"], "clean": counts["variant"].get("clean", 0), "cases": manifest["cases"]["n"],
        "peak_rss_mib": sampler.peak_rss / 2**20, "peak_pss_mib": sampler.peak_pss / 2**20,
        "procs": sampler.peak_procs, "children_cpu_s": ru.children_user + ru.children_system,
        "items_sha": file_sha(out / "items.parquet"), "images_sha": image_set_hash(out),
        "bench_sha": manifest["checksums"]["bench"],  # covers items.parquet and cases.parquet
        "disk_mib": sum(p.stat().st_blocks * 512 for p in out.rglob("*") if p.is_file()) / 2**20,  # allocated
    }
    res["items_per_s"] = res["items"] / wall
    shutil.rmtree(out, ignore_errors=True)
    return res


# -- the matrix ---------------------------------------------------------------------------------------

def run_matrix(args: argparse.Namespace, workdir: Path) -> list[dict[str, Any]]:
    sources: list[str | None] = [None] + ([args.before_src] if args.before_src else [])
    runs: list[dict[str, Any]] = []
    cpu_before = 0.0
    for n in args.cases:
        for rep in range(args.repeats):
            for src in sources:
                for w in args.workers:
                    r = run_build(workdir / "bench", n, w, args.seed, args.variants, src)
                    r["rep"] = rep
                    r["cpu_s"] = r["children_cpu_s"] - cpu_before
                    cpu_before = r["children_cpu_s"]
                    runs.append(r)
                    print(f"  N={n} W={w} src={r['src']} rep={rep}: {r['wall_s']:.1f} s, {r['items']} items "
                          f"({r['items_per_s']:.0f}/s), CPU {r['cpu_s']:.1f} s, peak RSS {r['peak_rss_mib']:.0f} "
                          f"MiB, PSS {r['peak_pss_mib']:.0f} MiB, {r['procs']} procs, {r['disk_mib']:.1f} MiB on disk",
                          flush=True)
    return runs


def check_same_outputs(runs: list[dict[str, Any]]) -> list[str]:
    problems = []
    for n in sorted({r["n"] for r in runs}):
        for src in sorted({r["src"] for r in runs}):
            rs = [r for r in runs if r["n"] == n and r["src"] == src]
            if len({(r["bench_sha"], r["items_sha"], r["images_sha"]) for r in rs}) != 1:
                problems.append(f"N={n} src={src}: outputs differ between runs / worker counts")
    return problems


def summarize(runs: list[dict[str, Any]], workers: list[int]) -> list[dict[str, Any]]:
    rows = []
    for n in sorted({r["n"] for r in runs}):
        for src in sorted({r["src"] for r in runs}, key=lambda s: s != "current"):
            for w in workers:
                rs = [r for r in runs if r["n"] == n and r["src"] == src and r["workers"] == w]
                rows.append({
                    "n": n, "src": src, "workers": w, "repeats": len(rs), "items": rs[0]["items"],
                    "clean": rs[0]["clean"], "wall_s": statistics.median(r["wall_s"] for r in rs),
                    "items_per_s": statistics.median(r["items_per_s"] for r in rs),
                    "cpu_s": statistics.median(r["cpu_s"] for r in rs),
                    "peak_rss_mib": max(r["peak_rss_mib"] for r in rs),
                    "peak_pss_mib": max(r["peak_pss_mib"] for r in rs),
                })
    return rows


def ratios(runs: list[dict[str, Any]], workers: list[int], before: bool) -> list[str]:
    lines = []
    for n in sorted({r["n"] for r in runs}):
        for src in sorted({r["src"] for r in runs}, key=lambda s: s != "current"):
            if len(workers) >= 2:
                a, b = workers[0], workers[-1]
                per_rep = []
                for rep in sorted({r["rep"] for r in runs}):
                    ra = [r for r in runs if (r["n"], r["src"], r["workers"], r["rep"]) == (n, src, a, rep)]
                    rb = [r for r in runs if (r["n"], r["src"], r["workers"], r["rep"]) == (n, src, b, rep)]
                    if ra and rb:
                        per_rep.append(ra[0]["wall_s"] / rb[0]["wall_s"])
                lines.append(f"N={n} src={src}: speed-up {a} -> {b} workers = {statistics.median(per_rep):.2f}x "
                             f"(median of {len(per_rep)} paired runs: {', '.join(f'{x:.2f}' for x in per_rep)})")
        if before:
            for w in workers:
                per_rep = []
                for rep in sorted({r["rep"] for r in runs}):
                    cur = [r for r in runs if (r["n"], r["src"], r["workers"], r["rep"]) == (n, "current", w, rep)]
                    old = [r for r in runs if r["n"] == n and r["src"] != "current" and r["workers"] == w
                           and r["rep"] == rep]
                    if cur and old:
                        per_rep.append(old[0]["wall_s"] / cur[0]["wall_s"])
                lines.append(f"N={n} W={w}: before/after wall-time ratio = {statistics.median(per_rep):.2f}x "
                             f"(median of {len(per_rep)} paired runs: {', '.join(f'{x:.2f}' for x in per_rep)})")
    return lines


# -- memory per pass ----------------------------------------------------------------------------------

PHASE_DRIVER = """
import sys, time
from medr2.builder.pipeline import build_bench
def say(msg):
    print("PHASE", time.time(), msg.split()[0] + " " + msg.split()[1], flush=True)
n, w, seed, variants, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
r = build_bench("sample", out, seed=seed, n_cases=n, workers=w, variants=variants, progress=say)
print("PHASE", time.time(), "done", flush=True)
print("ITEMS", r.n_items, r.n_clean, flush=True)
"""


def phase_memory(out: Path, n: int, workers: int, seed: int, variants: str, src: str | None) -> dict[str, Any]:
    """One build through ``build_bench`` in a fresh process; peak memory per pass (from its progress lines)."""
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src
    cmd = [sys.executable, "-c", PHASE_DRIVER, str(n), str(workers), str(seed), variants or "", str(out)]
    stdout, wall, sampler = run_sampled(cmd, env)
    ru = psutil.Process().cpu_times()
    marks = [(float(t), name) for _, t, name in (ln.split(" ", 2) for ln in stdout.splitlines()
                                                 if ln.startswith("PHASE "))]
    items, clean = next(ln.split()[1:] for ln in stdout.splitlines() if ln.startswith("ITEMS "))
    phases: dict[str, tuple[float, float, float]] = {}
    start = 0.0
    label = "start-up"
    for t, name in [*marks, (float("inf"), "")]:
        samples = [x for x in sampler.timeline if start <= x[0] < t]
        if samples:
            phases[label] = (max(x[1] for x in samples) / 2**20, max(x[2] for x in samples) / 2**20,
                             max(x[3] for x in samples) / 2**20)
        start, label = t, name
    shutil.rmtree(out, ignore_errors=True)
    return {"n": n, "workers": workers, "src": src or "current", "wall_s": wall, "items": int(items),
            "clean": int(clean), "children_cpu_s": ru.children_user + ru.children_system, "phases": phases}


def run_phases(args: argparse.Namespace, workdir: Path) -> None:
    sources: list[str | None] = [None] + ([args.before_src] if args.before_src else [])
    rows = []
    cpu_before = psutil.Process().cpu_times().children_user + psutil.Process().cpu_times().children_system
    for n in args.cases:
        for src in sources:
            r = phase_memory(workdir / "phases", n, args.workers[-1], args.seed, args.variants or "", src)
            r["cpu_s"], cpu_before = r["children_cpu_s"] - cpu_before, r["children_cpu_s"]
            rows.append(r)
            print(f"  N={n} src={r['src']}: {r['wall_s']:.1f} s, CPU {r['cpu_s']:.1f} s, {r['items']} items",
                  flush=True)
    print(f"\npeak memory per pass (MiB), workers {args.workers[-1]}, variants {args.variants or 'none'}")
    print("| N cases | src | items | CPU s | pass | peak tree RSS | peak tree PSS | peak builder RSS |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        for label, (rss, pss, root) in r["phases"].items():
            print(f"| {r['n']:,} | {'current' if r['src'] == 'current' else 'before'} | {r['items']:,} | "
                  f"{r['cpu_s']:.1f} | {label} | {rss:.0f} | {pss:.0f} | {root:.0f} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


# -- profile ------------------------------------------------------------------------------------------

GROUPS = (  # (label, file part, function): cumulative seconds of that function (nested calls included)
    ("pass 1: realize cases (sample source)", "sample/source.py", "realize"),
    ("  of which case check (validate_case)", "build/validate.py", "validate_case"),
    ("pass 2: draft items (31 task generators)", "tasks/assemble.py", "draft_case"),
    ("  of which cue images (decode, draw, encode)", "tasks/common.py", "cue_draft"),
    ("pass 2: assemble (letters, ids, Item records)", "tasks/assemble.py", "assemble"),
    ("pass 2: rows + items.parquet", "bench/format.py", "add_items"),
)
CALLEES = (  # (label, callee file part, callee function, caller file part, caller function)
    ("PNG encode of case images + masks (in realize_case)", "images.py", "put_array", "sample/source.py",
     "realize_case"),
    ("PNG encode of 1-bit masks (put_mask)", "sample/source.py", "put_mask", "sample/source.py", "realize_case"),
    ("PNG encode of cue images (in cue_draft)", "images.py", "put_array", "tasks/common.py", "cue_draft"),
)


def _cum(stats: dict[Any, Any], path_part: str, fn: str) -> float:
    return sum(v[3] for k, v in stats.items() if path_part in k[0] and (not fn or k[2] == fn))


def _cum_under(stats: dict[Any, Any], path: str, fn: str, caller_path: str, caller_fn: str) -> float:
    total = 0.0
    for k, v in stats.items():
        if path in k[0] and k[2] == fn:
            total += sum(c[3] for ck, c in v[4].items() if caller_path in ck[0] and ck[2] == caller_fn)
    return total


def profile(n: int, seed: int, workdir: Path, top: int, png_levels: list[int]) -> None:
    from medr2.builder.pipeline import build_bench

    out = workdir / "profile"
    shutil.rmtree(out, ignore_errors=True)
    pr = cProfile.Profile()
    t0 = time.perf_counter()
    pr.enable()
    res = build_bench("sample", out, seed=seed, n_cases=n, workers=1)
    pr.disable()
    wall = time.perf_counter() - t0
    print(f"\nbuild_bench(sample, {n} cases, 1 worker) in-process under cProfile: {wall:.1f} s, "
          f"{res.n_clean} clean items")
    st = pstats.Stats(pr)
    stats: dict[tuple[str, int, str], tuple[Any, ...]] = st.stats  # type: ignore[attr-defined]
    encode = sum(v[2] for k, v in stats.items() if k[2] == "<method 'encode' of 'ImagingEncoder' objects>")
    decode = sum(v[2] for k, v in stats.items() if k[2] == "<method 'decode' of 'ImagingDecoder' objects>")
    print(f"  zlib/PNG encoder (ImagingEncoder.encode): {encode:.1f} s ({100 * encode / wall:.0f}%)")
    print(f"  PNG decoder (ImagingDecoder.decode):      {decode:.1f} s ({100 * decode / wall:.0f}%)")
    for label, path_part, fn in GROUPS:
        cum = _cum(stats, path_part, fn)
        print(f"  {label:<56} {cum:6.1f} s ({100 * cum / wall:3.0f}%)")
    bg = _cum(stats, "sample/source.py", "realize") - _cum(stats, "sample/source.py", "realize_case")
    print(f"  {'background loading (SampleSource.realize - realize_case)':<56} {bg:6.1f} s ({100 * bg / wall:3.0f}%)")
    for label, path, fn, cpath, cfn in CALLEES:
        cum = _cum_under(stats, path, fn, cpath, cfn)
        print(f"  {label:<56} {cum:6.1f} s ({100 * cum / wall:3.0f}%)")
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(top)
    print(s.getvalue())
    if png_levels:
        png_level_table(out, png_levels)
    shutil.rmtree(out, ignore_errors=True)


def png_level_table(bench: Path, levels: list[int], limit: int = 400) -> None:
    """Re-encode the grey and RGB images of a bench at several zlib levels (same images, same run)."""
    import numpy as np
    from PIL import Image

    arrs = []
    for p in sorted((bench / "images").iterdir()):
        with Image.open(p) as im:
            if im.mode in ("L", "RGB") and min(im.size) >= 64:
                arrs.append(np.asarray(im).copy())
    arrs = arrs[:limit]
    print(f"PNG encoding of {len(arrs)} bench images (Pillow, optimize=False), median of 3 passes:")
    print("| zlib level | ms per image | KiB per image |")
    print("|---|---|---|")
    for lvl in levels:
        times, size = [], 0
        for _ in range(3):
            t0 = time.perf_counter()
            size = 0
            for a in arrs:
                buf = io.BytesIO()
                Image.fromarray(a).save(buf, format="PNG", compress_level=lvl, optimize=False)
                size += buf.tell()
            times.append(time.perf_counter() - t0)
        print(f"| {lvl} | {1000 * statistics.median(times) / len(arrs):.1f} | {size / len(arrs) / 1024:.0f} |")


# -- main ---------------------------------------------------------------------------------------------

def machine() -> str:
    mem = psutil.virtual_memory().total / 2**30
    return (f"{os.cpu_count()} cores, {mem:.0f} GiB RAM, {platform.processor() or platform.machine()}, "
            f"Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f} at start")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, nargs="+", default=[500], help="numbers of cases N")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker counts (first vs last: speed-up)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--variants", default=None, help="passed to --variants (e.g. all)")
    ap.add_argument("--before-src", default=None, help="a copy of src/ from before a change, run alternately")
    ap.add_argument("--workdir", type=Path, default=None, help="scratch folder (default: a temp folder)")
    ap.add_argument("--json", type=Path, default=None, help="also write every run as JSON here")
    ap.add_argument("--phases", action="store_true", help="peak memory per build pass, one build per N (and src)")
    ap.add_argument("--profile", action="store_true", help="in-process cProfile of one build of the first N")
    ap.add_argument("--png-levels", type=int, nargs="*", default=[], help="with --profile: zlib levels to compare")
    ap.add_argument("--png-bench", type=Path, default=None,
                    help="only compare --png-levels on the images of this existing bench, then exit")
    ap.add_argument("--png-images", type=int, default=400, help="how many images --png-bench re-encodes")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="medr2-bench-build-"))
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"machine: {machine()}")
    if args.png_bench:
        png_level_table(args.png_bench, args.png_levels or [6, 3, 1], args.png_images)
        return
    if args.phases:
        run_phases(args, workdir)
        return
    if args.profile:
        profile(args.cases[0], args.seed, workdir, args.top, args.png_levels)
        return
    runs = run_matrix(args, workdir)
    if args.json:
        args.json.write_text(json.dumps(runs, indent=1))
    extra = f" --variants {args.variants}" if args.variants else ""
    print(f"\nmedr2 build --source sample --cases N --workers W{extra}"
          f" (median of {args.repeats} runs; peak memory = max over runs of the process tree's summed RSS / PSS)")
    print("| N cases | src | workers | items | median wall s | items/s | CPU s | peak RSS MiB | peak PSS MiB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in summarize(runs, args.workers):
        print(f"| {r['n']:,} | {r['src'] if r['src'] == 'current' else 'before'} | {r['workers']} | {r['items']:,} | "
              f"{r['wall_s']:.1f} | {r['items_per_s']:.0f} | {r['cpu_s']:.1f} | {r['peak_rss_mib']:.0f} | "
              f"{r['peak_pss_mib']:.0f} |")
    for line in ratios(runs, args.workers, bool(args.before_src)):
        print(line)
    problems = check_same_outputs(runs)
    if problems:
        print("\n".join(problems))
        raise SystemExit(1)
    print("same seed -> same items.parquet, cases.parquet and image set in every run and worker count: yes")
    if args.before_src:
        same = all(len({(r["bench_sha"], r["items_sha"], r["images_sha"]) for r in runs if r["n"] == n}) == 1
                   for n in {r["n"] for r in runs})
        print(f"before and after give the same items.parquet, cases.parquet and image set: {'yes' if same else 'no'}")


if __name__ == "__main__":
    main()
