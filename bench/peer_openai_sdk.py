"""Peer client: the official ``openai`` SDK's ``AsyncOpenAI`` on the same requests as medr2.

Runs in its own venv (``bash bench/setup_peers.sh``), not the project's. Reads the request file
that ``bench/bench_client.py`` exports (each line holds medr2's exact request body: the same
messages with the image as a base64 data URL, already encoded, which spares this client the image
encoding medr2 does itself), sends every request with ``asyncio.Semaphore(concurrency)``
and prints one JSON line per repeat: wall seconds, this process's CPU seconds, ok count.

    /work/bench-venvs/openai/bin/python bench/peer_openai_sdk.py --url http://127.0.0.1:PORT/v1 \
        --requests /tmp/medr2-client-bench/requests.jsonl --concurrency 64 --repeats 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any

import openai
from openai import AsyncOpenAI


async def run_once(url: str, bodies: list[dict[str, Any]], concurrency: int) -> tuple[float, float, int]:
    client = AsyncOpenAI(base_url=url, api_key="bench")
    sem = asyncio.Semaphore(concurrency)

    async def one(body: dict[str, Any]) -> bool:
        async with sem:
            r = await client.chat.completions.create(**body)
            return r.choices[0].message.content is not None

    t0, c0 = time.perf_counter(), time.process_time()
    ok = sum(await asyncio.gather(*(one(b) for b in bodies)))
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    await client.close()
    return wall, cpu, ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", required=True)
    ap.add_argument("--requests", required=True)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[64])
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    with open(a.requests, encoding="utf-8") as f:
        bodies = [json.loads(line)["body"] for line in f]
    for c in a.concurrency:
        for _ in range(a.repeats):
            wall, cpu, ok = asyncio.run(run_once(a.url, bodies, c))
            print(json.dumps({"client": f"openai SDK {openai.__version__}", "concurrency": c, "n": len(bodies),
                              "ok": ok, "wall_s": wall, "cpu_s": cpu}), flush=True)


if __name__ == "__main__":
    main()
