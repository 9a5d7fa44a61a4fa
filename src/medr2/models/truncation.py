"""Answers cut off by the token limit, and the bound on how much of an answer a reader scans.

``truncated`` is its own verdict (counted wrong in accuracy, reported as its own rate): the answer stopped
because the token limit was reached (``finish_reason == "length"``), or its content opens a reasoning block
(``<think>``, ``<thinking>``, ``<reasoning>``, Kimi's ``◁think▷``) that is never closed. Such an answer is
never read: what the model would have concluded is unknown. The fix is a larger ``--max-new-tokens`` (or a
reasoning preset, or a thinking budget: docs/models.md).

A stored answer is kept whole; the extractors read at most :data:`SCAN_CHARS` characters of it
(:func:`scan_text`), so a hostile 50 MB answer costs milliseconds, not seconds.
"""

from __future__ import annotations

import re

LENGTH_FINISH = frozenset({"length", "max_tokens", "MAX_TOKENS"})  # OpenAI/vLLM/SGLang; Anthropic; Gemini
SCAN_CHARS = 32_768
TRUNCATED_HINT = ("answers cut off by the token limit are scored 'truncated' (counted wrong): raise "
                  "--max-new-tokens, or cap the thinking (--model-option thinking_token_budget=N / reasoning_effort)")

_TAGS = r"think|thinking|reasoning|reflection|analysis"
_OPEN = re.compile(rf"<(?:{_TAGS})\b[^>]*>|◁think▷", re.I)
_CLOSE = re.compile(rf"</(?:{_TAGS})\s*>|◁/think▷", re.I)


def _last(raw: str, pattern: re.Pattern[str]) -> re.Match[str] | None:
    """The last match of a tag ``pattern`` in ``raw``, found backwards from each ``<`` / ``◁`` with
    ``str.rfind`` (C speed), so a 50 MB answer is not scanned by the regex engine."""
    best: re.Match[str] | None = None
    for lead in ("<", "◁"):
        end = len(raw)
        while (i := raw.rfind(lead, 0, end)) >= 0:
            m = pattern.match(raw, i)
            if m is not None:
                if best is None or m.start() > best.start():
                    best = m
                break
            end = i
    return best


def unfinished_reasoning(raw: str) -> bool:
    """True if the last reasoning block opened in ``raw`` is never closed."""
    if "<" not in raw and "◁" not in raw:
        return False
    last_open = _last(raw, _OPEN)
    if last_open is None:
        return False
    last_close = _last(raw, _CLOSE)
    return last_close is None or last_close.start() < last_open.start()


def is_truncated(raw: str | None, finish_reason: str | None) -> bool:
    """An ok answer cut off by the token limit (see the module docstring)."""
    if finish_reason in LENGTH_FINISH:
        return True
    return raw is not None and unfinished_reasoning(raw)


def scan_text(raw: str, limit: int = SCAN_CHARS) -> str:
    """What the extractors read of ``raw``: all of it up to ``limit`` characters; of a longer answer, the part
    after its last closed reasoning block, and of that, if still longer, the first and last ``limit // 2``
    characters (an answer is stated at the start or at the end)."""
    if len(raw) <= limit:
        return raw
    last_close = _last(raw, _CLOSE)
    if last_close is not None:
        raw = raw[last_close.end():]
        if len(raw) <= limit:
            return raw
    half = limit // 2
    return raw[:half] + "\n\n" + raw[-half:]
