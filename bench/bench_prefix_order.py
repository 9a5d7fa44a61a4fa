"""Dispatch order against vLLM's prefix cache: ``medr2 eval --order bench`` vs ``--order case``.

One vLLM server (CPU build from ``--vllm-venv``, made by scripts/setup_vllm.sh; ``--enable-prefix-caching``)
serves the tiny VLM as the tests build it (``medr2 tiny-vlm`` + ``medr2 vllm-export``: one image token per
image), or with ``--patch-size P`` one with ``(32 // P) ** 2`` image tokens per image (real VLMs have hundreds).
The same slice of a sample bench with variants is evaluated in each order (``medr2 eval`` into a fresh run
folder each time), the orders alternating (bench, case, then case, bench, ...) for ``--repeats`` rounds. Before
each run the server's prefix, multimodal-processor and encoder caches are emptied (``POST /reset_prefix_cache``
etc., served with vLLM's ``VLLM_SERVER_DEV_MODE=1``), so every run starts cold; a first, unmeasured run warms
everything else up. Per run:

- prefix-cache hit rate: the change of vLLM's ``vllm:prefix_cache_hits`` over ``vllm:prefix_cache_queries``
  (prompt tokens found cached / looked up) in ``GET /metrics``;
- throughput: requests / the runner's seconds (the manifest's ``summary.seconds``) and / the command's wall time;
- server CPU seconds: user + system time of every process of the server's process group (``/proc``);
- the answers: every run's store must hold the same rows (request hash -> answer, token counts).

    .venv/bin/python bench/bench_prefix_order.py --vllm-venv .venv-vllm [--cases 6] [--variants T1,T4,V8,V9]
        [--limit N] [--repeats 3] [--concurrency 8] [--max-new-tokens 8] [--kv-cache-bytes N] [--patch-size P]
        [--block-size B] [--work DIR] [--json OUT.json]

``--plan-only N``: no server; the cost of each order alone on the run-test fixture bench of N cases
(tests/run_fixtures.py): seconds and peak traced memory (``tracemalloc``) to iterate the whole selection, streamed
from the items table, in each order.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.servers import VLLM_KV_CACHE_BYTES, VLLM_VENV, Server, vllm_serve  # noqa: E402

from medr2.run.store import Store  # noqa: E402

ORDERS = ("bench", "case")
CLK_TCK = os.sysconf("SC_CLK_TCK")
METRIC = re.compile(r"^(vllm:[a-z_]+?)(?:_total)?(?:\{[^}]*\})? ([0-9.eE+-]+)$")


def medr2(*args: str) -> float:
    """Run the medr2 CLI of this interpreter; its wall seconds (a failure exits with its output)."""
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "medr2", *args], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"medr2 {' '.join(args)} failed:\n{p.stdout}\n{p.stderr}")
    return time.perf_counter() - t0


def metrics(srv: Server) -> dict[str, float]:
    """vLLM's Prometheus counters and gauges (``vllm:...``), summed over their label sets."""
    root = srv.url.removesuffix("/v1")
    with urllib.request.urlopen(root + "/metrics", timeout=30) as r:  # noqa: S310 - the local server
        text = r.read().decode()
    out: dict[str, float] = {}
    for line in text.splitlines():
        m = METRIC.match(line)
        if m:
            out[m.group(1)] = out.get(m.group(1), 0.0) + float(m.group(2))
    return out


def post(srv: Server, path: str) -> bytes:
    req = urllib.request.Request(srv.url.removesuffix("/v1") + path, data=b"", method="POST")
    with urllib.request.urlopen(req, timeout=60) as r:  # noqa: S310 - the local server
        return bytes(r.read())


def reset_caches(srv: Server) -> None:
    """Empty the server's prefix cache (vLLM refuses while blocks are held: retried), multimodal processor cache
    and encoder cache, so a run starts as cold as the one before it."""
    for _ in range(60):
        if json.loads(post(srv, "/reset_prefix_cache")).get("success"):
            break
        time.sleep(0.5)
    else:
        raise SystemExit("vLLM did not reset its prefix cache in 30 s")
    post(srv, "/reset_mm_cache")
    post(srv, "/reset_encoder_cache")


def group_cpu_s(pgid: int) -> float:
    """User + system CPU seconds of the live processes of process group ``pgid`` (the server and its workers)."""
    total = 0
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # fields after "(comm)": state ppid pgrp ... utime(11) stime(12)
            total += int(fields[11]) + int(fields[12])
    return total / CLK_TCK


def answers(run: Path) -> dict[str, tuple[Any, ...]]:
    with Store.open(run) as st:
        out = {}
        for sp in st.iter_predictions():
            p = sp.prediction
            if p.status != "ok":
                raise SystemExit(f"{run}: {p.item_id} {p.mode}: {p.error}")
            out[p.request_hash] = (p.item_id, p.mode, p.raw, p.prompt_tokens, p.completion_tokens)
        return out


def one_run(srv: Server, bench: Path, out: Path, order: str, a: argparse.Namespace) -> dict[str, Any]:
    reset_caches(srv)
    m0, cpu0 = metrics(srv), group_cpu_s(srv.proc.pid)
    args = ["eval", "--split", "all", "--bench", str(bench), "--model", f"openai:{srv.model}", "--preset", "medr2-tiny",
            "--base-url", srv.url, "--out", str(out), "--mode", "independent", "--max-new-tokens",
            str(a.max_new_tokens), "--concurrency", str(a.concurrency), "--retries", "0", "--no-progress",
            "--order", order]
    if a.limit:
        args += ["--limit", str(a.limit)]
    wall = medr2(*args)
    m1, cpu1 = metrics(srv), group_cpu_s(srv.proc.pid)
    d = {k: m1.get(k, 0.0) - m0.get(k, 0.0) for k in m1}
    inv = json.loads((out / "manifest.json").read_text())["invocations"][-1]
    n = inv["summary"]["sent"]
    queries, hits = d.get("vllm:prefix_cache_queries", 0.0), d.get("vllm:prefix_cache_hits", 0.0)
    return {"order": order, "requests": n, "runner_s": inv["summary"]["seconds"], "wall_s": round(wall, 3),
            "rps": n / inv["summary"]["seconds"], "server_cpu_s": round(cpu1 - cpu0, 2),
            "prefix_queries": queries, "prefix_hits": hits, "hit_rate": hits / queries if queries else None,
            "prompt_tokens": d.get("vllm:prompt_tokens"), "preemptions": d.get("vllm:num_preemptions"),
            "mm_cache_queries": d.get("vllm:mm_cache_queries"), "mm_cache_hits": d.get("vllm:mm_cache_hits")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vllm-venv", type=Path, default=VLLM_VENV)
    ap.add_argument("--cases", type=int, default=6)
    ap.add_argument("--variants", default="T1,T4,V8,V9")
    ap.add_argument("--limit", type=int, default=None, help="items per run (whole cases; default: every item)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--max-new-tokens", type=int, default=8)
    ap.add_argument("--kv-cache-bytes", type=int, default=VLLM_KV_CACHE_BYTES)
    ap.add_argument("--patch-size", type=int, default=32, help="of the tiny VLM's 32-px input (32: one image token)")
    ap.add_argument("--block-size", type=int, default=None, help="vLLM's KV block size (default: vLLM's)")
    ap.add_argument("--max-model-len", type=int, default=None, help="vLLM's (default: tests/servers.py's 2048); "
                    "lower it to allow a KV cache smaller than 2048 tokens")
    ap.add_argument("--work", type=Path, default=None, help="folder for model, bench, runs (default: a temp dir)")
    ap.add_argument("--json", type=Path, default=None, help="write every run's figures here")
    ap.add_argument("--plan-only", type=int, default=None, metavar="N", help="only the orders' own cost, N cases")
    a = ap.parse_args()
    if a.plan_only:
        plan_cost(a.plan_only, a.repeats)
        return
    with tempfile.TemporaryDirectory() as tmp:
        work = a.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        model, bench, served = work / f"tiny-p{a.patch_size}", work / "bench", work / f"tiny-p{a.patch_size}-vllm"
        if not (model / "config.json").is_file():
            if a.patch_size == 32:
                medr2("tiny-vlm", "--out", str(model))
            else:
                from medr2.models.tiny import build_tiny_vlm

                build_tiny_vlm(model, patch_size=a.patch_size)
        if not (served / "config.json").is_file():
            medr2("vllm-export", str(model), "--out", str(served))
        if not (bench / "manifest.json").is_file():
            medr2("build", "--source", "sample", "--out", str(bench), "--cases", str(a.cases), "--variants",
                  a.variants, "--workers", "1")
        extra = ["--enable-prefix-caching", "--kv-cache-memory-bytes", str(a.kv_cache_bytes)]
        if a.block_size:
            extra += ["--block-size", str(a.block_size)]
        if a.max_model_len:
            extra += ["--max-model-len", str(a.max_model_len)]
        runs: list[dict[str, Any]] = []
        stamp = time.strftime("%Y%m%d-%H%M%S")
        with vllm_serve(served, work, venv=a.vllm_venv.resolve(), extra=extra,
                        env={"VLLM_SERVER_DEV_MODE": "1"}) as srv:
            print(f"vLLM ready in {srv.started_s:.0f}s at {srv.url}; load average {os.getloadavg()}", flush=True)
            warm = one_run(srv, bench, work / f"run-{stamp}-warmup", "bench", a)
            print(f"warm-up: {warm}", flush=True)
            if not warm["prefix_queries"]:
                found = sorted(k for k in metrics(srv) if "cache" in k)
                raise SystemExit(f"no vllm:prefix_cache_queries in /metrics (cache metrics found: {found})")
            want = answers(work / f"run-{stamp}-warmup")
            for r in range(a.repeats):
                for order in ORDERS if r % 2 == 0 else ORDERS[::-1]:
                    out = work / f"run-{stamp}-{r}-{order}"
                    row = {"repeat": r, "load": os.getloadavg()[0], **one_run(srv, bench, out, order, a)}
                    row["same_answers"] = answers(out) == want
                    runs.append(row)
                    print(json.dumps(row), flush=True)
        report(runs, a)
        if a.json:
            a.json.write_text(json.dumps({"args": {k: str(v) for k, v in vars(a).items()}, "warmup": warm,
                                          "runs": runs}, indent=1))


def plan_cost(n_cases: int, repeats: int) -> None:
    import tracemalloc

    from tests.run_fixtures import make_bench

    from medr2.bench.select import select_items
    from medr2.bench.table import BenchTable
    from medr2.run.order import get_order

    with tempfile.TemporaryDirectory() as tmp:
        make_bench(Path(tmp) / "bench", n_cases=n_cases)
        rows: dict[str, list[tuple[float, float, float]]] = {o: [] for o in ORDERS}
        for r in range(repeats):
            for order in ORDERS if r % 2 == 0 else ORDERS[::-1]:
                table = BenchTable.open(Path(tmp) / "bench", image_hashes=False)
                sel = select_items(table)
                tracemalloc.start()
                c0, t0 = time.process_time(), time.perf_counter()
                n = sum(1 for _ in get_order(order)(sel))
                wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                peak = tracemalloc.get_traced_memory()[1] / 2**20
                tracemalloc.stop()
                rows[order].append((wall, cpu, peak))
        print(f"{n} items ({n_cases} cases), iterated in each order, {repeats} rounds alternating; medians")
        print("| order | wall s | CPU s | peak traced MiB |\n|---|---|---|---|")
        for order, xs in rows.items():
            print(f"| {order} | {statistics.median(x[0] for x in xs):.2f} | {statistics.median(x[1] for x in xs):.2f} "
                  f"| {statistics.median(x[2] for x in xs):.1f} |")


def report(runs: list[dict[str, Any]], a: argparse.Namespace) -> None:
    n = runs[0]["requests"]
    print(f"\n{n} requests per run ({a.cases} cases, variants {a.variants}), concurrency {a.concurrency}, "
          f"{a.max_new_tokens} new tokens, KV cache {a.kv_cache_bytes} bytes, block size {a.block_size or 'default'}, "
          f"{(32 // a.patch_size) ** 2} image token(s) per image, {a.repeats} rounds; medians")
    print("| order | prefix-cache hit rate | requests/s (runner) | wall s | server CPU s | preemptions "
          "| same answers |")
    print("|---|---|---|---|---|---|---|")
    for order in ORDERS:
        rows = [r for r in runs if r["order"] == order]
        print(f"| {order} | {statistics.median(r['hit_rate'] for r in rows):.3f} "
              f"| {statistics.median(r['rps'] for r in rows):.2f} | {statistics.median(r['wall_s'] for r in rows):.1f} "
              f"| {statistics.median(r['server_cpu_s'] for r in rows):.1f} "
              f"| {statistics.median(r['preemptions'] or 0 for r in rows):.0f} "
              f"| {all(r['same_answers'] for r in rows)} |")
    ratios = []
    for r in range(a.repeats):
        pair = {x["order"]: x for x in runs if x["repeat"] == r}
        ratios.append((pair["case"]["rps"] / pair["bench"]["rps"],
                       pair["case"]["server_cpu_s"] / pair["bench"]["server_cpu_s"]))
    print("case / bench per round (requests/s, server CPU s): "
          + ", ".join(f"{x:.2f}, {y:.2f}" for x, y in ratios)
          + f"; medians {statistics.median(x for x, _ in ratios):.2f}, {statistics.median(y for _, y in ratios):.2f}")


if __name__ == "__main__":
    main()
