"""A minimal OpenAI-compatible chat-completions server for client benchmarks (stdlib only).

A raw asyncio buffered protocol: HTTP/1.1 keep-alive (pipelined requests too), reads every
request by its Content-Length (a body is read in full but not copied or JSON-parsed; a request
without Content-Length but with Transfer-Encoding gets 411, a bad Content-Length 400), and answers
every POST with one precomputed chat-completion (text "A", token usage), either at once or after
``--latency`` seconds (a timer, no CPU while waiting). ``GET /stats`` returns
the number of requests and body bytes this process has received, its CPU seconds and (with
``--latency``) how late in total its answers went out.

Run several processes on one port with ``--reuse-port`` (SO_REUSEPORT) to spread the load:

    python bench/instant_server.py --port 8911 [--latency 0.1] [--reuse-port]

It prints ``READY <port>`` once listening. ``--spin`` keeps its event loop polling instead of sleeping:
it costs a whole core, and takes out of every round trip the wake-up of an idle CPU (large on a virtual
machine), which otherwise bounds any client at concurrency 1.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import socket
import time

ANSWER = json.dumps({
    "id": "chatcmpl-bench", "object": "chat.completion", "created": 0, "model": "bench",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "A"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 100, "completion_tokens": 1, "total_tokens": 101},
}, separators=(",", ":")).encode()


def http_response(body: bytes, status: str = "200 OK") -> bytes:
    return (f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            "Connection: keep-alive\r\n\r\n").encode() + body


RESPONSE = http_response(ANSWER)


class Counters:
    requests = 0
    body_bytes = 0
    late_s = 0.0  # with --latency: summed delay of the answers past their due time (timer and loop lag)


BUFFER = 1 << 18  # bytes received per recv_into; a body larger than this is skipped across several reads
MAX_HEAD = 1 << 16  # a request head larger than this is refused (431)


class Handler(asyncio.BufferedProtocol):
    """One connection. The kernel writes straight into one reusable buffer (``recv_into``); request
    heads are parsed in place and bodies are counted through without being copied, so a 78 KB body
    costs no Python-level copy."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.buf = bytearray(BUFFER)
        self.view = memoryview(self.buf)
        self.start = 0  # first byte not yet consumed
        self.end = 0  # first free byte
        self.need = -1  # body bytes still expected for the current request; -1: reading a head
        self.is_get = False
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def get_buffer(self, sizehint: int) -> memoryview:
        if self.start == self.end:  # everything consumed: write from the front again
            self.start = self.end = 0
        elif self.end == len(self.buf):  # a head split across reads: move it to the front
            rest = self.end - self.start
            self.buf[:rest] = self.buf[self.start:self.end]
            self.start, self.end = 0, rest
        return self.view[self.end:]

    def buffer_updated(self, nbytes: int) -> None:
        self.end += nbytes
        while self.start < self.end:
            if self.need < 0:
                stop = self.buf.find(b"\r\n\r\n", self.start, self.end)
                if stop < 0:
                    if self.end - self.start >= MAX_HEAD:
                        self._refuse("431 Request Header Fields Too Large", b'{"error":"request head too large"}')
                    return
                if not self._head(bytes(self.view[self.start:stop]).lower()):
                    return
                self.start = stop + 4
            take = min(self.need, self.end - self.start)
            self.start += take
            self.need -= take
            Counters.body_bytes += take
            if self.need:
                return
            self.need = -1
            self.answer()

    def _head(self, head: bytes) -> bool:
        """Parse a request head (lower-cased): method and Content-Length. False: refused and closed."""
        self.is_get = head.startswith(b"get ")
        i = head.find(b"\r\ncontent-length:")
        if i >= 0:
            j = head.find(b"\r\n", i + 2)
            try:
                self.need = int(head[i + 17:j if j >= 0 else None])
            except ValueError:
                self.need = -1
            if self.need < 0:
                self._refuse("400 Bad Request", b'{"error":"bad Content-Length"}')
                return False
        elif b"\r\ntransfer-encoding:" in head:
            self._refuse("411 Length Required", b'{"error":"send Content-Length"}')
            return False
        else:
            self.need = 0
        return True

    def _refuse(self, status: str, body: bytes) -> None:
        assert self.transport is not None
        self.transport.write(http_response(body, status))
        self.transport.close()
        self.start = self.end = 0

    def answer(self) -> None:
        assert self.transport is not None
        if self.is_get:
            cpu = time.process_time()
            stats = {"requests": Counters.requests, "body_bytes": Counters.body_bytes, "cpu_s": cpu,
                     "late_s": Counters.late_s}
            self.transport.write(http_response(json.dumps(stats).encode()))
            return
        Counters.requests += 1
        if self.latency > 0:
            loop = asyncio.get_running_loop()
            due = loop.time() + self.latency
            loop.call_at(due, self._send, due)
        else:
            self.transport.write(RESPONSE)

    def _send(self, due: float) -> None:
        Counters.late_s += asyncio.get_running_loop().time() - due
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(RESPONSE)

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None


def _spin(loop: asyncio.AbstractEventLoop) -> None:
    """Keep the event loop polling (``epoll_wait`` with a zero timeout) instead of sleeping."""
    loop.call_soon(_spin, loop)


async def serve(host: str, port: int, latency: float, reuse_port: bool, spin: bool = False) -> None:
    loop = asyncio.get_running_loop()
    if spin:
        _spin(loop)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.listen(4096)
    server = await loop.create_server(lambda: Handler(latency), sock=sock)
    print(f"READY {sock.getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--latency", type=float, default=0.0, help="seconds before each answer (timer, no CPU)")
    ap.add_argument("--reuse-port", action="store_true", help="SO_REUSEPORT: several processes share the port")
    ap.add_argument("--spin", action="store_true",
                    help="busy-poll instead of sleeping between requests (burns one core; takes the wake-up latency "
                         "of an idle CPU out of every round trip, for concurrency-1 runs on an otherwise idle machine)")
    a = ap.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(a.host, a.port, a.latency, a.reuse_port, a.spin))


if __name__ == "__main__":
    main()
