"""Before/after of the ``openai`` adapter: an older ``openai.py`` against the installed one, on the
same workload, same server, alternating runs (so both see the same machine load), optionally with
a cProfile summary of each (the per-request path: rendering is done before, so this is encoding,
HTTP, retries bookkeeping, scheduling).

    git show e69d9c8:src/medr2/models/openai.py > /tmp/openai_before.py
    .venv/bin/python bench/before_after.py --old /tmp/openai_before.py [--concurrency 1 64 256] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import io
import pstats
import statistics
import sys
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from bench_client import MODEL, Servers, build_requests  # noqa: E402
from workload import make_workload  # noqa: E402

import medr2.models.openai as current  # noqa: E402


def load_old(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location("medr2_openai_before", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    import medr2.models.registry as registry

    registry.ADAPTERS["openai"] = current._factory  # the old module re-registered itself; undo that
    return mod


def run(module: Any, url: str, requests: list[Any], conc: int, profile: bool) -> tuple[float, float, str]:
    adapter = module.OpenAIAdapter(MODEL, base_urls=[url], concurrency=conc, timeout_s=60.0, retries=2)
    prof = cProfile.Profile() if profile else None
    t0, c0 = time.perf_counter(), time.process_time()
    if prof:
        prof.enable()
    out = adapter.generate(requests)
    if prof:
        prof.disable()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    adapter.close()
    assert all(r.status == "ok" for r in out), [r.error for r in out if r.status != "ok"][:3]
    text = ""
    if prof:
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(12)
        text = buf.getvalue()
    return len(requests) / wall, 1000 * cpu / len(requests), text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old", type=Path, required=True, help="the older openai.py")
    ap.add_argument("--bench", type=Path, default=Path("/tmp/medr2-client-bench"))
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 64, 256])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--profile", action="store_true", help="print a cProfile summary (one extra run each)")
    a = ap.parse_args()
    old = load_old(a.old)
    requests = build_requests(make_workload(a.bench, a.n))
    servers = Servers(1, 0.0)
    try:
        print(f"{'concurrency':>11} {'before req/s':>12} {'after req/s':>11} {'before CPU ms/req':>17} "
              f"{'after CPU ms/req':>16} {'CPU after/before':>16}")
        for conc in a.concurrency:
            res: dict[str, list[tuple[float, float]]] = {"before": [], "after": []}
            for _ in range(a.repeats):
                for name, mod in (("before", old), ("after", current)):
                    rate, cpu, _ = run(mod, servers.url, requests, conc, False)
                    res[name].append((rate, cpu))
            b_rate, a_rate = (statistics.median(r for r, _ in res[k]) for k in ("before", "after"))
            b_cpu, a_cpu = (statistics.median(c for _, c in res[k]) for k in ("before", "after"))
            print(f"{conc:>11} {b_rate:>12.0f} {a_rate:>11.0f} {b_cpu:>17.3f} {a_cpu:>16.3f} {a_cpu / b_cpu:>15.2f}x",
                  flush=True)
        if a.profile:
            for name, mod in (("before", old), ("after", current)):
                print(f"\n## cProfile, {name}, concurrency {a.concurrency[-1]}")
                print(run(mod, servers.url, requests, a.concurrency[-1], True)[2])
    finally:
        servers.close()


if __name__ == "__main__":
    main()
