"""The tidy table of scored rows that every metric reads: one row per (item, mode), item fields joined."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from medr2.records import Item, Score
from medr2.score.extract.common import normalize_words

# answer-preserving variant codes (DESIGN §6 flip rate); V8 counts at its lowest severity only
PRESERVING_CODES = frozenset({"T5", "T6", "V8", "V9"})


def answer_key(item: Item, value: str | None) -> str | None:
    """A comparable key of an answer in the item's format: option *text* for MCQ and multi-select
    (so permuted options compare equal), 'yes'/'no', the box string, or normalised text."""
    if value is None:
        return None
    if item.form == "mcq":
        v = value.strip()
        if len(v) == 1 and v.isalpha() and v.isupper() and 0 <= ord(v) - 65 < len(item.options):
            return normalize_words(item.options[ord(v) - 65])
        return normalize_words(v)
    if item.form == "multi":
        letters = [p.strip() for p in value.split(",") if p.strip()]
        keys = [normalize_words(item.options[ord(c) - 65]) if len(c) == 1 and 0 <= ord(c) - 65 < len(item.options)
                else normalize_words(c) for c in letters]
        return "|".join(sorted(keys))
    if item.form in ("yesno", "box"):
        return value.strip().lower()
    return normalize_words(value)


def _severity(variant: str) -> int | None:
    last = variant.rsplit("-", 1)[-1]
    return int(last) if "-" in variant and last.isdigit() else None


def build_table(items: Mapping[str, Item], scores: Iterable[Score]) -> pd.DataFrame:
    """Join scores with their items. Rows whose item is unknown are skipped by the caller (scorer)."""
    recs: list[dict[str, Any]] = []
    for s in scores:
        it = items[s.item_id]
        code = it.variant.split("-", 1)[0]
        sev = _severity(it.variant)
        recs.append({
            "item_id": s.item_id, "case_id": it.case_id, "model_key": s.model_key, "mode": s.mode,
            "task": it.task, "stage": int(it.stage), "form": it.form, "variant": it.variant, "code": code,
            "severity": sev, "parent_id": it.parent_id, "pair_id": it.pair_id, "chain_id": it.chain_id,
            "step": it.step, "split": it.split, "verdict": s.verdict, "parsed": s.parsed, "method": s.method,
            "iou": s.iou, "text_metrics": s.text_metrics, "chance": float(it.chance),
            "probe": it.meta.get("scoring") == "probe",
            "preserving": bool(it.meta.get("answer_preserving", code in ("T5", "T6"))) and code in PRESERVING_CODES,
            "gold_key": answer_key(it, it.answer) if it.form != "box" else None,
            "parsed_key": answer_key(it, s.parsed) if s.verdict in ("correct", "wrong") else None,
            "lure_key": answer_key(it, it.lure) if it.lure else None,
            "answer": it.answer,
        })
    cols = ["item_id", "case_id", "model_key", "mode", "task", "stage", "form", "variant", "code", "severity",
            "parent_id", "pair_id", "chain_id", "step", "split", "verdict", "parsed", "method", "iou",
            "text_metrics", "chance", "probe", "preserving", "gold_key", "parsed_key", "lure_key", "answer"]
    df = pd.DataFrame.from_records(recs, columns=cols)
    df["correct"] = (df["verdict"] == "correct").to_numpy(dtype=bool)
    df["iou0"] = df["iou"].astype(float).fillna(0.0).to_numpy()
    return df


def lowest_severity_only(df: pd.DataFrame) -> np.ndarray:
    """Mask: rows whose severity is absent or the lowest severity of their code."""
    sev = df["severity"]
    lowest = df.groupby("code")["severity"].transform("min")
    return (sev.isna() | (sev == lowest)).to_numpy(dtype=bool)
