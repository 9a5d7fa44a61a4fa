"""Local batching: the ``hf:`` adapter on the tiny VLM at batch sizes 1, 8 and 32.

Builds the tiny VLM and a sample bench (offline), renders ``--n`` clean items in ``independent``
mode, and answers the same requests with ``HFAdapter`` at each batch size (greedy, CPU, float32).
Prints items per second, the throughput ratio to batch 1, and how many answers (text and token
counts) equal the batch-1 answers. Each cell is the best of ``--repeats`` timed passes after one
warm-up pass.

    .venv/bin/python bench/bench_hf_batch.py [--n 128] [--batch 1 8 32] [--max-new-tokens 16] [--threads 1] [--work DIR]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from medr2.bench.format import load_bench
from medr2.models.base import GenSettings, Request, Response
from medr2.models.hf import HFAdapter, HFOptions
from medr2.run.prompts import get_mode, render_messages

MEDR2 = str(Path(sys.executable).with_name("medr2"))


def prepare(work: Path, cases: int) -> tuple[Path, Path]:
    model, bench = work / "tiny", work / "bench"
    if not (model / "config.json").is_file():
        subprocess.run([MEDR2, "tiny-vlm", "--out", str(model)], check=True, capture_output=True)
    if not (bench / "manifest.json").is_file():
        subprocess.run([MEDR2, "build", "--source", "sample", "--out", str(bench), "--cases", str(cases),
                        "--workers", "1"], check=True, capture_output=True)
    return model, bench


def requests_for(bench: Path, adapter: HFAdapter, n: int, max_new: int) -> list[Request]:
    items = [it for it in load_bench(bench).items if it.variant == "clean"][:n]
    mode = get_mode("independent")
    settings = GenSettings(max_new_tokens=max_new)
    return [Request(key=it.item_id, item_id=it.item_id, bench_root=bench, settings=settings,
                    messages=render_messages(it, mode=mode, history=[], conv=adapter.box_convention)) for it in items]


def timed(adapter: HFAdapter, reqs: list[Request], repeats: int) -> tuple[float, list[Response]]:
    adapter.generate(reqs[: max(adapter.options.batch_size, 1)])  # warm-up
    best, out = float("inf"), []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = adapter.generate(reqs)
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=128)
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 8, 32])
    ap.add_argument("--max-new-tokens", type=int, default=16)
    ap.add_argument("--cases", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1,
                    help="torch threads (1: stable timings on a busy machine; oversubscribed threads spin)")
    ap.add_argument("--work", type=Path, default=None, help="folder for the model and bench (default: a temp dir)")
    a = ap.parse_args()
    import torch

    torch.set_num_threads(a.threads)
    with tempfile.TemporaryDirectory() as tmp:
        work = a.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        model, bench = prepare(work, a.cases)
        rows, base = [], None
        for bs in a.batch:
            adapter = HFAdapter(model, HFOptions(batch_size=bs, device="cpu", dtype="float32"))
            reqs = requests_for(bench, adapter, a.n, a.max_new_tokens)
            wall, out = timed(adapter, reqs, a.repeats)
            adapter.close()
            assert all(r.status == "ok" for r in out), [r.error for r in out if r.status != "ok"][:3]
            answers = [(r.text, r.prompt_tokens, r.completion_tokens) for r in out]
            base = base or (wall, answers)
            equal = sum(x == y for x, y in zip(answers, base[1], strict=True))
            rows.append((bs, len(reqs), wall, len(reqs) / wall, base[0] / wall, equal))
        print(f"hf: adapter, tiny VLM, CPU float32, {torch.get_num_threads()} torch threads, "
              f"{a.max_new_tokens} new tokens, best of {a.repeats}")
        print("| batch | items | wall s | items/s | vs batch 1 | answers equal to batch 1 |")
        print("|---|---|---|---|---|---|")
        for bs, n, wall, ips, ratio, equal in rows:
            print(f"| {bs} | {n} | {wall:.2f} | {ips:.1f} | {ratio:.2f}x | {equal}/{n} |")


if __name__ == "__main__":
    main()
