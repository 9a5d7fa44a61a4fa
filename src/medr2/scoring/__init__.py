"""Scoring (docs/metrics.md): answer extraction, metrics, statistics, the ``score`` command."""

from __future__ import annotations

from typing import Any

__all__ = ["compute_metrics", "confusion_matrix", "compare_runs", "extract", "load_table", "score_items",
           "score_run", "build_table"]


def __getattr__(name: str) -> Any:  # lazy: pandas/scipy load only when needed
    if name in ("score_items", "score_run", "load_table"):
        from medr2.scoring import scorer

        return getattr(scorer, name)
    if name in ("compute_metrics", "confusion_matrix", "compare_runs"):
        from medr2.scoring import metrics

        return getattr(metrics, name)
    if name == "build_table":
        from medr2.scoring.table import build_table

        return build_table
    if name == "extract":
        from medr2.scoring.extract import extract

        return extract
    raise AttributeError(name)
