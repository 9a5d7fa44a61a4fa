"""A fault-injecting OpenAI-compatible server on 127.0.0.1 for the reliability tests.

It extends :class:`tests.openai_server.OpenAIServer` (same lifecycle, request checks and stats) with
every fault a real endpoint shows: 429 with and without ``Retry-After`` (seconds or an HTTP date),
500/502/503, connection resets, hangs past the client timeout, truncated JSON, empty ``choices``,
a wrong content type (an HTML error page with status 200) and very long answers. Faults are decided
per (request body, attempt) from a seed, so a run is reproducible whatever the interleaving.
Hostile answers (script tags, control characters, invalid UTF-8, lone surrogates) come from the
``answer`` callable or from ``raw_answer`` (bytes spliced into the JSON body as they are).
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import json
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.openai_server import OpenAIServer, default_answer

# every fault kind this server injects (a fault is one attempt answered badly)
FAULT_KINDS = ("429", "429-retry-after", "429-date", "500", "502", "503", "reset", "hang", "truncated",
               "empty-choices", "wrong-content-type")
LONG_ANSWER_CHARS = 300_000


@dataclass
class Faults:
    """Probability per attempt of each kind in :data:`FAULT_KINDS` (must sum to <= 1)."""

    rates: dict[str, float] = field(default_factory=dict)
    rate_long: float = 0.0  # share of answered requests whose answer is LONG_ANSWER_CHARS long
    hang_s: float = 3.0
    seed: int = 0
    max_faults_per_body: int | None = None
    secret_echo: str | None = None  # put this text into error bodies (a server that echoes the key)

    @classmethod
    def uniform(cls, total: float, **kw: Any) -> Faults:
        """``total`` spread evenly over all kinds, hangs kept to a fifth of their share (they are slow)."""
        weights = {k: (0.2 if k == "hang" else 1.0) for k in FAULT_KINDS}
        s = sum(weights.values())
        return cls(rates={k: total * w / s for k, w in weights.items()}, **kw)


def body_answer(body: dict[str, Any]) -> str:
    """A deterministic answer in the right shape, unique to the request (a hash of its messages)."""
    tag = hashlib.sha256(json.dumps(body["messages"], sort_keys=True).encode()).hexdigest()[:10]
    return f"{default_answer(body)} (ref {tag})"


class FaultServer(OpenAIServer):
    def __init__(self, faults: Faults | None = None, *, answer: Callable[[dict[str, Any]], str] = body_answer,
                 raw_answer: Callable[[dict[str, Any]], bytes | None] | None = None, **kw: Any) -> None:
        super().__init__(None, answer=answer, **kw)
        self.faults = faults or Faults()
        self.raw_answer = raw_answer
        self.injected: Counter[str] = Counter()
        self.sent_answers: set[str] = set()
        self.long_answers = 0

    def _pick_fault(self, key: str, attempt: int) -> str | None:
        f = self.faults
        if f.max_faults_per_body is not None and attempt > f.max_faults_per_body:
            return None
        x = random.Random(f"{f.seed}:{key}:{attempt}").random()
        for kind in FAULT_KINDS:
            rate = f.rates.get(kind, 0.0)
            if x < rate:
                return kind
            x -= rate
        return None

    def _error_text(self, what: str) -> str:
        return f"{what}; key={self.faults.secret_echo}" if self.faults.secret_echo else what

    async def _respond(self, request: web.Request, raw: bytes) -> web.StreamResponse:
        admitted = self._admit(request, raw)
        if isinstance(admitted, web.StreamResponse):
            return admitted
        body, key, attempt = admitted
        kind = self._pick_fault(key, attempt)
        if kind is not None:
            with self._lock:
                self.injected[kind] += 1
            return await self._fault(kind, request)
        text = self.answer(body)
        if random.Random(f"long:{self.faults.seed}:{key}").random() < self.faults.rate_long:
            text = text + " " + "x" * (LONG_ANSWER_CHARS - len(text) - 1)
            with self._lock:
                self.long_answers += 1
        with self._lock:
            self.stats.ok += 1
            self.stats.ok_by_body[key] += 1
            self.sent_answers.add(text)
        payload = {
            "id": f"chatcmpl-{key[:12]}", "object": "chat.completion", "created": int(time.time()),
            "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": len(raw) // 4, "completion_tokens": max(1, len(text) // 4)},
        }
        data = json.dumps(payload).encode()
        spliced = self.raw_answer(body) if self.raw_answer is not None else None
        if spliced is not None:  # hostile bytes placed into the content string as they are
            data = data.replace(json.dumps(text).encode(), b'"' + spliced + b'"', 1)
        return web.Response(body=data, content_type="application/json")

    async def _fault(self, kind: str, request: web.Request) -> web.StreamResponse:
        if kind == "429":
            return web.json_response({"error": {"message": self._error_text("rate limited")}}, status=429)
        if kind == "429-retry-after":
            return web.json_response({"error": {"message": "rate limited"}}, status=429, headers={"Retry-After": "0"})
        if kind == "429-date":
            when = email.utils.formatdate(time.time() + 1, usegmt=True)
            return web.json_response({"error": {"message": "rate limited"}}, status=429, headers={"Retry-After": when})
        if kind in ("500", "502", "503"):
            return web.json_response({"error": {"message": self._error_text(f"server error {kind}")}},
                                     status=int(kind))
        if kind == "reset":
            assert request.transport is not None
            request.transport.abort()  # RST, not a clean close
            return web.Response(status=500)
        if kind == "hang":
            await asyncio.sleep(self.faults.hang_s)
            return web.json_response({"error": {"message": "too late"}}, status=504)
        if kind == "truncated":
            return web.Response(body=b'{"id": "x", "choices": [{"index": 0, "message": {"role": "assis',
                                content_type="application/json")
        if kind == "empty-choices":
            return web.json_response({"id": "x", "object": "chat.completion", "choices": []})
        if kind == "wrong-content-type":
            return web.Response(body=b"<html><body>502 Bad Gateway</body></html>", content_type="text/html")
        raise ValueError(f"unknown fault kind {kind}")
