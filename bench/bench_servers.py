"""Throughput through a real local vLLM server (CPU build, tiny VLM): for relative comparison only.

Builds the tiny VLM (exported for vLLM) and a sample bench, starts vLLM from ``.venv-vllm``
(``scripts/setup_vllm.sh``) with ``tests/servers.py``, then at each concurrency measures:

- requests/s: ``OpenAIAdapter.generate`` on the rendered requests of ``--limit`` items (a fresh
  adapter each time, so images are read and encoded inside the timing);
- end-to-end items/s: the whole ``medr2 eval`` command (process start, bench load, render, hash,
  send, SQLite store, manifest) into a fresh run folder, items answered / wall seconds.

The first request warms the server up before any timing. Each cell is the best of ``--repeats``.

    .venv/bin/python bench/bench_servers.py [--cases 20] [--limit 200] [--concurrency 1 16] [--repeats 2]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.servers import Server, vllm_serve  # noqa: E402

from medr2.models.base import GenSettings, Message, Part, Request  # noqa: E402
from medr2.models.openai import OpenAIAdapter  # noqa: E402
from medr2.models.vllm_export import export_for_vllm  # noqa: E402
from medr2.run.store import Store  # noqa: E402

MEDR2 = str(Path(sys.executable).with_name("medr2"))


def sh(*args: str) -> float:
    t0 = time.perf_counter()
    p = subprocess.run([MEDR2, *args], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"medr2 {' '.join(args)} failed:\n{p.stdout}\n{p.stderr}")
    return time.perf_counter() - t0


def eval_cmd(srv: Server, bench: Path, out: Path, limit: int, concurrency: int, max_new: int) -> list[str]:
    return ["eval", "--split", "all", "--bench", str(bench), "--model", f"openai:{srv.model}", "--preset", "medr2-tiny",
            "--base-url", srv.url, "--out", str(out), "--mode", "independent", "--limit", str(limit),
            "--max-new-tokens", str(max_new), "--concurrency", str(concurrency), "--no-progress"]


def stored_requests(run: Path, bench: Path, max_new: int) -> list[Request]:
    reqs = []
    for sp in Store.open(run).iter_predictions(with_request=True):
        msgs = tuple(Message(m["role"], tuple(Part(p["type"], text=p.get("text"), image=p.get("image"),
                                                   image_sha256=p.get("sha256")) for p in m["parts"]))
                     for m in sp.request or [])
        reqs.append(Request(key=sp.prediction.request_hash, messages=msgs, bench_root=bench,
                            settings=GenSettings(max_new_tokens=max_new), item_id=sp.prediction.item_id))
    return reqs


def adapter_rps(srv: Server, reqs: list[Request], concurrency: int) -> float:
    ad = OpenAIAdapter(srv.model, base_urls=[srv.url], concurrency=concurrency, retries=0)
    try:
        t0 = time.perf_counter()
        out = ad.generate(reqs)
        wall = time.perf_counter() - t0
    finally:
        ad.close()
    bad = [r.error for r in out if r.status != "ok"]
    if bad:
        raise SystemExit(f"{len(bad)} requests failed, e.g. {bad[0]}")
    return len(reqs) / wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=20)
    ap.add_argument("--limit", type=int, default=200)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 16])
    ap.add_argument("--max-new-tokens", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--work", type=Path, default=None, help="folder for model, bench, runs (default: a temp dir)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = a.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        model, bench = work / "tiny", work / "bench"
        if not (model / "config.json").is_file():
            sh("tiny-vlm", "--out", str(model))
        export_for_vllm(model, work / "tiny-vllm")
        if not (bench / "manifest.json").is_file():
            sh("build", "--source", "sample", "--out", str(bench), "--cases", str(a.cases), "--workers", "1")
        rows = []
        with vllm_serve(work / "tiny-vllm", work) as srv:
            print(f"vLLM ready in {srv.started_s:.0f}s at {srv.url}", flush=True)
            sh(*eval_cmd(srv, bench, work / "run-warmup", a.limit, max(a.concurrency), a.max_new_tokens))
            reqs = stored_requests(work / "run-warmup", bench, a.max_new_tokens)
            for c in a.concurrency:
                rps = max(adapter_rps(srv, reqs, c) for _ in range(a.repeats))
                e2e = []
                for k in range(a.repeats):
                    out = work / f"run-c{c}-{k}"
                    wall = sh(*eval_cmd(srv, bench, out, a.limit, c, a.max_new_tokens))
                    e2e.append(sum(1 for _ in Store.open(out).iter_predictions()) / wall)
                rows.append((c, len(reqs), rps, max(e2e)))
                print(f"concurrency {c}: {rps:.1f} requests/s, {max(e2e):.1f} items/s end to end", flush=True)
        print(f"\nvLLM {srv.url} (CPU build, tiny VLM, float32), {len(reqs)} items, {a.max_new_tokens} new tokens, "
              f"best of {a.repeats}")
        print("| concurrency | requests/s (adapter) | items/s (medr2 eval, end to end) |")
        print("|---|---|---|")
        base = rows[0]
        for c, _, rps, ips in rows:
            print(f"| {c} | {rps:.1f} ({rps / base[2]:.1f}x) | {ips:.1f} ({ips / base[3]:.1f}x) |")


if __name__ == "__main__":
    main()
