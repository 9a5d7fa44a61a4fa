"""Your own Python function as a model: ``medr2.evaluate(bench, model=my_model, out=...)``.

``my_model(request) -> str | Response`` receives one :class:`~medr2.models.base.Request` (its messages: text
parts and image parts, each image a path inside ``request.bench_root`` with its sha256) and returns the answer
text, or a full :class:`~medr2.models.base.Response`. An exception becomes that one request's error response
(stored as an ``error``, never scored as a wrong answer); the rest of the run goes on. See docs/running.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from medr2.errors import BadInput
from medr2.models.base import BoxConvention, Request, Response

ModelFunction = Callable[[Request], "str | Response"]


def callable_name(fn: Callable[..., Any]) -> str:
    """``module.qualname`` of a function (or of a callable object's class)."""
    target = fn if hasattr(fn, "__qualname__") else type(fn)
    return f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', repr(target))}"


class CallableAdapter:
    """An :class:`~medr2.models.base.Adapter` around ``fn(request) -> str | Response``.

    ``name`` (default: the function's ``module.qualname``) is the model key, so a run of the same function
    resumes and a different function refuses the run folder; ``box_convention`` says in which space the
    function's boxes are (default: pixels of the image as stored)."""

    def __init__(self, fn: Callable[[Request], str | Response], *, name: str | None = None,
                 box_convention: BoxConvention | None = None) -> None:
        if not callable(fn):
            raise BadInput(f"the model must be a spec string or a callable, got {type(fn).__name__}", field="model")
        self.fn = fn
        self.name = name or callable_name(fn)
        self.key = f"python:{self.name}"
        self.box_convention = box_convention or BoxConvention()

    def settings(self) -> dict[str, Any]:
        return {"callable": self.name}

    def _one(self, request: Request) -> Response:
        t0 = time.perf_counter()
        try:
            out = self.fn(request)
        except Exception as e:  # one bad request is that request's error, not the run's
            return Response(status="error", error=f"{type(e).__name__}: {e}", latency_s=time.perf_counter() - t0)
        latency = time.perf_counter() - t0
        if isinstance(out, Response):
            if out.latency_s is None:
                out.latency_s = latency
            return out
        if isinstance(out, str):
            return Response(status="ok", text=out, latency_s=latency)
        return Response(status="error", error=f"the model function returned {type(out).__name__}, not str or "
                        "Response", latency_s=latency)

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        return [self._one(r) for r in requests]

    def close(self) -> None:
        close = getattr(self.fn, "close", None)
        if callable(close):
            close()
