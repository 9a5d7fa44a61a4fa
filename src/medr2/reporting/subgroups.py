"""The report's subgroup and harm views, from a run's ``slices.json`` and ``harm.json`` (``medr2 score --slice``,
``--harm``; docs/metrics.md §5): per model, the harm figures beside accuracy, and per slicing a sortable table of
the slices with their intervals and ``n``, low-n slices marked, the largest gap with its Holm-adjusted test, and a
note where a demographic field is missing."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from medr2.reporting.fmt import fmt_ci, fmt_n, is_low_n, metric_parts
from medr2.reporting.inputs import RunData

HARM_KEYS = (("harm_weighted_error", "harm-weighted error"), ("high_risk_error", "high-risk error"),
             ("silent_failure", "silent failures (high risk)"), ("harm_weighted_ASR", "harm-weighted attack success"),
             ("high_risk_ASR", "attack success (high risk)"))
SLICE_KEYS = (("accuracy", "accuracy"), ("harm_weighted_error", "harm-weighted error"),
              ("high_risk_error", "high-risk error"), ("silent_failure", "silent failures"),
              ("prompt_reliance.MisleadDrop", "MisleadDrop"), ("prompt_reliance.PRI", "PRI"),
              ("visual_reliance.BlankGap", "BlankGap"))
DEMOGRAPHIC = ("sex", "age")


@dataclass(frozen=True)
class Cell:
    text: str
    n_text: str = ""
    sort: str = ""  # the value as a number for sorting ("" when undefined: sorted last)
    low_n: bool = False


def _cell(m: Any) -> Cell:
    value, _, _, n = metric_parts(m)
    cases = m.get("n_cases") if isinstance(m, dict) else None
    return Cell(fmt_ci(m, 3) + ("†" if is_low_n(m) else ""), fmt_n(n, cases if isinstance(cases, int) else None)
                if value is not None else "", "" if value is None else repr(value), is_low_n(m))


@dataclass
class HarmRow:
    run: str
    mode: str
    accuracy: Cell
    cells: list[Cell]
    confidence: str  # how silent failures were judged


@dataclass
class SliceTable:
    run: str
    mode: str
    slicing: str
    columns: list[str]
    rows: list[dict[str, Any]]  # {"label", "n_cases", "low_n", "cells": [Cell]}
    gap: str
    notes: list[str] = field(default_factory=list)


@dataclass
class SubgroupView:
    harm: list[HarmRow]
    tables: list[SliceTable]
    notes: list[str]

    @property
    def empty(self) -> bool:
        return not self.harm and not self.tables


def _confidence(m: Any) -> str:
    if not isinstance(m, dict) or m.get("value") is None:
        return ""
    known, n = m.get("confidence_known", 0), m.get("n", 0)
    if not known:
        return "no confidence known: every wrong answer counted as confident"
    return f"confidence known for {known:,} of {n:,} answers (the rest counted as confident)"


def _gap_text(gaps: dict[str, Any]) -> str:
    g = gaps.get("accuracy")
    if not isinstance(g, dict):
        return "No accuracy gap tested: fewer than two slices with enough cases."
    p, lo, hi = g.get("p_holm"), g.get("lo"), g.get("hi")
    interval = f" [{lo:+.3f}, {hi:+.3f}]" if lo is not None and hi is not None else ""
    head = f"Largest accuracy gap: {g.get('high')} − {g.get('low')} = {g.get('delta', 0):+.3f}{interval}"
    if p is None:
        return f"{head}; not tested (no bootstrap resamples)."
    verdict = "significant" if g.get("significant") else "not significant"
    return f"{head}, Holm-adjusted p = {p:.3g} ({g.get('method')}): {verdict}."


def _harm_rows(r: RunData, name: str) -> list[HarmRow]:
    out = []
    for mode, m in sorted(((r.analysis.get("harm") or {}).get("modes") or {}).items()):
        overall = ((r.metrics.get("modes") or {}).get(mode) or {}).get("overall")
        out.append(HarmRow(name, mode, _cell(overall), [_cell(m.get(k)) for k, _ in HARM_KEYS],
                           _confidence(m.get("silent_failure"))))
    return out


def _slice_row(x: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    key = x.get("key")  # {slice field: value} (``medr2 view`` opens the slice's items by it)
    return {"label": str(x.get("label")), "n_cases": int(x.get("n_cases", 0)), "low_n": bool(x.get("low_n")),
            "key": {str(k): str(v) for k, v in key.items()} if isinstance(key, dict) else {},
            "cells": [_cell(x.get("metrics", {}).get(k)) for k in keys]}


def _slice_tables(r: RunData, name: str) -> list[SliceTable]:
    s = r.analysis.get("slices") or {}
    out = []
    for mode, by in sorted((s.get("modes") or {}).items()):
        for slicing, t in by.items():
            slices = t.get("slices", [])
            keys = [k for k, _ in SLICE_KEYS if any(k in x.get("metrics", {}) for x in slices)]
            rows = [_slice_row(x, keys) for x in slices]
            low = sum(row["low_n"] for row in rows)
            notes = [f"{low} slice{'s' if low != 1 else ''} from fewer than {s.get('min_cases')} cases (marked low n) "
                     "are shown but never ranked or tested."] if low else []
            out.append(SliceTable(name, mode, slicing, [dict(SLICE_KEYS)[k] for k in keys], rows,
                                  _gap_text(t.get("gaps") or {}), notes))
    return out


def _missing_notes(r: RunData, name: str) -> list[str]:
    missing = (r.analysis.get("slices") or {}).get("missing") or {}
    return [f"{name}: {'demographics missing' if f in DEMOGRAPHIC else 'field missing'} — {note}."
            for f, note in sorted(missing.items())]


def subgroup_view(runs: list[RunData], short: dict[str, str]) -> SubgroupView:
    """The harm rows, slice tables and missing-field notes of the runs (names as the leaderboard shows them)."""
    view = SubgroupView([], [], [])
    for r in runs:
        name = short.get(r.label, r.label)
        view.harm += _harm_rows(r, name)
        view.tables += _slice_tables(r, name)
        view.notes += _missing_notes(r, name)
    return view
