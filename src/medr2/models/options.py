"""Command-line style settings parsed into values: ``KEY=VALUE`` adapter settings (``--model-option``),
format options (``--option``) and repeatable comma lists (``--mode a,b --mode c``). Light: no heavy imports."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from medr2 import jsonsafe
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
    """``KEY=VALUE`` pairs for the adapter's ``extra``: a VALUE that is JSON (a number, true/false, null, a list)
    is taken as such, anything else as a string. A mapping is taken as it is."""
    if isinstance(values, Mapping):
        return dict(values)
    out: dict[str, Any] = {}
    for v in values or []:
        key, sep, raw = v.partition("=")
        if not sep or not key.strip():
            raise BadInput(f"expected KEY=VALUE, got {v!r}", field="--model-option")
        try:
            out[key.strip()] = jsonsafe.loads(raw, field=f"--model-option {key.strip()}")
        except jsonsafe.OverBound:
            raise
        except BadInput:  # not JSON: the text itself
            out[key.strip()] = raw
    return out


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
