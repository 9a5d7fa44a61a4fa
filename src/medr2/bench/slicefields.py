"""Slice fields: what a subgroup slice of a bench is made by (``medr2 score --slice``, ``medr2 info``).

A slice field (registry :data:`SLICE_FIELDS`) reads one value per case (``level="case"``: from a row of
``cases.parquet``, its JSON fields decoded) or per scored row (``level="item"``: a column of the score's tidy
table). A value a case does not carry is :data:`MISSING` (its own slice, never dropped). Binned numbers (age,
lesion size) take edges (:func:`parse_bins`). Statistics over slices: :mod:`medr2.scoring.slices`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from medr2.demographics import age_of, sex_of
from medr2.errors import BadInput
from medr2.registry import Registry

MISSING = "missing"
CASE_COLUMNS = ("case_id", "source", "modality", "plane", "body_region", "findings", "meta")


@dataclass(frozen=True)
class SliceField:
    """One slice field: ``level`` ``case`` (``read`` takes a case row of ``cases.parquet``, JSON decoded) or
    ``item`` (``read`` takes the tidy table and returns a column); ``bins``: default edges of a binned number."""

    name: str
    level: str
    doc: str
    read: Callable[..., Any]
    bins: tuple[float, ...] = ()
    unit: str = ""


SLICE_FIELDS: Registry[SliceField] = Registry("slice field", field="--slice")


def slice_field(name: str, level: str, doc: str, *, bins: Sequence[float] = (), unit: str = ""
                ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: register a slice field read by ``fn``."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        SLICE_FIELDS.register(name, SliceField(name, level, doc, fn, tuple(float(b) for b in bins), unit))
        return fn

    return deco


def bin_label(value: float | None, edges: Sequence[float], unit: str = "") -> str | None:
    """``<e0``, ``e0-e1``, ..., ``>=eN`` (edges ascending; a value on an edge goes to the upper bin)."""
    if value is None:
        return None
    fmt = [f"{e:g}" for e in edges]
    i = int(np.searchsorted(np.asarray(edges, dtype=float), value, side="right"))
    if i == 0:
        return f"<{fmt[0]}{unit}"
    if i == len(edges):
        return f">={fmt[-1]}{unit}"
    return f"{fmt[i - 1]}-{fmt[i]}{unit}"


def _text(v: Any) -> str | None:
    return str(v) if v is not None and str(v).strip() else None


@slice_field("sex", "case", "patient sex (meta.sex: F, M, other)")
def _sex(case: Mapping[str, Any], edges: Sequence[float]) -> str | None:
    return sex_of(case["meta"].get("sex"))


@slice_field("age", "case", "patient age in years, binned (meta.age / age_approx)", bins=(18, 40, 65))
def _age(case: Mapping[str, Any], edges: Sequence[float]) -> str | None:
    meta = case["meta"]
    return bin_label(age_of(meta.get("age", meta.get("age_approx"))), edges)


@slice_field("source", "case", "source dataset")
def _source(case: Mapping[str, Any], edges: Sequence[float]) -> str | None:
    return _text(case["source"])


@slice_field("modality", "case", "imaging modality")
def _modality(case: Mapping[str, Any], edges: Sequence[float]) -> str | None:
    return _text(case["modality"])


@slice_field("view", "case", "view or plane (PA, AP, axial, ...)")
def _view(case: Mapping[str, Any], edges: Sequence[float]) -> str | None:
    return _text(case["plane"])


@slice_field("region", "case", "body region")
def _region(case: Mapping[str, Any], edges: Sequence[float]) -> str | None:
    return _text(case["body_region"])


@slice_field("lesion_size", "case", "largest finding's size_mm, binned ('no lesion' without findings)",
             bins=(10, 20, 30), unit=" mm")
def _lesion_size(case: Mapping[str, Any], edges: Sequence[float]) -> str | None:
    findings = case["findings"]
    if not findings:
        return "no lesion"
    sizes = [f.get("attributes", {}).get("size_mm") for f in findings if isinstance(f, dict)]
    known = [float(s) for s in sizes if isinstance(s, int | float) and not isinstance(s, bool) and np.isfinite(s)]
    return bin_label(max(known), edges, " mm") if known else None


@slice_field("variant", "item", "variant id of the item (clean, T2, V8-2, ...)")
def _variant(rows: pd.DataFrame) -> pd.Series:
    return rows["variant"].astype(str)


@slice_field("stage", "item", "stage of the item's task")
def _stage(rows: pd.DataFrame) -> pd.Series:
    return rows["stage"].astype(str)


@slice_field("task", "item", "task id")
def _task(rows: pd.DataFrame) -> pd.Series:
    return rows["task"].astype(str)


def parse_bins(specs: Sequence[str] | Mapping[str, Sequence[float]] | None) -> dict[str, tuple[float, ...]]:
    """Bin edges per binned field: the defaults, replaced by ``["age=18,50,70"]`` (or a mapping)."""
    out = {f.name: f.bins for f in SLICE_FIELDS.values() if f.bins}
    if not specs:
        return out
    items = specs.items() if isinstance(specs, Mapping) else [_bin_spec(s) for s in specs]
    for name, edges in items:
        if name not in out:
            raise BadInput(f"{name!r} is not a binned slice field (binned: {', '.join(sorted(out))})", field="--bins")
        try:
            vals = tuple(float(e) for e in edges)
        except (TypeError, ValueError):
            raise BadInput(f"bin edges of {name} are numbers", field="--bins") from None
        if not vals or any(not np.isfinite(v) for v in vals) or bool(np.any(np.diff(vals) <= 0)):
            raise BadInput(f"bin edges of {name} are finite, strictly increasing numbers", field="--bins")
        out[name] = vals
    return out


def _bin_spec(spec: str) -> tuple[str, list[str]]:
    name, sep, edges = str(spec).partition("=")
    if not sep:
        raise BadInput(f"give bins as FIELD=EDGE,EDGE,... (not {spec!r})", field="--bins")
    return name.strip(), [e for e in edges.split(",") if e.strip()]


def case_values(bench_root: Path, fields: Sequence[str], bins: Mapping[str, Sequence[float]]) -> pd.DataFrame:
    """One column per case-level field (values as text, ``missing`` where the case does not carry it), indexed
    by case id, read from the bench's ``cases.parquet`` (only the columns the fields read)."""
    from medr2.bench.table import BenchTable
    from medr2.jsonsafe import loads

    bench = BenchTable(bench_root)
    path = bench.cases_path
    wanted = [SLICE_FIELDS[f] for f in fields if SLICE_FIELDS[f].level == "case"]
    table = bench.case_columns(CASE_COLUMNS)
    n = len(table["case_id"])
    cols: dict[str, list[str]] = {f.name: [] for f in wanted}
    for i in range(n):
        case: dict[str, Any] = {c: (table[c][i] if c in table else None) for c in CASE_COLUMNS}
        for c in ("meta", "findings"):
            raw = case[c]
            got = loads(raw, file=str(path), record=str(case["case_id"]), field=c) if isinstance(raw, str) else raw
            case[c] = got if isinstance(got, dict | list) else ({} if c == "meta" else [])
        for f in wanted:
            v = f.read(case, bins.get(f.name, f.bins))
            cols[f.name].append(MISSING if v is None else str(v))
    return pd.DataFrame(cols, index=pd.Index(table["case_id"], name="case_id"))


def completeness(bench_root: Path) -> dict[str, dict[str, Any]]:
    """Per case-level slice field: how many cases carry a value (``known``) of how many, and the distinct values."""
    vals = case_values(bench_root, [f.name for f in SLICE_FIELDS.values() if f.level == "case"], parse_bins(None))
    out: dict[str, dict[str, Any]] = {}
    for name in vals.columns:
        col = vals[name]
        known = int((col != MISSING).sum())
        out[name] = {"known": known, "cases": len(col), "share": known / len(col) if len(col) else None,
                     "values": int(col[col != MISSING].nunique())}
    return out
