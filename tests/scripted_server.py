"""A chat-completions server on 127.0.0.1 whose every response is scripted by the test (hostile servers,
reasoning servers): :class:`ScriptedServer` answers any path and method with ``respond(request, raw, body)``.

Helpers build the usual bodies: :func:`completion` (a chat-completions body with any ``message`` fields,
``finish_reason`` and ``usage``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from tests.openai_server import OpenAIServer

Respond = Callable[[web.Request, bytes, Any], Awaitable[web.StreamResponse]]


def completion(content: str | None, *, finish_reason: str | None = "stop", usage: dict[str, Any] | None = None,
               **message: Any) -> dict[str, Any]:
    return {"id": "chatcmpl-x", "object": "chat.completion", "created": int(time.time()), "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content, **message},
                         "finish_reason": finish_reason}],
            "usage": usage if usage is not None else {"prompt_tokens": 10, "completion_tokens": 2}}


def json_response(payload: Any, status: int = 200) -> web.Response:
    return web.Response(body=json.dumps(payload).encode(), status=status, content_type="application/json")


class ScriptedServer(OpenAIServer):
    """Every request (any path) is answered by ``respond``; ``paths`` records the paths asked."""

    def __init__(self, respond: Respond, **kw: Any) -> None:
        super().__init__(**kw)
        self.respond = respond
        self.paths: list[str] = []
        self.bodies: list[bytes] = []

    def _add_routes(self, app: web.Application) -> None:
        app.router.add_route("*", "/{tail:.*}", self._handle)

    async def _respond(self, request: web.Request, raw: bytes) -> web.StreamResponse:
        with self._lock:
            self.paths.append(request.path)
            self.bodies.append(raw)
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        return await self.respond(request, raw, body)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"
