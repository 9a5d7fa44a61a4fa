"""Single-choice (MCQ) and multi-select extraction: letters or option texts, never a guess."""

from __future__ import annotations

import re
from collections.abc import Sequence

from medr2.score.extract.common import (
    answer_segments,
    clean_markdown,
    is_negated,
    normalize_words,
    strip_hedge,
)

AMBIGUOUS = "ambiguous"

_LETTER_AT = r"[(\[]?\s*([A-Z])\s*[)\]]?"
_END_AFTER_LETTER = r"(?=$|[\s.,:;!?)\]]|-|–)"
_LEAD_LETTER = re.compile(r"^\s*" + _LETTER_AT + _END_AFTER_LETTER)
_LEAD_LOWER = re.compile(r"^\s*(?:\(([a-z])\)|([a-z])\)|([a-z])\s*[.]?\s*$)")
_MORE_LETTERS = re.compile(r"^\s*[)\]]?\s*(?:,|/|\bor\b|\band\b|&)\s*[(\[]?\s*[A-Z](?=$|[\s.,:;!?)\]])")
_LETTER_THEN_VERDICT = re.compile(
    r"(?:\b(?i:option|choice|answer)\s+)?[(\[]?\b([A-Z])\b[)\]]?(?:\s*\([^)]{0,60}\))?\s+"
    r"(?i:is\s+(?:the\s+)?(?:correct|right|best|most\s+(?:likely|appropriate|consistent|accurate))"
    r"|fits\s+best|is\s+the\s+(?:answer|best\s+(?:fit|match|choice|option)))"
)
_BARE_MENTION = re.compile(r"\(([A-Z])\)|(?<![\w(])([A-Z])\)|\b(?i:option|choice)\s+([A-Z])\b")
_SENTENCE_LETTER = re.compile(r"(?:^|[.!?:]\s+|\n\s*)[(\[]?([A-Z])[)\]]?\s*[.!]?\s*(?=\n|$)")


# after "A", these words mean the letter was an answer ("A because ..."), not the article ("A mass ...")
_CONNECTIVE = re.compile(r"^ (?:because|since|as|given|based|due|which|with|from|for|and|or|but|is|was|would|seems"
                         r"|appears|fits|here|then|again)\b")
_ANY_LETTER = re.compile(r"(?<![\w'])[(\[]?([A-Z])[)\]]?(?![\w'])")


def _rejected_letters(text: str, n: int) -> set[int]:
    """Options rejected by letter anywhere in the text ("A is incorrect", "rule out C")."""
    out = set()
    for m in _ANY_LETTER.finditer(text):
        if _valid(m.group(1), n) and is_negated(text, m.start(), m.end()):
            out.add(ord(m.group(1)) - ord("A"))
    return out


def _valid(letter: str, n_options: int) -> bool:
    return 0 <= ord(letter) - ord("A") < n_options


def _option_spans(text: str, options: Sequence[str]) -> list[tuple[int, int, int]]:
    """Non-overlapping (start, end, option index) mentions of option texts, longest options first."""
    norm_opts = [(i, normalize_words(o)) for i, o in enumerate(options)]
    norm_opts = [(i, o) for i, o in norm_opts if o]
    norm_opts.sort(key=lambda io: -len(io[1]))
    taken: list[tuple[int, int, int]] = []
    low = text.lower()
    for i, opt in norm_opts:
        words = [re.escape(w) for w in opt.split()]
        pat = re.compile(r"(?<![\w-])" + r"[\s\W]+".join(words) + r"(?![\w-])")
        for m in pat.finditer(low):
            if any(not (m.end() <= s or m.start() >= e) for s, e, _ in taken):
                continue
            taken.append((m.start(), m.end(), i))
    return sorted(taken)


def _lead_option(segment: str, options: Sequence[str]) -> int | None | str:
    """An option whose text starts the segment; AMBIGUOUS if another option follows with 'or'."""
    seg = strip_hedge(segment)
    spans = _option_spans(seg, options)
    if not spans:
        return None
    first = spans[0]
    if seg[: first[0]].strip(" \t\"'([:").strip():
        return None
    rest = seg[first[1]:]
    if any(re.match(r"^\W*\b(?:or|and)\b", rest[: s - first[1]]) for s, _, i in spans[1:] if i != first[2]):
        return AMBIGUOUS
    return first[2]


def _lead_letter(segment: str, n_options: int, options: Sequence[str]) -> str | None:
    """A letter (or option text) at the start of an answer segment; AMBIGUOUS for 'B or C'."""
    seg = strip_hedge(segment)
    if re.match(r"^\s*(?i:not|neither|none\s+of\s+(?:them|these))\b", seg) and not any(
        normalize_words(seg).startswith(normalize_words(o)) for o in options if o
    ):
        return None
    m = _LEAD_LETTER.match(seg)
    if m and (seg[m.end(): m.end() + 1] in ("", " ", ".", ",", ":", ";", "!", "?", ")", "]", "\n", "-", "–")):
        ch = m.group(1)
        # "A mass ..." is an article, not option A: a bare capital followed by a lower-case word.
        after = seg[m.end():]
        article = (ch in ("A", "I") and not m.group(0).strip().startswith(("(", "[")) and re.match(r"^ [a-z]", after)
                   and not m.group(0).rstrip().endswith((")", "]")) and not _CONNECTIVE.match(after))
        if not article:
            if is_negated(seg, m.start(1), m.end(1)):
                return None
            if _MORE_LETTERS.match(after):
                return AMBIGUOUS
            return ch if _valid(ch, n_options) else AMBIGUOUS
    lm = _LEAD_LOWER.match(seg)
    if lm:
        ch = next(g for g in lm.groups() if g).upper()
        return ch if _valid(ch, n_options) else AMBIGUOUS
    opt = _lead_option(seg, options)
    if opt == AMBIGUOUS:
        return AMBIGUOUS
    if isinstance(opt, int):
        return chr(ord("A") + opt)
    return None


def extract_mcq(text: str, options: Sequence[str]) -> str | None:
    """The chosen option letter, or None when no single answer can be read."""
    n = len(options)
    body = clean_markdown(text).strip()
    if not body:
        return None
    explicit: list[tuple[int, str]] = []
    for seg in answer_segments(body):
        got = _lead_letter(seg.text, n, options)
        if got is not None:
            explicit.append((seg.start, got))
    for m in _LETTER_THEN_VERDICT.finditer(body):
        if not is_negated(body, m.start(1), m.end(1)):
            explicit.append((m.start(), m.group(1) if _valid(m.group(1), n) else AMBIGUOUS))
    if explicit:
        got = max(explicit)[1]
        return None if got == AMBIGUOUS else got
    lead = _lead_letter(body, n, ())
    if lead is not None:
        return None if lead == AMBIGUOUS else lead
    letters = {m.group(1) for m in _SENTENCE_LETTER.finditer(body) if _valid(m.group(1), n)}
    if len(letters) == 1:
        return letters.pop()
    if len(letters) > 1:
        return None
    whole = normalize_words(body)
    for i, o in enumerate(options):
        if whole and whole == normalize_words(o):
            return chr(ord("A") + i)
    spans = _option_spans(body, options)
    rejected = _rejected_letters(body, n) | {i for s, e, i in spans if is_negated(body, s, e)}
    mentioned = {i for s, e, i in spans if not is_negated(body, s, e)}
    bare = set()
    for m in _BARE_MENTION.finditer(body):
        ch = next(g for g in m.groups() if g)
        if _valid(ch, n) and not is_negated(body, m.start(), m.end()):
            bare.add(ord(ch) - ord("A"))
    chosen = (mentioned | bare) - rejected
    if len(chosen) == 1:
        return chr(ord("A") + chosen.pop())
    return None


_LETTER_LIST = re.compile(
    r"^\s*[(\[]?\s*([A-Z])\s*[)\]]?((?:\s*(?:,|;|/|&|\band\b|\s)\s*(?:\band\b\s*)?[(\[]?\s*[A-Z]\s*[)\]]?"
    r"(?=$|[\s.,;:/&)\]]))*)"
)
_NONE_SELECTED = re.compile(r"^\s*(?i:none\b(?!\s+of\s+the\s+above\b)|no\s+(?:option|finding|choice)s?\b)")


def _letter_list(segment: str, n: int) -> list[str] | None | str:
    seg = strip_hedge(segment)
    if _NONE_SELECTED.match(seg):
        return []
    m = _LETTER_LIST.match(seg)
    if not m:
        return None
    letters = [m.group(1), *re.findall(r"[A-Z]", m.group(2))]
    after = seg[m.end(): m.end() + 1]
    if after and after not in " .,;:!?)\n":
        return None
    if len(letters) == 1 and letters[0] in ("A", "I") and re.match(r"^ [a-z]", seg[m.end():]):
        return None  # an article
    if any(not _valid(c, n) for c in letters):
        return AMBIGUOUS
    return letters


def _option_set(segment: str, options: Sequence[str]) -> list[str] | None:
    spans = [(s, e, i) for s, e, i in _option_spans(segment, options) if not is_negated(segment, s, e)]
    if not spans:
        return None
    return [chr(ord("A") + i) for _, _, i in spans]


def extract_multi(text: str, options: Sequence[str]) -> str | None:
    """The selected letters, sorted and joined by ',' ('' for an explicit 'none'); None if unreadable."""
    n = len(options)
    body = clean_markdown(text).strip()
    if not body:
        return None
    found: list[str] | None | str = None
    segs = answer_segments(body)
    for seg in reversed(segs):
        found = _letter_list(seg.text, n)
        if found is None:
            found = _option_set(seg.text, options)
        if found is not None:
            break
    if found is None:
        found = _letter_list(body, n)
    if found is None and not segs:
        found = _option_set(body, options)
    if found is None or found == AMBIGUOUS:
        return None
    return ",".join(sorted(set(found)))
