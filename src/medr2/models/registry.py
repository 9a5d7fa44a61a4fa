"""Model specs -> adapters. ``load_adapter("openai:Qwen/Qwen2.5-VL-7B-Instruct", base_urls=[...])``.

Adapters register a factory under the prefix before ``:`` with ``@register_adapter("prefix")`` (see
``docs/extending.md``). Built-in adapters are lazy registry entries imported the first time their prefix
is asked for, so ``medr2 --help`` never imports torch or aiohttp.

An adapter may also implement ``stream(requests)`` (see :class:`StreamingAdapter`): it yields
``(index, response)`` as each request finishes, in any order, so the runner persists every
response the moment it arrives. Adapters without it are called with ``generate`` in batches.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from medr2.errors import BadInput
from medr2.models.base import Adapter, Request, Response
from medr2.registry import Registry

if TYPE_CHECKING:
    from medr2.bench.table import BenchSource as Bench
    from medr2.models.presets import Preset


@dataclass(frozen=True)
class AdapterOptions:
    """Everything a factory may use; each adapter reads what applies to it.

    ``bench`` gives baselines read access to the items (oracle answers, train-split priors): a loaded
    :class:`~medr2.bench.format.Bench` or a columnar :class:`~medr2.bench.table.BenchTable`.
    ``extra`` carries backend-specific settings (e.g. ``dtype``/``device`` for ``hf``).
    """

    preset: Preset | None = None
    base_urls: tuple[str, ...] = ()
    api_key_env: str | None = None
    concurrency: int = 8
    timeout_s: float = 120.0
    retries: int = 5
    batch_size: int = 8
    seed: int = 0
    bench: Bench | None = None
    extra: dict[str, Any] = field(default_factory=dict)


AdapterFactory = Callable[[str, AdapterOptions], Adapter]
# prefix -> factory; the built-ins are lazy entries (their module, which may import torch or aiohttp, is
# imported when the prefix is used). Adding an adapter: docs/extending.md.
ADAPTERS: Registry[AdapterFactory] = Registry("model prefix", field="--model")
for _prefix, _target in (("openai", "openai:_factory"), ("baseline", "baselines:_factory"),
                         ("hf", "hf:make_hf_adapter"), ("vllm", "vllm:make_vllm_adapter")):
    ADAPTERS.lazy(_prefix, f"medr2.models.{_target}")
# a person answering in the browser (docs/human.md): the adapter serves the view room's reading page
ADAPTERS.lazy("human", "medr2.view.human:make_human_adapter")


def register_adapter(prefix: str) -> Callable[[AdapterFactory], AdapterFactory]:
    """Register ``factory(name, options) -> Adapter`` for specs ``prefix:name`` (a taken prefix is refused)."""
    return ADAPTERS.decorator(prefix)


def known_prefixes() -> list[str]:
    return sorted(ADAPTERS.names())


def load_adapter(spec: str, **opts: Any) -> Adapter:
    """Build the adapter for ``spec`` (``PREFIX:NAME``); ``opts`` are :class:`AdapterOptions` fields."""
    prefix, sep, name = spec.partition(":")
    if not sep or not name:
        raise BadInput(f"model spec {spec!r} must look like PREFIX:NAME (prefixes: {', '.join(known_prefixes())})",
                       field="--model")
    factory = ADAPTERS.lookup(prefix)
    allowed = {f.name for f in fields(AdapterOptions)}
    unknown = sorted(set(opts) - allowed)
    if unknown:
        raise BadInput(f"unknown adapter options {unknown}; allowed: {sorted(allowed)}", field="opts")
    return factory(name, AdapterOptions(**opts))


@runtime_checkable
class StreamingAdapter(Protocol):
    """Optional capability: answers stream out as they finish (index into ``requests``, response)."""

    def stream(self, requests: Sequence[Request]) -> Iterator[tuple[int, Response]]: ...
