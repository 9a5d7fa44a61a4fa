"""The one model contract (docs/models.md): a batch of requests in, a batch of responses out.

Messages are a portable list (VLMEvalKit style): each message has a role and a list of parts,
each part text or an image given by its path inside the bench and its content hash. Adapters turn
that into whatever their backend needs (data URLs, PIL images, ...).

Each adapter declares its *box convention*: in which space the boxes it returns are expressed,
and how it resizes the image it is given, so that IoU is computed once in the right space.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    from medr2.records import Confidence

BoxSpace = Literal["pixel", "unit", "thousand"]


@dataclass(frozen=True)
class Part:
    type: Literal["text", "image"]
    text: str | None = None
    image: str | None = None  # path relative to the bench root
    image_sha256: str | None = None


@dataclass(frozen=True)
class Message:
    role: Literal["system", "user", "assistant"]
    parts: tuple[Part, ...]


@dataclass(frozen=True)
class GenSettings:
    max_new_tokens: int = 128
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = 0
    extra: tuple[tuple[str, Any], ...] = ()  # backend-specific, hashed into the request


@dataclass(frozen=True)
class Request:
    key: str  # request hash (medr2.run.store computes it)
    messages: tuple[Message, ...]
    settings: GenSettings
    bench_root: Path
    item_id: str = ""
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


@dataclass
class Response:
    status: Literal["ok", "error"]
    text: str | None = None
    error: str | None = None
    latency_s: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    attempts: int = 1
    # why generation stopped, as the backend says it: "stop", "length" (the token limit was reached: the
    # answer is cut off and scored ``truncated``), "content_filter", ...; None when the backend does not say
    finish_reason: str | None = None
    reasoning: str | None = None  # the server's separate reasoning text (never read for the answer)
    notes: tuple[str, ...] = ()  # what the adapter changed or dropped (e.g. an out-of-range token count)
    # the model's probability of each answer it could give (medr2.records.Confidence), where it gives them
    confidence: Confidence | None = None


@dataclass(frozen=True)
class BoxConvention:
    """How an adapter's returned boxes map to pixels of the original image.

    space: "pixel" = pixels of the image the model received after its own resize;
           "unit" = fractions 0-1 of width/height; "thousand" = 0-1000 scaled.
    resize: name of the resize rule the backend applies before the model sees the image
            ("none", "qwen2-vl" (multiples of 28 within min/max pixels), "fixed")
    params: parameters of the resize rule (e.g. min_pixels, max_pixels, size).
    """

    space: BoxSpace = "pixel"
    resize: str = "none"
    params: tuple[tuple[str, Any], ...] = ()


@runtime_checkable
class Adapter(Protocol):
    """A model. ``generate`` answers every request, in order; a failure is a Response with
    status "error" and its message, never an exception for one bad item."""

    key: str  # stable model key (spec + settings that change answers)
    box_convention: BoxConvention

    def settings(self) -> dict[str, Any]:
        """Model settings recorded in the run manifest (never secrets)."""
        ...

    def generate(self, requests: Sequence[Request]) -> list[Response]: ...

    def close(self) -> None: ...
