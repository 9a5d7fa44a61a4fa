"""Peer client: lmms-eval's OpenAI-compatible async model (``async_openai``, ``AsyncOpenAIChat``).

Runs in its own venv (``bash bench/setup_peers.sh``). Builds lmms-eval ``Instance`` requests for
the same items (same question text, same image file), the way a task does: ``doc_to_messages``
returns chat messages holding the PIL image (loaded once up front, as a dataset would hand it
over), and the model turns them into OpenAI messages (PNG + base64 per request) and sends them
with its own bounded-concurrency loop (``num_cpus`` = concurrency; adaptive concurrency off).
Prints one JSON line per repeat: wall seconds, this process's CPU seconds, ok count.

    /work/bench-venvs/lmms-eval/bin/python bench/peer_lmms_eval.py --url http://127.0.0.1:PORT/v1 \
        --requests /tmp/medr2-client-bench/requests.jsonl --concurrency 64 --repeats 3
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import logging
import os
import sys
import time
from typing import Any

from PIL import Image


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", required=True)
    ap.add_argument("--requests", required=True)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[64])
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "bench")
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="WARNING")
    logging.disable(logging.INFO)
    from lmms_eval.api.instance import Instance
    from lmms_eval.models.chat.async_openai import AsyncOpenAIChat

    docs: list[dict[str, Any]] = []
    with open(a.requests, encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            with Image.open(rec["image"]) as im:
                im.load()
                docs.append({"image": im.copy(), "text": rec["text"], "max_tokens": rec["body"]["max_tokens"]})

    def doc_to_messages(doc: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"role": "user", "content": [{"type": "image", "url": doc["image"]},
                                             {"type": "text", "text": doc["text"]}]}]

    version = importlib.metadata.version("lmms-eval")
    for c in a.concurrency:
        for _ in range(a.repeats):
            model = AsyncOpenAIChat(model_version="bench", base_url=a.url, api_key="bench", num_cpus=c,
                                    max_retries=1)
            model.task_dict = {"bench": {"test": docs}}
            requests = [Instance("generate_until", ("", doc_to_messages,
                                                    {"max_new_tokens": d["max_tokens"], "temperature": 0}, i,
                                                    "bench", "test"),
                                 idx=i, metadata={"task": "bench", "doc_id": i, "repeats": 1})
                        for i, d in enumerate(docs)]
            t0, c0 = time.perf_counter(), time.process_time()
            results = model.generate_until(requests)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            ok = sum(1 for r in results if getattr(r, "text", r) == "A")
            print(json.dumps({"client": f"lmms-eval {version} async_openai", "concurrency": c, "n": len(docs),
                              "ok": ok, "wall_s": wall, "cpu_s": cpu}), flush=True)


if __name__ == "__main__":
    main()
