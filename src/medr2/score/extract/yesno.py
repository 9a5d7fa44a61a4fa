"""Yes/no extraction: whole words only ('No' in 'Nodule' or 'Normal' is not an answer)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from medr2.score.extract.common import answer_segments, clean_markdown, strip_hedge

# "No" is an answer only when punctuation or a new clause follows ("No abnormality" is a noun phrase).
_WORD = re.compile(
    r"^\s*[\"'(\[]?\s*(yes|true|false|no(?=\s*(?:[,.!;:)\]\"'–—-]|$)|\s+(?:it|there|the|this|that|I|we|they)\b))"
    r"\b(?![-'])",
    re.I,
)
_SENTENCE = re.compile(r"(?:^|[.!?;]\s+|\n\s*)[\"'(\[]?(yes|no)[\"')\]]?\s*[.!]?\s*(?=\n|$)", re.I)
_ANYWHERE = re.compile(r"\b(yes|no)\b(?=\s*(?:[,.!;:)\]\"'–—-]|$))", re.I)
_MAP = {"yes": "yes", "no": "no", "true": "yes", "false": "no"}


def _word(segment: str) -> str | None:
    m = _WORD.match(strip_hedge(segment))
    return _MAP[m.group(1).lower()] if m else None


def extract_yesno(text: str, options: Sequence[str] = ()) -> str | None:
    """'yes' or 'no', or None when the text does not state one answer."""
    body = clean_markdown(text).strip()
    if not body:
        return None
    explicit = [w for seg in answer_segments(body) if (w := _word(seg.text)) is not None]
    if not explicit and options:
        from medr2.score.extract.choice import extract_mcq

        letter = extract_mcq(body, options)
        if letter is not None:
            return _word(options[ord(letter) - ord("A")])
    if explicit:
        return explicit[-1]
    lead = _word(body)
    stated = {lead} if lead is not None else set()
    stated |= {m.group(1).lower() for m in _SENTENCE.finditer(body)}
    if not stated:
        return None
    # any other answer-like yes/no in the text ("Yes and no", "No, but actually yes") makes it ambiguous
    anywhere = {w.lower() for w in _ANYWHERE.findall(body)}
    if len(stated) == 1 and anywhere <= stated:
        return stated.pop()
    return None
