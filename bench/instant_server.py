"""A minimal OpenAI-compatible chat-completions server for client benchmarks (stdlib only).

A raw asyncio protocol: HTTP/1.1 keep-alive, reads the request by Content-Length, never parses
the JSON body, and answers every POST with one fixed chat-completion (text "A", token usage), either
at once or after ``--latency`` seconds (a timer, no CPU while waiting). ``GET /stats`` returns
the number of requests and body bytes this process has received and its CPU seconds.

Run several processes on one port with ``--reuse-port`` (SO_REUSEPORT) to spread the load:

    python bench/instant_server.py --port 8911 [--latency 0.1] [--reuse-port]

It prints ``READY <port>`` once listening.
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


class Handler(asyncio.Protocol):
    """One connection: split the byte stream into requests, answer each."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.buf = bytearray()
        self.need = -1  # body bytes still expected for the current request; -1: reading headers
        self.is_get = False
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while True:
            if self.need < 0:
                end = self.buf.find(b"\r\n\r\n")
                if end < 0:
                    return
                head = bytes(self.buf[:end]).lower()
                del self.buf[:end + 4]
                self.is_get = head.startswith(b"get ")
                i = head.find(b"content-length:")
                if i >= 0:
                    j = head.find(b"\r\n", i)
                    self.need = int(head[i + 15:j if j >= 0 else None])
                elif b"transfer-encoding" in head:
                    assert self.transport is not None
                    self.transport.write(http_response(b'{"error":"send Content-Length"}', "411 Length Required"))
                    self.transport.close()
                    return
                else:
                    self.need = 0
            if len(self.buf) < self.need:
                return
            del self.buf[:self.need]
            Counters.body_bytes += self.need
            self.need = -1
            self.answer()

    def answer(self) -> None:
        assert self.transport is not None
        if self.is_get:
            cpu = time.process_time()
            stats = {"requests": Counters.requests, "body_bytes": Counters.body_bytes, "cpu_s": cpu}
            self.transport.write(http_response(json.dumps(stats).encode()))
            return
        Counters.requests += 1
        if self.latency > 0:
            asyncio.get_running_loop().call_later(self.latency, self._send)
        else:
            self.transport.write(RESPONSE)

    def _send(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(RESPONSE)

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None


async def serve(host: str, port: int, latency: float, reuse_port: bool) -> None:
    loop = asyncio.get_running_loop()
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
    a = ap.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(a.host, a.port, a.latency, a.reuse_port))


if __name__ == "__main__":
    main()
