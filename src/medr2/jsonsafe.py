"""The one JSON reader (docs/reliability.md): every JSON medr2 reads — files, cells, response bodies,
command-line values — goes through :func:`loads` / :func:`load_file` / :func:`load_lines`, bounded in
depth (:data:`MAX_DEPTH`), size (:data:`MAX_BYTES`) and integer digits (:data:`MAX_INT_DIGITS`). A hostile
document is refused with a :class:`~medr2.errors.BadInput` naming file, record and field, never a
``RecursionError`` (from the decoder, or later from code walking the value), an ``OverflowError`` (an integer
of a thousand digits turned into a float) or an exhausted memory.

Every value medr2 reads (label tables, findings cells, embedded ``medr2_item`` records, manifests) is at
most a few levels deep; :data:`MAX_DEPTH` leaves ample room. ``tests/test_reliability_jsonsafe.py`` walks
``src/medr2`` and fails on any other ``json.load``/``json.loads``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from medr2 import textfile
from medr2.errors import BadInput

MAX_DEPTH = 64  # nesting levels of lists/objects accepted in any JSON medr2 reads
MAX_BYTES = 256 << 20  # a JSON document larger than this is refused before it is read (default of every reader)
MAX_INT_DIGITS = 40  # an integer literal longer than this is refused (10**40 is beyond any count or coordinate)


class _TooManyDigits(ValueError):
    pass


def _int(text: str) -> int:
    if len(text.lstrip("+-")) > MAX_INT_DIGITS:  # the digits, a sign not counted (41 unsigned digits were read)
        raise _TooManyDigits(text)
    return int(text)


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


# JSON beyond what medr2 reads (too deep, too large, an integer of too many digits): refused even where text
# that is not JSON at all would be taken as a plain string (``--model-option``). The text decoder's class: a file
# too large to read is the same refusal.
OverBound = textfile.OverBound


def _too_deep(where: dict[str, str | None]) -> BadInput:
    return OverBound(f"JSON nested more than {MAX_DEPTH} levels deep", **where)


def _opened_past_bound(doc: str, end: int) -> bool:
    """Whether ``doc[:end]`` (JSON text up to where decoding failed) nests lists/objects more than
    :data:`MAX_DEPTH` levels deep, brackets inside strings not counted (walked only past the bound's count)."""
    if doc.count("[", 0, end) + doc.count("{", 0, end) <= MAX_DEPTH:
        return False
    depth, in_string, escaped = 0, False, False
    for ch in doc[:end]:
        if escaped:
            escaped = False
        elif in_string:
            escaped, in_string = ch == "\\", ch != '"'
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif ch in "]}":
            depth -= 1
    return False


def loads(text: str | bytes | bytearray, *, file: str | None = None, record: str | None = None,
          field: str | None = None, max_bytes: int | None = MAX_BYTES) -> Any:
    """``json.loads`` that raises only BadInput: invalid JSON, longer than ``max_bytes`` (None: the caller
    bounded it already), nesting deeper than :data:`MAX_DEPTH`, an integer of more than
    :data:`MAX_INT_DIGITS` digits."""
    where: dict[str, str | None] = {"file": file, "record": record, "field": field}
    if not isinstance(text, str | bytes | bytearray):
        raise BadInput(f"expected JSON text, got {type(text).__name__}", **where)
    if max_bytes is not None and len(text) > max_bytes:
        raise OverBound(f"JSON of {len(text):,} characters is larger than the {max_bytes:,} medr2 reads", **where)
    try:
        value = json.loads(text, parse_int=_int)
    except RecursionError:
        raise _too_deep(where) from None
    except _TooManyDigits as e:
        raise OverBound(f"an integer of {len(str(e))} digits (at most {MAX_INT_DIGITS} are read)", **where) from None
    except json.JSONDecodeError as e:
        if _opened_past_bound(e.doc, e.pos):  # an unterminated nest past the bound is over-deep, not just invalid
            raise _too_deep(where) from None
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


def read_text(path: str | Path, *, max_bytes: int | None = MAX_BYTES, what: str = "file") -> str:
    """The text of ``path`` through the one text decoder (:func:`medr2.textfile.read_text`: UTF-8, size checked
    before reading; BadInput naming the file otherwise)."""
    return textfile.read_text(path, max_bytes=max_bytes, what=what)


def load_file(path: str | Path, *, record: str | None = None, field: str | None = None,
              max_bytes: int | None = MAX_BYTES) -> Any:
    """The JSON value in file ``path``, read through :func:`read_text` and :func:`loads`."""
    return loads(read_text(path, max_bytes=max_bytes, what="JSON file"), file=str(path), record=record,
                 field=field, max_bytes=None)


def load_object(path: str | Path, *, max_bytes: int | None = MAX_BYTES) -> dict[str, Any]:
    """:func:`load_file` of a file that must hold a JSON object."""
    value = load_file(path, max_bytes=max_bytes)
    if not isinstance(value, dict):
        raise BadInput(f"expected a JSON object, got {type(value).__name__}", file=str(path))
    return value


def load_lines(path: str | Path, *, max_bytes: int | None = MAX_BYTES) -> list[Any]:
    """The values of a JSON Lines file (blank lines skipped); a bad line is BadInput naming its number."""
    text = read_text(path, max_bytes=max_bytes, what="JSON Lines file")
    return [loads(line, file=str(path), record=f"line {n}", max_bytes=None)
            for n, line in enumerate(text.splitlines(), 1) if line.strip()]
