"""Opening a large bench: ``medr2 eval --limit N --model baseline:random`` (start-up, time to first request,
whole call, peak RSS) and ``medr2 info`` (wall, peak RSS), for each bench given, with this checkout's sources
and, with ``--before-src DIR``, with other sources (e.g. ``git archive`` of main's ``src/``), side by side.

Each sample is a fresh process. The eval sample runs ``run_eval`` (what ``medr2 eval`` calls) with the
``baseline:random`` adapter wrapped to note the time of its first ``generate`` call: "first request" is the
time from the process start (before importing medr2) to that call; peak RSS is the child's ``ru_maxrss``
(``os.wait4``), CPU its user + system time; the child also notes its CPU time at the first request and the
wall time of ``BenchTable.open`` (where the bench is checked). Samples alternate between the sources (noise
hits both); the median of ``--repeats`` is printed, with the per-item slope between the first and the last
bench given (list them smallest first).

    .venv/bin/python bench/bench_bench_access.py --bench /tmp/b100 /tmp/b400 --limit 1000 --repeats 3 \
        --before-src /tmp/medr2-before/src
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"

EVAL = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from pathlib import Path
from medr2.bench.table import BenchTable
from medr2.models.config import ModelConfig
from medr2.models.registry import load_adapter
from medr2.run.runner import EvalConfig, run_eval
try:  # what the eval command does first, where the code has it (medr2.arrowmem)
    from medr2.arrowmem import use_lean_pool
    use_lean_pool()
except ImportError:
    pass
first = []
opened = []
def factory(config):
    adapter = load_adapter(config)
    generate = adapter.generate
    def timed(requests):
        if not first:
            first.append((time.perf_counter(), time.process_time(),
                          resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))
        return generate(requests)
    adapter.generate = timed
    return adapter
_open = BenchTable.open.__func__
def timed_open(cls, *args, **kw):
    t = time.perf_counter()
    table = _open(cls, *args, **kw)
    opened.append(time.perf_counter() - t)
    return table
BenchTable.open = classmethod(timed_open)
bench, out, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
summary = run_eval(EvalConfig(bench=Path(bench), model=ModelConfig("baseline:random"), out=Path(out), limit=limit,
                              split="all", command=("bench",)), adapter_factory=factory)
print(json.dumps({"first_request_s": first[0][0] - t0, "first_cpu_s": first[0][1], "first_rss_mib": first[0][2],
                  "open_s": sum(opened), "sent": summary.sent}))
"""

# the parts of eval's start-up, one after another in a fresh process: the CPU seconds and the RSS after each
PHASES = r"""
import json, resource, sys, time
from pathlib import Path
try:
    from medr2.arrowmem import use_lean_pool
    use_lean_pool()
except ImportError:
    pass
from medr2.bench.columns import check_items
from medr2.bench.format import Validator, verify_checksums
from medr2.bench.table import BenchTable
from medr2.bench.select import select_items
def rss():
    return int(open("/proc/self/status").read().split("VmRSS:")[1].split()[0]) / 1024
root, limit = Path(sys.argv[1]), int(sys.argv[2])
table = BenchTable(root)
v = Validator(table.root, False)
out = {"start": (0.0, rss())}
def part(name, fn):
    c = time.process_time()
    fn()
    out[name] = (time.process_time() - c, rss())
part("checksums", lambda: verify_checksums(root, table.manifest))
part("cases", lambda: [v.case(c) for c in table.iter_cases()])
part("items", lambda: check_items(table.items_file, v))
table._record_check = v
part("plan", lambda: select_items(table, limit=limit))
out["peak"] = (0.0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
print(json.dumps(out))
"""


def phases(benches: list[Path], sources: dict[str, Path], limit: int, repeats: int) -> None:
    """CPU seconds and RSS after each part of eval's start-up (median of ``repeats`` fresh processes)."""
    print(f"\nparts of the start-up (fresh process each, median of {repeats}): CPU s / RSS MiB after it")
    names = ("checksums", "cases", "items", "plan")
    print(f"{'bench':<12}{'items':>9}  {'code':<7}" + "".join(f"{n:>18}" for n in names) + f"{'peak RSS':>10}")
    got: dict[tuple[str, str], dict[str, tuple[float, float]]] = {}
    for bench in benches:
        samples: dict[str, list[dict[str, list[float]]]] = {label: [] for label in sources}
        for _ in range(repeats):
            for label, src in sources.items():
                _, _, _, stdout = run([sys.executable, "-c", PHASES, str(bench), str(limit)], src)
                samples[label].append(json.loads(stdout.strip().splitlines()[-1]))
        for label in sources:
            runs = samples[label]
            med = {k: (statistics.median(r[k][0] for r in runs), statistics.median(r[k][1] for r in runs))
                   for k in (*names, "peak")}
            got[(bench.name, label)] = med
            print(f"{bench.name:<12}{n_items(bench):>9}  {label:<7}"
                  + "".join(f"{med[k][0]:>9.3f} {med[k][1]:>7.0f}" for k in names) + f"{med['peak'][1]:>10.0f}")
    for a, b in zip(benches, benches[1:], strict=False):
        dn = n_items(b) - n_items(a)
        for label in sources:
            ga, gb = got[(a.name, label)], got[(b.name, label)]
            print(f"  {label:<7}{a.name} -> {b.name} per item: " + ", ".join(
                f"{n} {(gb[n][0] - ga[n][0]) * 1e6 / dn:.2f} µs" for n in names)
                  + f"; RSS after plan {(gb['plan'][1] - ga['plan'][1]) * 2**20 / dn:.1f} B")


def run(cmd: list[str], src: Path) -> tuple[float, float, float, str]:
    """(wall s, CPU s, peak RSS MiB, stdout) of a fresh process with ``src`` first on the path."""
    env = {**os.environ, "PYTHONPATH": str(src), "COLUMNS": "100"}
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out = proc.stdout.read().decode() if proc.stdout else ""
    err = proc.stderr.read().decode() if proc.stderr else ""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {os.waitstatus_to_exitcode(status)}\n{err[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out


def n_items(bench: Path) -> int:
    return int(json.loads((bench / "manifest.json").read_text())["counts"]["items"])


PRUNING = {"--split test": {"split": "test"}, "--variants clean": {"variants": ("clean",)},
           "--split test --variants clean": {"split": "test", "variants": ("clean",)},
           "--variants V8": {"variants": ("V8",)}, "--variants T1": {"variants": ("T1",)},
           "--stage 1": {"stages": frozenset({1})}}


def pruning(bench: Path) -> None:
    """Row groups each common filter reads (of all), with this checkout's ``BenchTable``, and the time of a
    columnar count (``case_id`` column of the rows kept), median of 3."""
    sys.path.insert(0, str(SRC))
    from medr2.bench.table import BenchTable, ItemFilter

    table = BenchTable(bench)
    total = table.items_file.num_row_groups
    for name, kw in PRUNING.items():
        flt = ItemFilter(**kw)
        groups = table.row_groups(flt)
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            n = table.count(flt)
            times.append(time.perf_counter() - t0)
        print(f"  {bench.name:<12} {name:<32} rows {n:>8}  row groups read {len(groups):>3} of {total:<3}"
              f"  count {statistics.median(times) * 1000:>7.1f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", type=Path, nargs="+", required=True)
    ap.add_argument("--limit", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--before-src", type=Path, default=None)
    ap.add_argument("--pruning-only", action="store_true", help="print the row groups filters read, and stop")
    ap.add_argument("--phases", action="store_true",
                    help="time the parts of the start-up (checks, planning) instead of the whole eval, and stop")
    ap.add_argument("--extrapolate", type=int, default=12_700_000,
                    help="items to extrapolate the first request's wall, CPU and RSS to (the last two benches' slope)")
    args = ap.parse_args()
    print("row groups read per filter (this checkout):")
    for bench in args.bench:
        pruning(bench)
    if args.pruning_only:
        return
    sources = {"after": SRC}
    if args.before_src:
        sources = {"before": args.before_src, "after": SRC}
    print(f"machine: {os.cpu_count()} cores, {platform.python_version()}, load {os.getloadavg()[0]:.1f}")
    if args.phases:
        phases(args.bench, sources, args.limit, args.repeats)
        return
    results: dict[tuple[str, str, str], list[dict[str, float]]] = {}
    work = Path(tempfile.mkdtemp(prefix="bench-access-"))
    try:
        for bench in args.bench:
            for rep in range(args.repeats):
                for label, src in sources.items():
                    out = work / f"run-{label}-{rep}"
                    wall, cpu, rss, stdout = run([sys.executable, "-c", EVAL, str(bench), str(out), str(args.limit)],
                                                 src)
                    shutil.rmtree(out)
                    got = json.loads(stdout.strip().splitlines()[-1])
                    results.setdefault((bench.name, label, "eval"), []).append(
                        {"wall": wall, "cpu": cpu, "rss": rss, "first": got["first_request_s"],
                         "first_cpu": got["first_cpu_s"], "first_rss": got["first_rss_mib"], "open": got["open_s"],
                         "sent": got["sent"]})
                    wall, cpu, rss, _ = run([sys.executable, "-m", "medr2", "info", str(bench), "--json"], src)
                    results.setdefault((bench.name, label, "info"), []).append({"wall": wall, "cpu": cpu, "rss": rss})
    finally:
        shutil.rmtree(work, ignore_errors=True)
    med = {k: {f: statistics.median(s[f] for s in v) for f in v[0]} for k, v in results.items()}
    print(f"\nmedians of {args.repeats}; eval = run_eval --limit {args.limit} --model baseline:random")
    print("1st req: wall from process start to the first request; CPU at it; open: BenchTable.open (checks)")
    print("RSS@1st: peak RSS at the first request; eval RSS: the whole call's (the adapter's work included)")
    print(f"{'bench':<12}{'items':>9}  {'code':<7}{'1st req s':>10}{'CPU s':>7}{'open s':>8}{'RSS@1st':>8}"
          f"{'eval wall s':>12}{'eval CPU s':>11}{'eval RSS MiB':>13}{'info wall s':>12}{'info RSS MiB':>13}")
    for bench in args.bench:
        for label in sources:
            e, i = med[(bench.name, label, "eval")], med[(bench.name, label, "info")]
            print(f"{bench.name:<12}{n_items(bench):>9}  {label:<7}{e['first']:>10.2f}{e['first_cpu']:>7.2f}"
                  f"{e['open']:>8.2f}{e['first_rss']:>8.0f}{e['wall']:>12.2f}{e['cpu']:>11.2f}{e['rss']:>13.0f}{i['wall']:>12.2f}"
                  f"{i['rss']:>13.0f}")
    # slopes need benches of different sizes (two copies of one bench, with and without the writer's record, have none)
    if len(args.bench) >= 2 and len({n_items(b) for b in args.bench}) == len(args.bench):
        small, large = args.bench[0], args.bench[-1]
        dn = n_items(large) - n_items(small)
        print(f"\nper-item slope from {small.name} to {large.name} ({dn} more items)")
        for label in sources:
            for what, field, unit, scale in (("eval first request", "first", "µs", 1e6),
                                             ("eval CPU at 1st req", "first_cpu", "µs", 1e6),
                                             ("eval open (checks)", "open", "µs", 1e6),
                                             ("eval RSS at 1st req", "first_rss", "B", 2**20),
                                             ("eval peak RSS", "rss", "B", 2**20),
                                             ("info wall", "wall", "µs", 1e6), ("info peak RSS", "rss", "B", 2**20)):
                cmd = "eval" if what.startswith("eval") else "info"
                d = med[(large.name, label, cmd)][field] - med[(small.name, label, cmd)][field]
                print(f"  {label:<7}{what:<20}{d * scale / dn:>10.1f} {unit}/item")
        if len(args.bench) >= 3:  # consecutive slopes: does the cost per item level off or grow?
            for a, b in zip(args.bench, args.bench[1:], strict=False):
                dn = n_items(b) - n_items(a)
                for label in sources:
                    ea, eb = med[(a.name, label, "eval")], med[(b.name, label, "eval")]
                    wall, cpu = (eb["first"] - ea["first"]) * 1e6 / dn, (eb["first_cpu"] - ea["first_cpu"]) * 1e6 / dn
                    print(f"  {label:<7}{a.name} -> {b.name}: first request {wall:6.2f} µs/item, CPU at it {cpu:6.2f} "
                          f"µs/item, RSS at it {(eb['first_rss'] - ea['first_rss']) * 2**20 / dn:6.1f} B/item")
        a, b = args.bench[-2], args.bench[-1]
        dn = n_items(b) - n_items(a)
        for label in sources:
            ea, eb = med[(a.name, label, "eval")], med[(b.name, label, "eval")]
            k = (args.extrapolate - n_items(b)) / dn
            print(f"  {label:<7}extrapolated to {args.extrapolate:,} items (slope {a.name} -> {b.name}): first request "
                  f"{eb['first'] + k * (eb['first'] - ea['first']):.1f} s, CPU at it "
                  f"{eb['first_cpu'] + k * (eb['first_cpu'] - ea['first_cpu']):.1f} s, RSS at it "
                  f"{eb['first_rss'] + k * (eb['first_rss'] - ea['first_rss']):.0f} MiB")
        for label in sources:
            if label != "after":
                for bench in args.bench:
                    b, a = med[(bench.name, label, "eval")], med[(bench.name, "after", "eval")]
                    print(f"  {bench.name}: first request {b['first'] / a['first']:.1f}x sooner, CPU to it "
                          f"{b['first_cpu'] / a['first_cpu']:.1f}x less, peak RSS {b['rss'] / a['rss']:.1f}x lower "
                          f"({label} / after)")


if __name__ == "__main__":
    main()
