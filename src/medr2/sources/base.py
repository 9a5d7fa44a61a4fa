"""The source contract: a source turns data into Cases in two steps.

``plan(seed, n)`` is cheap and returns picklable case specs, in a deterministic order;
``realize(spec, images)`` does the heavy work (decode, render, write PNGs through the
content-addressed ImageStore) and returns a Case, or raises :class:`medr2.errors.BadInput`
naming the file, record and field, which the builder quarantines. Workers call ``realize``
in parallel; the builder keeps the order of ``plan``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from medr2.images import ImageStore
from medr2.records import Case


class Source(Protocol):
    name: str

    def plan(self, seed: int, n: int | None) -> Sequence[Any]: ...

    def realize(self, spec: Any, images: ImageStore) -> Case: ...


# name -> factory(argument after "NAME:" or None) -> Source
SOURCES: dict[str, Callable[[str | None], Source]] = {}


def register_source(name: str) -> Callable[[Callable[[str | None], Source]], Callable[[str | None], Source]]:
    def deco(factory: Callable[[str | None], Source]) -> Callable[[str | None], Source]:
        SOURCES[name] = factory
        return factory

    return deco


def get_source(spec: str) -> Source:
    """``"sample"`` or ``"folder:/path/to/data"`` -> a Source."""
    from medr2.errors import BadInput
    from medr2.sources import load_builtin_sources

    load_builtin_sources()
    name, _, arg = spec.partition(":")
    if name not in SOURCES:
        raise BadInput(f"unknown source {name!r}; known: {', '.join(sorted(SOURCES))}", field="--source")
    return SOURCES[name](arg or None)
