"""Formatting of metric values: ``0.62 [0.55, 0.69]``."""

from __future__ import annotations

import math
import re
from typing import Any

MISSING = "n/a"


def metric_parts(m: Any) -> tuple[float | None, float | None, float | None, int | None]:
    """``(value, lo, hi, n)`` of a metric dict (``{"value", "lo", "hi", "n", ...}``); Nones where absent."""
    if not isinstance(m, dict):
        return None, None, None, None
    return _num(m.get("value")), _num(m.get("lo")), _num(m.get("hi")), _int(m.get("n"))


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def _int(v: Any) -> int | None:
    return int(v) if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) else None


def fmt_num(v: float | None, digits: int = 2) -> str:
    if v is None:
        return MISSING
    s = f"{v:.{digits}f}"
    return "0." + "0" * digits if s == "-0." + "0" * digits else s


def fmt_ci(m: Any, digits: int = 2) -> str:
    """``"0.62 [0.55, 0.69]"``; the value alone when no interval; ``"n/a"`` when undefined."""
    value, lo, hi, _ = metric_parts(m)
    if value is None:
        return MISSING
    if lo is None or hi is None:
        return fmt_num(value, digits)
    return f"{fmt_num(value, digits)} [{fmt_num(lo, digits)}, {fmt_num(hi, digits)}]"


def fmt_n(n: int | None, n_cases: int | None) -> str:
    """``"n=120, 30 cases"`` (what a value is computed from); ``""`` when unknown."""
    if n is None:
        return ""
    return f"n={n:,}" + (f", {n_cases:,} case{'s' if n_cases != 1 else ''}" if n_cases is not None else "")


LOW_N_CASES = 10  # a value from fewer cases is marked (its interval is unreliable)


def is_low_n(m: Any) -> bool:
    """The metric's ``low_n`` flag; where a metric has none, fewer than ``LOW_N_CASES`` cases."""
    if not isinstance(m, dict) or metric_parts(m)[0] is None:
        return False
    if "low_n" in m:
        return bool(m["low_n"])
    cases = m.get("n_cases")
    return isinstance(cases, int) and cases < LOW_N_CASES


def fmt_value_n(m: Any, digits: int = 2) -> str:
    """``"0.62 [0.55, 0.69] (n=120, 30 cases)"``, with ``†`` after the interval when from fewer than 10 cases."""
    text = fmt_ci(m, digits) + ("†" if is_low_n(m) else "")
    value, _, _, n = metric_parts(m)
    cases = m.get("n_cases") if isinstance(m, dict) and isinstance(m.get("n_cases"), int) else None
    n_text = fmt_n(n, cases) if value is not None else ""
    return f"{text} ({n_text})" if n_text else text


# bidirectional formatting characters: they reorder what follows them on screen (U+202E makes "exe.txt" read
# "txt.exe"); every report output (HTML, leaderboard.md, leaderboard.csv) shows them as ``⟦U+202E⟧``
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# line breaks and other control characters: a bare CR or a U+2028 starts a new row or line in a table cell
_BREAKS = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")  # a tab stays (the CSV guard quotes it)


def visible_bidi(text: str) -> str:
    """``text`` with every bidi control character shown as ``⟦U+202E⟧`` (no reordering on screen)."""
    return _BIDI.sub(lambda m: f"\u27e6U+{ord(m.group()):04X}\u27e7", text)


def cell_text(text: str) -> str:
    """A text from data as one table cell of ``leaderboard.md`` / ``leaderboard.csv``: bidi controls visible,
    line breaks and control characters but tab (bare CR included) as spaces."""
    return _BREAKS.sub(" ", visible_bidi(text))
