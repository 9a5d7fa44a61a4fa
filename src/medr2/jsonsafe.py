"""JSON read from files and cells, bounded: a hostile document nested thousands of levels deep is refused
with a :class:`~medr2.errors.BadInput` naming file, record and field, never a ``RecursionError`` (from the
decoder, or later from code walking the value).

Every value medr2 reads (label tables, findings cells, embedded ``medr2_item`` records, manifests) is at
most a few levels deep; :data:`MAX_DEPTH` leaves ample room.
"""

from __future__ import annotations

import json
from typing import Any

from medr2.errors import BadInput

MAX_DEPTH = 64  # nesting levels of lists/objects accepted in any JSON medr2 reads


def json_depth(value: Any) -> int:
    """Nesting depth of lists/dicts in ``value`` (0 for a scalar), computed without recursion."""
    depth = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            v = list(v.values())
        elif not isinstance(v, list | tuple):
            continue
        depth = max(depth, d + 1)
        if depth > MAX_DEPTH:
            return depth
        stack.extend((x, d + 1) for x in v)
    return depth


def _too_deep(where: dict[str, str | None]) -> BadInput:
    return BadInput(f"JSON nested more than {MAX_DEPTH} levels deep", **where)


def loads(text: str | bytes | bytearray, *, file: str | None = None, record: str | None = None,
          field: str | None = None) -> Any:
    """``json.loads`` that raises only BadInput (invalid JSON, or nesting deeper than :data:`MAX_DEPTH`).

    A string holding ``[`` thousands of times is refused before decoding (the decoder would recurse)."""
    where: dict[str, str | None] = {"file": file, "record": record, "field": field}
    if not isinstance(text, str | bytes | bytearray):
        raise BadInput(f"expected JSON text, got {type(text).__name__}", **where)
    try:
        value = json.loads(text)
    except RecursionError:
        raise _too_deep(where) from None
    except json.JSONDecodeError as e:
        raise BadInput(f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}", **where) from None
    except (UnicodeDecodeError, ValueError) as e:
        raise BadInput(f"invalid JSON: {e}", **where) from None
    opening = text.count("[") + text.count("{") if isinstance(text, str) else text.count(b"[") + text.count(b"{")
    if opening > MAX_DEPTH:  # only then can it nest too deep (C-speed count: the common case costs ~nothing)
        check_depth(value, file=file, record=record, field=field)
    return value


def check_depth(value: Any, *, file: str | None = None, record: str | None = None, field: str | None = None) -> Any:
    """``value`` itself if it nests at most :data:`MAX_DEPTH` levels, else BadInput."""
    if json_depth(value) > MAX_DEPTH:
        raise _too_deep({"file": file, "record": record, "field": field})
    return value
