"""Formatting of metric values: ``0.62 [0.55, 0.69]``."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
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


def scope_text(metrics: Mapping[str, Any]) -> str:
    """What a run's numbers are computed over, as every table of the report and ``medr2 score``'s summary say it:
    the split(s) scored (``metrics.json`` ``run.splits``) and the unit the 95% intervals resample, with how many
    (``bootstrap.unit``, ``n_units``): ``"test split · bootstrap over 35 patients"``. What ``metrics.json`` does
    not record is said to be not recorded (a file scored before it was)."""
    run = metrics.get("run")
    splits = run.get("splits") if isinstance(run, dict) else None
    if isinstance(splits, dict) and splits:
        split = "+".join(str(s) for s in splits) + (" splits (mixed)" if len(splits) > 1 else " split")
    else:
        split = "split not recorded"
    boot = metrics.get("bootstrap")
    boot = boot if isinstance(boot, dict) else {}
    unit, n_units = boot.get("unit"), _int(boot.get("n_units"))
    if boot.get("n_resamples") == 0:
        resampled = "no intervals (0 bootstrap resamples)"
    elif unit in ("patient", "case") and n_units is not None:
        resampled = f"bootstrap over {n_units:,} {unit}{'s' if n_units != 1 else ''}"
    else:
        resampled = "bootstrap unit not recorded"
    return f"{split} · {resampled}"


@dataclass(frozen=True)
class Scopes:
    """:func:`scope_text` of each run, by the name a table shows it under: ``of(run)`` for a table of one run,
    ``of()`` for a table of several (one text where they agree, else each run's)."""

    by_run: Mapping[str, str]

    @classmethod
    def of_runs(cls, runs: Mapping[str, Mapping[str, Any]]) -> Scopes:
        """From each run's name and its ``metrics.json``."""
        return cls({name: scope_text(m) for name, m in runs.items()})

    def of(self, run: str | None = None) -> str:
        if run is not None and run in self.by_run:
            return self.by_run[run]
        texts = list(dict.fromkeys(self.by_run.values()))
        if len(texts) == 1:
            return texts[0]
        return "; ".join(f"{name}: {text}" for name, text in self.by_run.items()) or scope_text({})


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
