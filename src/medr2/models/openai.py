"""``openai:MODEL`` — any OpenAI-compatible chat-completions endpoint (vLLM, SGLang, Ollama,
LMDeploy, commercial APIs), through a lean aiohttp client.

- one ``ClientSession`` whose connector is sized to the concurrency; at most ``concurrency``
  requests in flight; several base URLs, each request sent to the one with the fewest in flight;
- images sent as data URLs, each encoded once per content hash (the JSON fragment is cached and
  spliced into request bodies, so nothing is re-encoded per request);
- retries with exponential backoff and jitter on 429, 408, 5xx, timeouts, connection
  errors and malformed bodies, honouring ``Retry-After`` / ``retry-after-ms``; other 4xx fail at once;
- a per-request timeout; token usage (a value outside SQLite's 64-bit range is dropped with a note),
  ``finish_reason`` and the server's separate reasoning text (``reasoning_content`` of vLLM/SGLang reasoning
  parsers and DeepSeek-style APIs, ``reasoning`` of newer vLLM) recorded; the answer is the content only;
- a response body larger than ``max_response_bytes`` (default 128 MiB) is an error for that item, read no
  further; redirects are followed only within the origin of the base URL (a 307/308 re-sends the body:
  never to another host);
- the API key read from the environment variable the user names, sent only in the Authorization header,
  never recorded or logged: every text kept from a response (answer, reasoning, error message) has the key
  and every fragment of it of >= 8 characters masked *before* it is cut; credentials in a base URL are
  masked wherever the URL is recorded.

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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp
import pybase64
import yarl

from medr2 import jsonsafe
from medr2.errors import BadInput, WorkFailed
from medr2.images import InsideRoot, bench_identity
from medr2.models.base import BoxConvention, Message, Request, Response
from medr2.models.config import ModelConfig
from medr2.models.presets import Preset, get_preset
from medr2.models.structured import get_structured, request_fields
from medr2.redact import read_key, redact_credentials, redact_url, scrub_secret, secret_grams
from medr2.textfile import storable

if TYPE_CHECKING:
    from medr2.records import Confidence

RETRY_STATUS = frozenset({408, 409, 425, 429})
REDIRECT_STATUS = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS = 5
MAX_RETRY_AFTER_S = 120.0
ERROR_SNIPPET = 300
ERROR_SCAN = 1 << 16  # an error body is read for its message from its first 64 KiB
MAX_RESPONSE_BYTES = 128 << 20
_TOKENS_MAX = (1 << 63) - 1  # what SQLite's INTEGER holds


class Transient(Exception):
    """A failure worth retrying; ``retry_after`` is the server's requested wait, if any; ``unreachable``: no
    connection could be made (nothing answered at all)."""

    def __init__(self, message: str, retry_after: float | None = None, *, unreachable: bool = False) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.unreachable = unreachable


class EndpointDown(WorkFailed):
    """Every endpoint refuses connections: at the start (``DEAD_AT_START`` attempts per URL, none answered), or
    mid-run (``DEAD_IN_RUN`` requests in a row, or two waves of ``concurrency``, failed to connect after their
    retries). Raised out of the adapter's stream: the run stops (exit 1) instead of retrying every item."""


DEAD_AT_START = 3  # connection attempts per URL, none answered since the start, before the endpoint is down
DEAD_IN_RUN = 16  # requests in a row failing to connect (retries spent) after answers came, before it is down


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


@dataclass(frozen=True)
class Completion:
    """What one chat-completions body says: the answer (content only), usage, why it stopped, reasoning."""

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    reasoning: str | None = None
    notes: tuple[str, ...] = ()
    # ``choices[0].logprobs.content`` when the request asked for log-probabilities (``top_logprobs``)
    token_logprobs: list[Any] | None = None


def _tokens(usage: dict[str, Any], name: str, notes: list[str]) -> int | None:
    value = usage.get(name)
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _TOKENS_MAX:
        return value
    shown = f"a {len(str(abs(value)))}-digit number" if isinstance(value, int) and not isinstance(value, bool) \
        else repr(value)[:40]
    notes.append(f"usage.{name} is not a token count medr2 can store ({shown}): recorded as unknown")
    return None


def read_completion(data: bytes) -> Completion:
    """The :class:`Completion` of a chat-completions body; Transient if the body is malformed.

    The answer is ``message.content`` only. ``message.reasoning_content`` (vLLM/SGLang reasoning parsers,
    DeepSeek-style APIs) or ``message.reasoning`` (vLLM >= 0.11) is kept separately. A body whose content is
    null but that says it stopped at the token limit, or that carries reasoning, is an answer with empty text
    (a reasoning model cut off inside its reasoning: scored ``truncated``)."""
    try:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:  # invalid UTF-8 inside the answer: keep it, bad bytes as U+FFFD
            text = data.decode("utf-8", "replace")
        body = jsonsafe.loads(text, max_bytes=None)  # the body is bounded by max_response_bytes already
        choice = body["choices"][0]
        msg = choice["message"]
    except (BadInput, KeyError, IndexError, TypeError) as e:
        raise Transient(f"malformed response body ({type(e).__name__}): {data[:ERROR_SNIPPET]!r}") from None
    finish = choice.get("finish_reason") if isinstance(choice, dict) else None
    finish = finish[:64] if isinstance(finish, str) and finish else None
    reasoning = None
    if isinstance(msg, dict):
        for name in ("reasoning_content", "reasoning"):
            if isinstance(msg.get(name), str) and msg[name]:
                reasoning = storable(msg[name])
                break
    content = msg.get("content") if isinstance(msg, dict) else None
    if isinstance(content, list):  # some servers return content parts
        content = "".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    if not isinstance(content, str):
        if content is None and (finish == "length" or reasoning is not None):
            content = ""
        else:
            refusal = msg.get("refusal") if isinstance(msg, dict) else None
            raise Permanent(f"response has no text content (refusal: {refusal!r})")
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    notes: list[str] = []
    pt, ct = _tokens(usage, "prompt_tokens", notes), _tokens(usage, "completion_tokens", notes)
    lp = choice.get("logprobs") if isinstance(choice, dict) else None
    token_lp = lp.get("content") if isinstance(lp, dict) and isinstance(lp.get("content"), list) else None
    return Completion(storable(content), pt, ct, finish, reasoning, tuple(notes), token_lp)


def parse_completion(data: bytes) -> tuple[str, int | None, int | None]:
    """Text and token usage of a chat-completions body (:func:`read_completion` has the rest)."""
    c = read_completion(data)
    return c.text, c.prompt_tokens, c.completion_tokens


def error_message(data: bytes) -> str:
    """The message of an error body, whatever its shape: ``{"error": {"message": ..}}`` (OpenAI, vLLM,
    SGLang), ``{"detail": ..}`` (FastAPI servers such as ``transformers serve``), ``{"error": ".."}``
    (Ollama), ``{"message": ..}``; else the body's first bytes as text. Not yet cut to ``ERROR_SNIPPET``
    (at most ``ERROR_SCAN`` characters), so a secret can be scrubbed from it before it is cut."""
    body: Any = None
    if len(data) <= 4 * ERROR_SCAN:
        try:
            body = jsonsafe.loads(data)
        except BadInput:
            body = None
    if isinstance(body, dict):
        err = body.get("error")
        for found in ((err or {}).get("message") if isinstance(err, dict) else err, body.get("detail"),
                      body.get("message")):
            if isinstance(found, str) and found:
                return found[:ERROR_SCAN]
            if isinstance(found, list | dict) and found:  # FastAPI validation errors: a list of dicts
                try:
                    return json.dumps(found, ensure_ascii=False)[:ERROR_SCAN]
                except (ValueError, RecursionError):
                    break
    return data[:ERROR_SCAN].decode("utf-8", "replace")


def error_text(data: bytes) -> str:
    """:func:`error_message` cut to ``ERROR_SNIPPET`` characters."""
    return error_message(data)[:ERROR_SNIPPET]


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

    def _path(self, bench_root: Path, rel: str, sha: str | None) -> str:
        """``resolve_inside`` with the bench root resolved once per bench; a deferred image is rendered first
        (:func:`medr2.renders.image_path`)."""
        inside = self._roots.get(bench_root)
        if inside is None:
            inside = self._roots[bench_root] = InsideRoot(bench_root)
        path = inside.resolve(rel)
        if not os.path.isfile(path):
            from medr2.renders import image_path

            try:
                path = str(image_path(bench_root, rel, sha))
            except BadInput as e:  # missing, or rendered to other bytes than the bench pins: this item fails
                raise Permanent(f"cannot read image {rel}: {e.reason}") from None
        return path

    def fragment(self, bench_root: Path, rel: str, sha: str | None) -> tuple[bytes, bytes, bytes]:
        key = sha or rel
        frag = self._frags.get(key)
        if frag is not None:
            self._frags.move_to_end(key)
            return frag
        path = self._path(bench_root, rel, sha)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise Permanent(f"cannot read image {rel}: {e}") from None
        if sha is not None:
            try:
                got = bench_identity(bench_root).of_bytes(data, file=rel)  # the bench's rule: pixels or bytes
            except BadInput as e:
                raise Permanent(f"cannot read image {rel}: {e.reason}") from None
            if got != sha:
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
                 max_tokens_field: str = "max_tokens", max_response_bytes: int = MAX_RESPONSE_BYTES,
                 structured: str | None = None, max_images: int | None = None) -> None:
        if not base_urls:
            raise BadInput("openai models need at least one --base-url (e.g. http://127.0.0.1:8000/v1)",
                           field="--base-url")
        if concurrency < 1 or retries < 0 or timeout_s <= 0:
            raise BadInput("need concurrency >= 1, retries >= 0, timeout > 0", field="--concurrency")
        if max_response_bytes < 1:
            raise BadInput("max_response_bytes must be >= 1", field="--model-option max_response_bytes")
        self.model = model
        self.key = f"openai:{model}"
        self.urls = [yarl.URL(u.rstrip("/") + "/chat/completions") for u in base_urls]  # parsed once
        self.base_urls = [redact_url(u.rstrip("/")) for u in base_urls]  # as recorded and shown: no credentials
        self.api_key_env = api_key_env
        api_key = None
        if api_key_env:
            api_key = read_key(api_key_env)
        if api_key and any(u.user is not None for u in self.urls):
            raise BadInput("a --base-url with credentials (user:password@) and --api-key-env cannot be combined "
                           "(both set the Authorization header); give one of them", field="--base-url")
        self._secret = api_key
        self._grams = secret_grams(api_key)
        self.max_response_bytes = max_response_bytes
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
        # --structured-answers: the mechanism (medr2.models.structured) constraining each closed answer
        self.structured = None if structured is None else get_structured(structured).name
        self.images = _ImageCache(image_cache_bytes)
        # images one prompt may show (the preset's max_images or --model-option max_images=N: the server's limit,
        # e.g. vLLM's --limit-mm-per-prompt); the run refuses an item of more before any request (issue 49)
        if max_images is not None and (not isinstance(max_images, int) or max_images < 1):
            raise BadInput(f"max_images must be a whole number >= 1, not {max_images!r}",
                           field="--model-option max_images")
        self.max_images = max_images
        self.in_flight = [0] * len(self.urls)
        self.sent_per_url = [0] * len(self.urls)
        self._rr = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._session: aiohttp.ClientSession | None = None
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)
        self._answered = False  # some URL sent an HTTP response
        self._refused_attempts = 0  # connection attempts in a row that failed (reset by any response)
        self._refused_requests = 0  # requests in a row whose retries all failed to connect

    # -- contract ----------------------------------------------------------------------------
    def settings(self) -> dict[str, Any]:
        return {"model": self.model, "base_urls": self.base_urls, "api_key_env": self.api_key_env,
                "concurrency": self.concurrency, "timeout_s": self.timeout_s, "retries": self.retries,
                "preset": self.preset_name, "extra_body": self.extra_body,
                "max_tokens_field": self.max_tokens_field, "max_response_bytes": self.max_response_bytes,
                **({"structured": self.structured} if self.structured else {}),
                **({"max_images": self.max_images} if self.max_images is not None else {})}

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
        if self.structured is not None:
            head.update(request_fields(self.structured, req.meta.get("item")))
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

    async def _read_body(self, r: aiohttp.ClientResponse, where: str) -> bytes:
        """The response body, read no further than ``max_response_bytes`` (an endless body is an error)."""
        limit = self.max_response_bytes
        too_big = (f"response body from {where} is larger than {limit} bytes (max_response_bytes); not read "
                   "further (raise it with --model-option max_response_bytes=N if the answers are that long)")
        if r.content_length is not None:
            if r.content_length > limit:
                r.close()
                raise Permanent(too_big)
            if not r.headers.get("Content-Encoding"):  # (a compressed body may inflate past its length)
                return await r.read()  # the common case: a declared length within the limit, read at once
        buf = bytearray()  # chunked, compressed or unknown length: read in pieces, no further than the limit
        async for chunk in r.content.iter_chunked(1 << 20):
            buf += chunk
            if len(buf) > limit:
                r.close()
                raise Permanent(too_big)
        return bytes(buf)

    async def _post(self, body: bytes) -> Completion:
        assert self._session is not None
        i = self._pick()
        self.in_flight[i] += 1
        self.sent_per_url[i] += 1
        where = self.base_urls[i]
        try:
            url = self.urls[i]
            for _ in range(MAX_REDIRECTS + 1):
                async with self._session.post(url, data=body, allow_redirects=False) as r:
                    self._answered, self._refused_attempts, self._refused_requests = True, 0, 0
                    if r.status in REDIRECT_STATUS:
                        url = self._redirect_target(url, r, where)
                        continue
                    data = await self._read_body(r, where)
                    if r.status == 200:
                        return self.completion(data)
                    # scrub the whole message first, then cut it: a cut key leaves no fragment to match
                    msg = f"HTTP {r.status} from {where}: {self._scrub(error_message(data))[:ERROR_SNIPPET]}"
                    if r.status in RETRY_STATUS or r.status >= 500:
                        raise Transient(msg, parse_retry_after(r.headers))
                    raise Permanent(msg)
            raise Permanent(f"more than {MAX_REDIRECTS} redirects from {where}")
        except TimeoutError:
            raise Transient(f"timeout after {self.timeout_s:g}s from {where}") from None
        except aiohttp.ClientError as e:
            detail = redact_credentials(self._scrub(str(e)))[:ERROR_SNIPPET]
            raise Transient(f"{type(e).__name__} from {where}: {detail}",
                            unreachable=isinstance(e, aiohttp.ClientConnectorError)) from None
        finally:
            self.in_flight[i] -= 1

    def _redirect_target(self, url: yarl.URL, r: aiohttp.ClientResponse, where: str) -> yarl.URL:
        """Where a redirect points, if it stays on the origin (scheme, host, port) of ``url``; a redirect to
        another origin is refused: it would send the request body (bench images, prompts) to a host the user
        never named."""
        location = r.headers.get("Location")
        if not location:
            raise Permanent(f"HTTP {r.status} redirect without a Location from {where}")
        try:
            target = url.join(yarl.URL(location))
        except ValueError:
            raise Permanent(f"HTTP {r.status} redirect to an invalid Location from {where}") from None
        if target.origin() != url.origin():
            raise Permanent(f"HTTP {r.status} from {where} redirects to another origin "
                            f"({redact_url(str(target.origin()))}); not followed: the request would be re-sent, "
                            "images and prompts included, to a host --base-url does not name. Give that URL as "
                            "--base-url if you trust it")
        return target

    def _check_reachable(self, e: Transient, *, last: bool) -> None:
        """Count connection failures; raise :class:`EndpointDown` (naming the URLs and the last error) when no
        URL could be reached from the start, or when requests in a row stopped reaching any after answers came."""
        if not e.unreachable:
            self._refused_attempts = self._refused_requests = 0
            return
        self._refused_attempts += 1
        self._refused_requests += last
        where = ", ".join(self.base_urls)
        if not self._answered and self._refused_attempts >= DEAD_AT_START * len(self.urls):
            raise EndpointDown(f"cannot connect to {where}: the first {self._refused_attempts} attempts failed and "
                               f"nothing answered (last error: {e}). Is the server running, and is --base-url "
                               "right? Rerun the same command once it is up")
        if self._answered and self._refused_requests >= max(DEAD_IN_RUN, 2 * self.concurrency):
            raise EndpointDown(f"{where} stopped answering: the last {self._refused_requests} requests could not "
                               f"connect after {self.retries} retries each (last error: {e}). Every answer so far "
                               "is stored; once the server is back, rerun the same command with --retry-errors to "
                               "resume and resend the failed ones")

    def completion(self, data: bytes) -> Completion:
        """The :class:`Completion` of a 200 body (:func:`read_completion`), every text kept from it with the API key
        masked; Transient/Permanent (masked too) when it holds no answer. The one reader of answers: the local client
        and the Ray HTTP path (:mod:`medr2.run.ray_executor`) both read the server's body here."""
        try:
            c = read_completion(data)
        except Transient as e:
            raise Transient(self._scrub(str(e))) from None
        except Permanent as e:
            raise Permanent(self._scrub(str(e))) from None
        return Completion(self._scrub(c.text), c.prompt_tokens, c.completion_tokens, c.finish_reason,
                          self._scrub(c.reasoning) if c.reasoning else None, c.notes, c.token_logprobs)

    def response(self, c: Completion, item: Any, *, latency_s: float | None = None, attempts: int = 1) -> Response:
        """The stored :class:`Response` of an answered request about ``item`` (its form and options; None: unknown):
        the answer, usage, finish reason and reasoning of ``c``, and, where the request asked for log-probabilities
        (``--confidence logprobs``), the confidence of each answer or a note saying why there is none. Built here for
        the local client and the Ray HTTP path alike."""
        confidence, why = completion_confidence(c, item, asked=bool(self.extra_body.get("logprobs")))
        return Response("ok", text=c.text, latency_s=latency_s, prompt_tokens=c.prompt_tokens,
                        completion_tokens=c.completion_tokens, attempts=attempts, finish_reason=c.finish_reason,
                        reasoning=c.reasoning, notes=c.notes + ((why,) if why else ()), confidence=confidence)

    def _scrub(self, text: bytes | str) -> str:
        """The text with the API key and every fragment of it of >= 8 characters masked."""
        s = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        return scrub_secret(s, self._secret, self._grams) if self._secret else s

    async def _one(self, req: Request, body: bytes | None = None) -> Response:
        t0 = time.perf_counter()
        attempts = 0
        try:
            if body is None:
                body = self.body(req)
            while True:  # a plain loop: no retry machinery on the (common) first-try path
                attempts += 1
                try:
                    c = await self._post(body)
                    break
                except Transient as e:
                    self._check_reachable(e, last=attempts > self.retries)
                    if attempts > self.retries:
                        raise
                    await asyncio.sleep(self._backoff_s(e, attempts))
        except (Transient, Permanent) as e:
            return Response("error", error=f"{e} (attempts: {attempts})", latency_s=time.perf_counter() - t0,
                            attempts=attempts)
        except BadInput as e:
            return Response("error", error=str(e), latency_s=time.perf_counter() - t0, attempts=attempts)
        return self.response(c, req.meta.get("item"), latency_s=time.perf_counter() - t0, attempts=attempts)


NO_LOGPROBS_NOTE = ("no confidence: the server sent no token log-probabilities (choices[0].logprobs.content) although "
                    "the request asked for them (logprobs, top_logprobs); some servers ignore these fields "
                    "(transformers serve does)")


def completion_confidence(c: Completion, item: Any, *, asked: bool = True) -> tuple[Confidence | None, str | None]:
    """The ``logprobs`` confidence of a completion (``medr2.models.confidence``) about ``item``, where the server
    returned token log-probabilities and the item has answers to map them onto; else None and, where the request
    ``asked`` for log-probabilities and the item has answers, why there is none (a confidence is never made up)."""
    from medr2.models.confidence import from_token_logprobs, labels_of

    labels = labels_of(item)
    if not labels:
        return None, None
    if not c.token_logprobs:
        return None, NO_LOGPROBS_NOTE if asked else None
    conf = from_token_logprobs(c.token_logprobs, labels)
    if conf is None:
        return None, (f"no confidence: none of the {len(c.token_logprobs)} generated tokens is one of the answers "
                      f"({', '.join(labels)}), or their log-probabilities are not finite")
    return conf, None


def logprobs_body(options: dict[str, Any]) -> dict[str, Any]:
    """``top_logprobs=K`` (``--model-option``, or ``--confidence logprobs``): ask for the log-probabilities of
    the answer tokens and the K most likely alternatives at each position (removed from ``options``)."""
    if "top_logprobs" not in options:
        return {}
    k = options.pop("top_logprobs")
    try:
        k = int(k)
    except (TypeError, ValueError):
        raise BadInput(f"top_logprobs must be an integer 1-20, not {k!r}",
                       field="--model-option top_logprobs") from None
    if not 1 <= k <= 20:
        raise BadInput(f"top_logprobs must be 1-20, not {k}", field="--model-option top_logprobs")
    return {"logprobs": True, "top_logprobs": k}


# ``--model-option`` names for the reasoning controls servers take, and where each goes in the request body:
# (None, field) = a top-level field; ("chat_template_kwargs", key) = passed to the model's chat template
REASONING_OPTIONS: dict[str, tuple[str | None, str]] = {
    "reasoning_effort": (None, "reasoning_effort"),  # OpenAI o-series / GPT-5, vLLM (gpt-oss), SGLang
    "thinking_token_budget": (None, "thinking_token_budget"),  # vLLM: hard cap on reasoning tokens
    "enable_thinking": ("chat_template_kwargs", "enable_thinking"),  # Qwen3 / hybrid models (vLLM, SGLang)
    "thinking_budget": ("chat_template_kwargs", "thinking_budget"),  # templates that define it (Qwen3, SGLang)
}


def reasoning_body(options: dict[str, Any]) -> dict[str, Any]:
    """The request-body fields of the reasoning options in ``options`` (removed from it)."""
    out: dict[str, Any] = {}
    for name, (parent, key) in REASONING_OPTIONS.items():
        if name not in options:
            continue
        value = options.pop(name)
        if parent is None:
            out[key] = value
        else:
            out.setdefault(parent, {})[key] = value
    return out


def _merge_body(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in extra.items():
        out[k] = {**out[k], **v} if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _factory(model: str, opts: ModelConfig) -> OpenAIAdapter:
    preset = opts.resolve_preset() or get_preset("generic")
    extra = dict(opts.extra)
    known = {"backoff_initial_s", "backoff_max_s", "image_cache_bytes", "extra_body", "max_response_bytes",
             "top_logprobs", "structured", "max_images", *REASONING_OPTIONS}
    if set(extra) - known:
        raise BadInput(f"unknown openai options {sorted(set(extra) - known)}; known: {sorted(known)}", field="extra")
    body = extra.pop("extra_body", None) or {}
    if not isinstance(body, dict):
        raise BadInput("extra_body must be a JSON object", field="--model-option extra_body")
    body = _merge_body(dict(preset.extra_body), _merge_body(body, {**reasoning_body(extra), **logprobs_body(extra)}))
    return OpenAIAdapter(model, base_urls=opts.base_urls, api_key_env=opts.api_key_env,
                         concurrency=opts.concurrency, timeout_s=opts.timeout_s, retries=opts.retries,
                         box_convention=preset.box, preset_name=preset.name,
                         max_tokens_field=preset.max_tokens_field,
                         backoff_initial_s=float(extra.pop("backoff_initial_s", 0.5)),
                         backoff_max_s=float(extra.pop("backoff_max_s", 30.0)),
                         image_cache_bytes=int(extra.pop("image_cache_bytes", 1 << 30)),
                         extra_body=body or None,
                         max_response_bytes=int(extra.pop("max_response_bytes", MAX_RESPONSE_BYTES)),
                         structured=structured_mode(extra.pop("structured", None), preset),
                         max_images=extra.pop("max_images", preset.max_images))


def structured_mode(asked: Any, preset: Preset) -> str | None:
    """The structured-answer mechanism ``--model-option structured=...`` asks: ``preset`` (what
    ``--structured-answers`` passes) is the preset's own (``Preset.structured``), a name is that mechanism
    (``medr2.models.structured.STRUCTURED_MODES``); None or false: off."""
    if asked is None or asked is False or asked in ("", "false", "none"):
        return None
    name = preset.structured if asked in (True, "true", "preset") else str(asked)
    if name is None:
        raise BadInput(f"preset {preset.name!r} declares no structured-answer mechanism for its servers; pick one "
                       f"with --model-option structured=NAME", field="--structured-answers")
    return get_structured(name).name
