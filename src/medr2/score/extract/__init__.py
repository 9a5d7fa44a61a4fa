"""Answer extraction per form (registry ``EXTRACTORS``). An extractor returns the parsed answer in the
item's answer format, or None: an answer that cannot be read is *unparsed*, never guessed."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from medr2.score.extract.choice import extract_mcq, extract_multi
from medr2.score.extract.common import strip_reasoning
from medr2.score.extract.text import extract_text
from medr2.score.extract.yesno import extract_yesno

Extractor = Callable[[str, Sequence[str]], str | None]

EXTRACTORS: dict[str, Extractor] = {
    "mcq": extract_mcq,
    "yesno": extract_yesno,
    "multi": extract_multi,
    "text": extract_text,
}


def register_extractor(form: str) -> Callable[[Extractor], Extractor]:
    def deco(fn: Extractor) -> Extractor:
        EXTRACTORS[form] = fn
        return fn

    return deco


def extract(form: str, raw: str | None, options: Sequence[str] = ()) -> str | None:
    """Parse ``raw`` for an item of ``form`` (reasoning blocks removed first). Boxes: see ``boxes``."""
    if raw is None:
        return None
    body = strip_reasoning(raw)
    if not body:
        return None
    if form == "box":
        from medr2.score.boxes import format_box, parse_box

        box = parse_box(body)
        return None if box is None else format_box(box)
    try:
        fn = EXTRACTORS[form]
    except KeyError as e:
        raise KeyError(f"no extractor for form {form!r} (known: {sorted(EXTRACTORS)})") from e
    return fn(body, options)


__all__ = ["EXTRACTORS", "extract", "extract_mcq", "extract_multi", "extract_text", "extract_yesno",
           "register_extractor", "strip_reasoning"]
