"""Model settings -> adapters: ``load_adapter(ModelConfig("openai:Qwen/Qwen2.5-VL-7B-Instruct", base_urls=(...)))``.

Adapters register a factory under the prefix before ``:`` with ``@register_adapter("prefix")`` (see
``docs/extending.md``). Built-in adapters are lazy registry entries imported the first time their prefix
is asked for, so ``medr2 --help`` never imports torch or aiohttp.

An adapter may also implement ``stream(requests)`` (see :class:`StreamingAdapter`): it yields
``(index, response)`` as each request finishes, in any order, so the runner persists every
response the moment it arrives. Adapters without it are called with ``generate`` in batches.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, runtime_checkable

from medr2.errors import BadInput
from medr2.models.base import Adapter, Request, Response
from medr2.models.config import ModelConfig
from medr2.registry import Registry

AdapterFactory = Callable[[str, ModelConfig], Adapter]  # (the NAME of PREFIX:NAME, the model's settings)
AdapterLoader = Callable[[ModelConfig], Adapter]  # how a run builds its adapter (:func:`load_adapter` by default)
# prefix -> factory; the built-ins are lazy entries (their module, which may import torch or aiohttp, is
# imported when the prefix is used). Adding an adapter: docs/extending.md.
ADAPTERS: Registry[AdapterFactory] = Registry("model prefix", field="--model")
for _prefix, _target in (("openai", "openai:_factory"), ("baseline", "baselines:_factory"),
                         ("hf", "hf:make_hf_adapter"), ("vllm", "vllm:make_vllm_adapter")):
    ADAPTERS.lazy(_prefix, f"medr2.models.{_target}")
# a person answering in the browser (docs/human.md): the adapter serves the view room's reading page
ADAPTERS.lazy("human", "medr2.viewer.human:make_human_adapter")


def register_adapter(prefix: str) -> Callable[[AdapterFactory], AdapterFactory]:
    """Register ``factory(name, config) -> Adapter`` for specs ``prefix:name`` (``config``: the
    :class:`~medr2.models.config.ModelConfig`; a taken prefix is refused)."""
    return ADAPTERS.decorator(prefix)


def known_prefixes() -> list[str]:
    return sorted(ADAPTERS.names())


def load_adapter(config: ModelConfig | str) -> Adapter:
    """Build the adapter of ``config`` (a :class:`~medr2.models.config.ModelConfig`, or a bare spec
    ``PREFIX:NAME`` with the default settings): its prefix's factory receives the record itself."""
    if isinstance(config, str):
        config = ModelConfig(config)
    prefix, sep, name = config.spec.partition(":")
    if not sep or not name:
        raise BadInput(f"model spec {config.spec!r} must look like PREFIX:NAME (prefixes: "
                       f"{', '.join(known_prefixes())})", field="--model")
    return ADAPTERS.lookup(prefix)(name, config)


@runtime_checkable
class StreamingAdapter(Protocol):
    """Optional capability: answers stream out as they finish (index into ``requests``, response)."""

    def stream(self, requests: Sequence[Request]) -> Iterator[tuple[int, Response]]: ...
