"""Command-line style settings parsed into values: ``KEY=VALUE`` adapter settings (``--model-option``),
format options (``--option``) and repeatable comma lists (``--mode a,b --mode c``). Light: no heavy imports."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from medr2.errors import BadInput


def split_list(values: Iterable[str] | str | None) -> tuple[str, ...]:
    """``["a,b", "c"]`` (or ``"a,b"``) -> ``("a", "b", "c")``; blanks dropped."""
    if values is None:
        return ()
    if isinstance(values, str):
        values = [values]
    out: list[str] = []
    for v in values:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return tuple(out)


def parse_model_options(values: Iterable[str] | Mapping[str, Any] | None) -> dict[str, Any]:
    """``KEY=VALUE`` pairs for the adapter's ``extra`` (:func:`medr2.models.config.parse_model_options`: a VALUE
    that is JSON is taken as such, anything else as a string). A mapping is taken as it is."""
    if isinstance(values, Mapping):
        return dict(values)
    from medr2.models.config import parse_model_options as parse

    return parse(list(values) if values is not None else None)


def parse_format_options(values: Iterable[str] | Mapping[str, str] | None) -> dict[str, str]:
    """``KEY=VALUE`` pairs of an import format's ``--option`` (strings, stripped). A mapping is taken as it is."""
    if isinstance(values, Mapping):
        return {str(k): str(v) for k, v in values.items()}
    out = {}
    for p in values or []:
        k, sep, v = p.partition("=")
        if not sep or not k:
            raise BadInput(f"expected KEY=VALUE, got {p!r}", field="--option")
        out[k.strip()] = v.strip()
    return out
