"""A real OpenAI-compatible chat-completions server on 127.0.0.1 (aiohttp), for tests.

It runs in a background thread with its own event loop, on a random free port, checks what
clients send (JSON body, model, messages, content parts, base64 data-URL images, bearer key) and
injects faults from a seeded, scriptable plan: 429 (with Retry-After), 500/503, slow responses,
malformed bodies, dropped connections, or a permanent status for chosen requests. Faults are
decided per (request body, attempt), so a run is reproducible whatever the interleaving.

    with OpenAIServer(FaultPlan(rate_429=0.2, rate_500=0.1), answer=lambda body: "A") as srv:
        srv.url  # "http://127.0.0.1:PORT/v1"

Also runnable: ``python tests/openai_server.py --rate-429 0.1`` prints the URL and serves.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import hashlib
import json
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

Answer = Callable[[dict[str, Any]], str]


@dataclass
class FaultPlan:
    """Fault probabilities per attempt (checked in this order), and scripted permanent failures."""

    rate_429: float = 0.0
    rate_500: float = 0.0
    rate_slow: float = 0.0
    rate_malformed: float = 0.0
    rate_drop: float = 0.0
    slow_s: float = 2.0
    retry_after: str | None = None  # value of the Retry-After header sent with 429
    max_faults_per_body: int | None = None  # after this many faults a body is answered
    seed: int = 0
    # body -> HTTP status to answer every time (e.g. 400) or None
    permanent: Callable[[dict[str, Any]], int | None] | None = None


def default_answer(body: dict[str, Any]) -> str:
    """Answers from the last user text: a letter for options, yes/no, a box, or report text."""
    text = ""
    for part in body["messages"][-1]["content"] if isinstance(body["messages"][-1]["content"], list) else [
            {"type": "text", "text": body["messages"][-1]["content"]}]:
        if part.get("type") == "text":
            text += part["text"]
    if "letter" in text:
        return "A"
    if "yes or no" in text:
        return "yes"
    if "bounding box" in text:
        return "[1, 2, 30, 40]"
    return "Findings: none. Impression: normal."


@dataclass
class Stats:
    requests: int = 0
    ok: int = 0
    faults: Counter[str] = field(default_factory=Counter)
    by_body: Counter[str] = field(default_factory=Counter)
    ok_by_body: Counter[str] = field(default_factory=Counter)
    in_flight: int = 0
    max_in_flight: int = 0
    images_seen: int = 0
    auth_headers: set[str] = field(default_factory=set)


class OpenAIServer:
    def __init__(self, plan: FaultPlan | None = None, *, answer: Answer = default_answer,
                 api_key: str | None = None, model: str | None = None, delay_s: float = 0.0,
                 port: int = 0) -> None:
        self.plan = plan or FaultPlan()
        self.answer = answer
        self.api_key = api_key
        self.model = model
        self.delay_s = delay_s
        self.port = port
        self.stats = Stats()
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- lifecycle ---------------------------------------------------------------------------
    def __enter__(self) -> OpenAIServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("test server did not start")

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(10)

    def _serve(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._loop.run_until_complete(self._main())

    def _add_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/chat/completions", self._handle)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/health", self._health)

    async def _health(self, request: web.Request) -> web.StreamResponse:
        """200 with an empty body, as vLLM's ``/health`` (what gateways such as sglang-router poll)."""
        return web.Response(status=200)

    async def _models(self, request: web.Request) -> web.StreamResponse:
        """The model list (the health check of ``medr2 eval --serve``): the pinned model, else ``test``."""
        return web.json_response({"object": "list", "data": [{"id": self.model or "test", "object": "model"}]})

    async def _main(self) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        self._add_routes(app)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._stop = asyncio.Event()
        self._ready.set()
        await self._stop.wait()
        await self._runner.cleanup()

    # -- protocol ----------------------------------------------------------------------------
    def _fault(self, key: str, attempt: int, body: dict[str, Any]) -> str | None:
        p = self.plan
        if p.permanent is not None and (status := p.permanent(body)) is not None:
            return f"status:{status}"
        if p.max_faults_per_body is not None and attempt > p.max_faults_per_body:
            return None
        rng = random.Random(f"{p.seed}:{key}:{attempt}")
        x = rng.random()
        for name, rate in (("429", p.rate_429), ("500", p.rate_500), ("slow", p.rate_slow),
                           ("malformed", p.rate_malformed), ("drop", p.rate_drop)):
            if x < rate:
                return name
            x -= rate
        return None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        with self._lock:
            self.stats.requests += 1
            self.stats.in_flight += 1
            self.stats.max_in_flight = max(self.stats.max_in_flight, self.stats.in_flight)
            self.stats.auth_headers.add(request.headers.get("Authorization", ""))
        try:
            return await self._respond(request, raw)
        finally:
            with self._lock:
                self.stats.in_flight -= 1

    def _error_text(self, what: str) -> str:
        return what

    def _admit(self, request: web.Request, raw: bytes) -> web.StreamResponse | tuple[dict[str, Any], str, int]:
        """A 401/400 response for a request that is refused; else (body, body hash, attempt number)."""
        if self.api_key is not None and request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return web.json_response({"error": {"message": self._error_text("invalid api key")}}, status=401)
        try:
            body = json.loads(raw)
            error = self._check(body)
        except ValueError as e:
            error = f"invalid JSON: {e}"
        if error:
            return web.json_response({"error": {"message": error}}, status=400)
        key = hashlib.sha256(raw).hexdigest()
        with self._lock:
            self.stats.by_body[key] += 1
            attempt = self.stats.by_body[key]
        return body, key, attempt

    async def _respond(self, request: web.Request, raw: bytes) -> web.StreamResponse:
        admitted = self._admit(request, raw)
        if isinstance(admitted, web.StreamResponse):
            return admitted
        body, key, attempt = admitted
        fault = self._fault(key, attempt, body)
        if fault is not None:
            with self._lock:
                self.stats.faults[fault.split(":")[0]] += 1
        if fault and fault.startswith("status:"):
            return web.json_response({"error": {"message": "scripted failure"}}, status=int(fault.split(":")[1]))
        if fault == "429":
            headers = {"Retry-After": self.plan.retry_after} if self.plan.retry_after is not None else {}
            return web.json_response({"error": {"message": "rate limited"}}, status=429, headers=headers)
        if fault == "500":
            return web.json_response({"error": {"message": "internal error"}}, status=500)
        if fault == "malformed":
            return web.Response(body=b'{"choices": [ {"mess', content_type="application/json")
        if fault == "drop":
            assert request.transport is not None
            request.transport.close()
            return web.Response(status=500)
        if fault == "slow":
            await asyncio.sleep(self.plan.slow_s)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        text = self.answer(body)
        with self._lock:
            self.stats.ok += 1
            self.stats.ok_by_body[key] += 1
        return web.json_response({
            "id": f"chatcmpl-{key[:12]}", "object": "chat.completion", "created": int(time.time()),
            "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": len(raw) // 4, "completion_tokens": max(1, len(text) // 4),
                      "total_tokens": len(raw) // 4 + max(1, len(text) // 4)},
        })

    def _check(self, body: Any) -> str | None:
        if not isinstance(body, dict) or not isinstance(body.get("model"), str):
            return "body must be an object with a model"
        if self.model is not None and body["model"] != self.model:
            return f"unknown model {body['model']}"
        msgs = body.get("messages")
        if not isinstance(msgs, list) or not msgs:
            return "messages must be a non-empty list"
        for m in msgs:
            if m.get("role") not in ("system", "user", "assistant"):
                return f"bad role {m.get('role')}"
            content = m.get("content")
            if isinstance(content, str):
                continue
            if not isinstance(content, list):
                return "content must be a string or a list of parts"
            for part in content:
                if part.get("type") == "text" and isinstance(part.get("text"), str):
                    continue
                if part.get("type") == "image_url":
                    url = part.get("image_url", {}).get("url", "")
                    if not url.startswith("data:image/") or ";base64," not in url:
                        return "image_url must be a base64 data URL"
                    base64.b64decode(url.split(";base64,", 1)[1], validate=True)
                    with self._lock:
                        self.stats.images_seen += 1
                    continue
                return f"bad content part {part}"
        return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--port", type=int, default=0)
    for name in ("429", "500", "slow", "malformed", "drop"):
        ap.add_argument(f"--rate-{name}", type=float, default=0.0)
    ap.add_argument("--delay", type=float, default=0.0)
    a = ap.parse_args()
    plan = FaultPlan(rate_429=a.rate_429, rate_500=a.rate_500, rate_slow=a.rate_slow,
                     rate_malformed=a.rate_malformed, rate_drop=a.rate_drop)
    with OpenAIServer(plan, delay_s=a.delay, port=a.port) as srv:
        print(srv.url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
