"""``openai:MODEL`` — any OpenAI-compatible chat-completions endpoint (vLLM, SGLang, Ollama,
LMDeploy, commercial APIs), through a lean aiohttp client.

- one ``ClientSession`` whose connector is sized to the concurrency; at most ``concurrency``
  requests in flight; several base URLs, each request sent to the one with the fewest in flight;
- images sent as data URLs, each encoded once per content hash (the JSON fragment is cached and
  spliced into request bodies, so nothing is re-encoded per request);
- retries with exponential backoff and jitter on 429, 408, 5xx, timeouts, connection
  errors and malformed bodies, honouring ``Retry-After`` / ``retry-after-ms``; other 4xx fail at once;
- a per-request timeout; token usage recorded; the API key read from the environment variable the
  user names, sent only in the Authorization header, never recorded or logged.

``stream(requests)`` yields ``(index, Response)`` as requests finish. It drives a private event
loop step by step from the calling thread, so the caller persists each answer as it arrives and a
KeyboardInterrupt cancels what is in flight. ``requests`` may be a generator: it is pulled only as
slots free up (``stream_pull``), so the caller's planning overlaps the requests in flight.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import random
import time
from collections import OrderedDict, deque
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import aiohttp
import pybase64
import yarl

from medr2.errors import BadInput
from medr2.imageio import InsideRoot, sha256_bytes
from medr2.models.base import BoxConvention, Message, Request, Response
from medr2.models.presets import get_preset
from medr2.models.registry import AdapterOptions, register_adapter

RETRY_STATUS = frozenset({408, 409, 425, 429})
MAX_RETRY_AFTER_S = 120.0
ERROR_SNIPPET = 300


class Transient(Exception):
    """A failure worth retrying; ``retry_after`` is the server's requested wait, if any."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Permanent(Exception):
    """A failure that retrying cannot fix (bad request, auth, missing image)."""


def parse_retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def parse_completion(data: bytes) -> tuple[str, int | None, int | None]:
    """Text and token usage of a chat-completions body; Transient if the body is malformed."""
    try:
        try:
            body = json.loads(data)
        except UnicodeDecodeError:  # invalid UTF-8 inside the answer: keep it, bad bytes as U+FFFD
            body = json.loads(data.decode("utf-8", "replace"))
        msg = body["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError) as e:
        raise Transient(f"malformed response body ({type(e).__name__}): {data[:ERROR_SNIPPET]!r}") from None
    content = msg.get("content") if isinstance(msg, dict) else None
    if isinstance(content, list):  # some servers return content parts
        content = "".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    if not isinstance(content, str):
        refusal = msg.get("refusal") if isinstance(msg, dict) else None
        raise Permanent(f"response has no text content (refusal: {refusal!r})")
    # lone surrogates (JSON escapes like \\udcff) cannot be stored as UTF-8: keep them as U+FFFD
    content = content.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    pt, ct = usage.get("prompt_tokens"), usage.get("completion_tokens")
    return content, pt if isinstance(pt, int) else None, ct if isinstance(ct, int) else None


def error_text(data: bytes) -> str:
    """The message of an error body, whatever its shape: ``{"error": {"message": ..}}`` (OpenAI, vLLM,
    SGLang), ``{"detail": ..}`` (FastAPI servers such as ``transformers serve``), ``{"error": ".."}``
    (Ollama), ``{"message": ..}``; else the body's first bytes as text."""
    try:
        body = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        body = None
    if isinstance(body, dict):
        err = body.get("error")
        for found in ((err or {}).get("message") if isinstance(err, dict) else err, body.get("detail"),
                      body.get("message")):
            if isinstance(found, str) and found:
                return found[:ERROR_SNIPPET]
            if isinstance(found, list | dict) and found:  # FastAPI validation errors: a list of dicts
                return json.dumps(found, ensure_ascii=False)[:ERROR_SNIPPET]
    return data[:ERROR_SNIPPET].decode("utf-8", "replace")


_PNG_HEAD = b'{"type":"image_url","image_url":{"url":"data:image/png;base64,'
_JPEG_HEAD = b'{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,'
_IMAGE_TAIL = b'"}}'


class _ImageCache:
    """JSON fragments ``{"type":"image_url",...}`` per image sha, LRU-bounded by bytes. A fragment is
    kept as its pieces (head, base64 data, tail), so the data is copied once, into the request body."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._frags: OrderedDict[str, tuple[bytes, bytes, bytes]] = OrderedDict()
        self._bytes = 0
        self._roots: dict[Path, InsideRoot] = {}
        self.encoded = 0  # how many times an image was read and encoded

    def _path(self, bench_root: Path, rel: str) -> str:
        """``resolve_inside`` with the bench root resolved once per bench."""
        inside = self._roots.get(bench_root)
        if inside is None:
            inside = self._roots[bench_root] = InsideRoot(bench_root)
        return inside.resolve(rel)

    def fragment(self, bench_root: Path, rel: str, sha: str | None) -> tuple[bytes, bytes, bytes]:
        key = sha or rel
        frag = self._frags.get(key)
        if frag is not None:
            self._frags.move_to_end(key)
            return frag
        path = self._path(bench_root, rel)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise Permanent(f"cannot read image {rel}: {e}") from None
        if sha is not None and sha256_bytes(data) != sha:
            raise Permanent(f"image {rel} does not match its recorded sha256")
        frag = (_JPEG_HEAD if data[:2] == b"\xff\xd8" else _PNG_HEAD, pybase64.b64encode(data), _IMAGE_TAIL)
        self.encoded += 1
        self._frags[key] = frag
        self._bytes += len(frag[1])
        while self._bytes > self.max_bytes and len(self._frags) > 1:
            _, old = self._frags.popitem(last=False)
            self._bytes -= len(old[1])
        return frag


class OpenAIAdapter:
    """A chat-completions client. See the module docstring."""

    def __init__(self, model: str, *, base_urls: Sequence[str], api_key_env: str | None = None,
                 concurrency: int = 8, timeout_s: float = 120.0, retries: int = 5,
                 box_convention: BoxConvention | None = None, preset_name: str | None = None,
                 backoff_initial_s: float = 0.5, backoff_max_s: float = 30.0,
                 image_cache_bytes: int = 1 << 30, extra_body: dict[str, Any] | None = None,
                 max_tokens_field: str = "max_tokens") -> None:
        if not base_urls:
            raise BadInput("openai models need at least one --base-url (e.g. http://127.0.0.1:8000/v1)",
                           field="--base-url")
        if concurrency < 1 or retries < 0 or timeout_s <= 0:
            raise BadInput("need concurrency >= 1, retries >= 0, timeout > 0", field="--concurrency")
        self.model = model
        self.key = f"openai:{model}"
        self.urls = [yarl.URL(u.rstrip("/") + "/chat/completions") for u in base_urls]  # parsed once
        self.base_urls = [u.rstrip("/") for u in base_urls]
        self.api_key_env = api_key_env
        api_key = None
        if api_key_env:
            api_key = os.environ.get(api_key_env)
            if not api_key:
                raise BadInput(f"environment variable {api_key_env} (named by --api-key-env) is not set",
                               field="--api-key-env")
        self._secret = api_key
        self._headers = {"Content-Type": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self.retries = retries
        self.box_convention = box_convention or BoxConvention("pixel", "none", ())
        self.preset_name = preset_name
        self.backoff_initial_s = backoff_initial_s
        self.backoff_max_s = backoff_max_s
        self.extra_body = dict(extra_body or {})
        self.max_tokens_field = max_tokens_field
        self.images = _ImageCache(image_cache_bytes)
        self.in_flight = [0] * len(self.urls)
        self.sent_per_url = [0] * len(self.urls)
        self._rr = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._session: aiohttp.ClientSession | None = None
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)

    # -- contract ----------------------------------------------------------------------------
    def settings(self) -> dict[str, Any]:
        return {"model": self.model, "base_urls": self.base_urls, "api_key_env": self.api_key_env,
                "concurrency": self.concurrency, "timeout_s": self.timeout_s, "retries": self.retries,
                "preset": self.preset_name, "extra_body": self.extra_body,
                "max_tokens_field": self.max_tokens_field}

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        out: list[Response | None] = [None] * len(requests)
        for i, resp in self.stream(requests):
            out[i] = resp
        return [r for r in out if r is not None]

    def stream(self, requests: Iterable[Request]) -> Iterator[tuple[int, Response]]:
        """``(index, response)`` as requests finish; ``requests`` may be a list or any iterable (see
        ``stream_pull``)."""
        for batch in self.stream_batches(requests):
            yield from batch

    def stream_pull(self, requests: Iterable[Request]) -> Iterator[tuple[int, Response]]:
        """``stream`` over an iterable that is pulled lazily: the next request is taken from it only
        when a slot is about to free (one ahead, in the event loop's idle time), so a caller that
        plans requests in a generator plans while earlier requests are in flight. The index is the
        position in the iteration. An exception raised by the iterable ends the stream (what is in
        flight is cancelled) and propagates to the caller."""
        return self.stream(requests)

    def stream_batches(self, requests: Iterable[Request]) -> Iterator[list[tuple[int, Response]]]:
        """Like ``stream``, but the requests that finished in one wake-up of the event loop come as one
        list. Nothing new is sent while the caller holds a batch, so a caller that persists each
        answer before asking for more loses at most ``concurrency`` requests on a kill.

        Finished tasks are collected by a done-callback into a queue (O(1) per request, whatever the
        concurrency), not by ``asyncio.wait`` over every pending task. While every slot is busy, the
        next request is pulled from ``requests`` and its body built ahead, in the loop's idle time,
        so that a freed slot is refilled without planning, reading or encoding first."""
        loop = self._ensure_loop()
        source = iter(requests)
        pending: dict[asyncio.Task[Response], int] = {}
        finished: deque[asyncio.Task[Response]] = deque()
        waiting: deque[tuple[int, Request]] = deque()  # pulled from ``source``, not yet sent
        waiting_for_done = [False]  # the driver is inside ``run_forever`` until a task finishes
        ahead: dict[int, bytes] = {}  # index -> body built ahead
        pulled = [0, 0]  # requests pulled so far; 1 once ``source`` is exhausted
        failure: list[Exception] = []  # raised by ``source`` inside a loop callback, re-raised outside

        def pull() -> bool:
            if pulled[1]:
                return False
            try:
                req = next(source)
            except StopIteration:
                pulled[1] = 1
                return False
            waiting.append((pulled[0], req))
            pulled[0] += 1
            return True

        def prepare_ahead() -> None:
            try:
                if not waiting and not pull():
                    return
            except Exception as e:  # noqa: BLE001 - re-raised by the driving loop below
                pulled[1] = 1
                failure.append(e)
                return
            i, req = waiting[0]
            if i not in ahead:
                try:
                    ahead[i] = self.body(req)
                except Exception:  # noqa: BLE001 - _one builds it again and reports the error
                    return

        def on_done(task: asyncio.Task[Response]) -> None:
            finished.append(task)
            if waiting_for_done[0]:  # stop after this batch of callbacks (no extra loop turns for a future)
                waiting_for_done[0] = False
                loop.stop()

        try:
            while True:
                while len(pending) < self.concurrency and (waiting or pull()):
                    i, req = waiting.popleft()
                    task = loop.create_task(self._one(req, ahead.pop(i, None)))
                    task.add_done_callback(on_done)
                    pending[task] = i
                if failure:
                    raise failure[0]
                if not pending:
                    return
                if not pulled[1] or waiting:
                    loop.call_soon(prepare_ahead)
                if not finished:
                    waiting_for_done[0] = True
                    try:
                        loop.run_forever()
                    finally:
                        waiting_for_done[0] = False
                batch = []
                while finished:
                    task = finished.popleft()
                    batch.append((pending.pop(task), task.result()))
                yield batch
        finally:
            if pending:
                for task in pending:
                    task.cancel()
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))

    def close(self) -> None:
        if self._loop is None:
            return
        if self._session is not None:
            self._loop.run_until_complete(self._session.close())
            self._session = None
        self._loop.run_until_complete(asyncio.sleep(0))
        self._loop.close()
        self._loop = None

    # -- internals ---------------------------------------------------------------------------
    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        if self._session is None:
            self._session = self._loop.run_until_complete(self._make_session())
        return self._loop

    async def _make_session(self) -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(limit=self.concurrency, limit_per_host=0, ttl_dns_cache=300)
        # headers and timeout set once on the session; no cookie jar (an API client keeps no cookies)
        return aiohttp.ClientSession(connector=connector, json_serialize=json.dumps, headers=self._headers,
                                     timeout=self._timeout, cookie_jar=aiohttp.DummyCookieJar())

    def body(self, req: Request) -> bytes:
        """The request body; image parts are spliced in from the per-sha fragment cache (the body is
        assembled from byte pieces with one join, so a large image is copied once per request)."""
        s = req.settings
        head: dict[str, Any] = {"model": self.model, self.max_tokens_field: s.max_new_tokens,
                                "temperature": s.temperature, "top_p": s.top_p}
        if s.seed is not None:
            head["seed"] = s.seed
        head.update(self.extra_body)
        head.update(dict(s.extra))
        out = [json.dumps(head)[:-1].encode("utf-8"), b',"messages":[']
        for k, m in enumerate(req.messages):
            if k:
                out.append(b",")
            self._message_json(m, req.bench_root, out)
        out.append(b"]}")
        return b"".join(out)

    def _message_json(self, m: Message, bench_root: Path, out: list[bytes]) -> None:
        """Append the JSON of message ``m`` to ``out`` as UTF-8 pieces."""
        role = json.dumps(m.role)
        if m.role != "user" or all(p.type == "text" for p in m.parts) and len(m.parts) == 1:
            text = "\n".join(p.text or "" for p in m.parts if p.type == "text")
            out.append(('{"role":' + role + ',"content":' + json.dumps(text, ensure_ascii=False) + "}").encode("utf-8"))
            return
        out.append(('{"role":' + role + ',"content":[').encode("utf-8"))
        for k, p in enumerate(m.parts):
            if k:
                out.append(b",")
            if p.type == "text":
                out.append(json.dumps({"type": "text", "text": p.text or ""}, ensure_ascii=False).encode("utf-8"))
            else:
                if p.image is None:
                    raise Permanent("image part without a path")
                out.extend(self.images.fragment(bench_root, p.image, p.image_sha256))
        out.append(b"]}")

    def _pick(self) -> int:
        n = len(self.urls)
        if n == 1:
            return 0
        self._rr = (self._rr + 1) % n
        return min(range(n), key=lambda i: (self.in_flight[i], (i - self._rr) % n))

    def _backoff_s(self, exc: BaseException, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        retry_after = getattr(exc, "retry_after", None)
        if retry_after is not None:
            return min(float(retry_after), MAX_RETRY_AFTER_S)
        exp = min(self.backoff_max_s, self.backoff_initial_s * 2 ** (attempt - 1))
        return random.uniform(exp / 2, exp)  # exponential backoff with (equal) jitter

    async def _post(self, body: bytes) -> tuple[str, int | None, int | None]:
        assert self._session is not None
        i = self._pick()
        self.in_flight[i] += 1
        self.sent_per_url[i] += 1
        try:
            async with self._session.post(self.urls[i], data=body) as r:
                data = await r.read()
                if r.status == 200:
                    try:
                        text, pt, ct = parse_completion(data)
                    except Transient as e:
                        raise Transient(self._scrub(str(e))) from None
                    except Permanent as e:
                        raise Permanent(self._scrub(str(e))) from None
                    return self._scrub(text), pt, ct
                msg = f"HTTP {r.status} from {self.base_urls[i]}: {self._scrub(error_text(data))}"
                if r.status in RETRY_STATUS or r.status >= 500:
                    raise Transient(msg, parse_retry_after(r.headers))
                raise Permanent(msg)
        except TimeoutError:
            raise Transient(f"timeout after {self.timeout_s:g}s from {self.base_urls[i]}") from None
        except aiohttp.ClientError as e:
            raise Transient(f"{type(e).__name__} from {self.base_urls[i]}: {self._scrub(str(e))}") from None
        finally:
            self.in_flight[i] -= 1

    def _scrub(self, text: bytes | str) -> str:
        s = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        return s.replace(self._secret, "***") if self._secret else s

    async def _one(self, req: Request, body: bytes | None = None) -> Response:
        t0 = time.perf_counter()
        attempts = 0
        try:
            if body is None:
                body = self.body(req)
            while True:  # a plain loop: no retry machinery on the (common) first-try path
                attempts += 1
                try:
                    text, pt, ct = await self._post(body)
                    break
                except Transient as e:
                    if attempts > self.retries:
                        raise
                    await asyncio.sleep(self._backoff_s(e, attempts))
        except (Transient, Permanent) as e:
            return Response("error", error=f"{e} (attempts: {attempts})", latency_s=time.perf_counter() - t0,
                            attempts=attempts)
        except BadInput as e:
            return Response("error", error=str(e), latency_s=time.perf_counter() - t0, attempts=attempts)
        return Response("ok", text=text, latency_s=time.perf_counter() - t0, prompt_tokens=pt,
                        completion_tokens=ct, attempts=attempts)


@register_adapter("openai")
def _factory(model: str, opts: AdapterOptions) -> OpenAIAdapter:
    preset = opts.preset or get_preset("generic")
    extra = dict(opts.extra)
    known = {"backoff_initial_s", "backoff_max_s", "image_cache_bytes", "extra_body"}
    if set(extra) - known:
        raise BadInput(f"unknown openai options {sorted(set(extra) - known)}; known: {sorted(known)}", field="extra")
    return OpenAIAdapter(model, base_urls=opts.base_urls, api_key_env=opts.api_key_env,
                         concurrency=opts.concurrency, timeout_s=opts.timeout_s, retries=opts.retries,
                         box_convention=preset.box, preset_name=preset.name,
                         max_tokens_field=preset.max_tokens_field,
                         backoff_initial_s=float(extra.pop("backoff_initial_s", 0.5)),
                         backoff_max_s=float(extra.pop("backoff_max_s", 30.0)),
                         image_cache_bytes=int(extra.pop("image_cache_bytes", 1 << 30)),
                         extra_body=extra.pop("extra_body", None))
