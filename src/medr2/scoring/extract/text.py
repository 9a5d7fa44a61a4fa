"""Free text: the answer is the response itself, minus reasoning blocks; empty means unparsed."""

from __future__ import annotations

from collections.abc import Sequence


def extract_text(text: str, options: Sequence[str] = ()) -> str | None:
    body = text.strip()
    return body or None
