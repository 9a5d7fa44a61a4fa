"""Paired comparison of two scored runs on any metric (accuracy and robustness), over the same items.

:func:`compare_metrics` computes each requested metric for run A and run B with one shared
:class:`~medr2.scoring.stats.MetricBook` (so both sides see the same case-bootstrap resamples), on the
items both runs answered, and reports per metric the values of A and B, the paired difference A − B
with its 95% case-bootstrap interval, and a cluster-aware test of "no difference":
:func:`case_swap_test`, an exact-in-distribution randomisation test that, unit by unit (the patient where
cases share one, else the case: the unit the intervals resample), swaps the two runs' sums (under the null the
two runs are exchangeable within each unit whatever the correlation inside it; the same sign-flip idea as
:func:`medr2.scoring.stats.clustered_mcnemar`, which it equals in spirit for accuracy). Metrics are
named by their path in ``metrics.json`` (``mode``, keys...; ``LAST`` = the highest stage key)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from medr2.scoring.metrics import METRIC_GROUPS, Ctx, Ref
from medr2.scoring.stats import DEFAULT_RESAMPLES, MetricBook, difference, seed_for

SWAP_RESAMPLES = 2000
ALPHA = 0.05


def _tree(book: MetricBook, rows: pd.DataFrame, mode: str, all_rows: pd.DataFrame) -> dict[str, Any]:
    ctx = Ctx(book=book, rows=rows, mode=mode, all_rows=all_rows)
    tree: dict[str, Any] = {}
    for name, fn in METRIC_GROUPS.items():
        if name not in ("accuracy", "prompt_reliance", "visual_reliance", "consistency", "chain"):
            continue  # the groups the comparison reads (the others cost time and are not compared)
        got = fn(ctx)
        if name == "accuracy":
            tree.update(got)
        else:
            tree[name] = got
    return tree


def _find(tree: Any, path: Sequence[str]) -> Ref | None:
    node = tree
    for key in path:
        if not isinstance(node, dict):
            return None
        if key == "LAST":
            stages = sorted((k for k in node if str(k).isdigit()), key=int)
            key = stages[-1] if stages else ""
        node = node.get(key)
    return node if isinstance(node, Ref) else None


def _shared(rows_a: pd.DataFrame, rows_b: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Both tables restricted to the (mode, item) pairs both runs hold."""
    ka = rows_a["mode"].astype(str) + "\x1f" + rows_a["item_id"].astype(str)
    kb = rows_b["mode"].astype(str) + "\x1f" + rows_b["item_id"].astype(str)
    both = set(ka) & set(kb)
    return rows_a[ka.isin(both).to_numpy()], rows_b[kb.isin(both).to_numpy()]


def case_swap_test(book: MetricBook, a: int, b: int, *, n_resamples: int = SWAP_RESAMPLES,
                   seed: int = 0) -> dict[str, Any]:
    """Cluster-aware randomisation test of metric ``a`` = metric ``b`` (two metrics of the same form, one
    per run, in ``book``): each resample swaps the two runs' component sums in a random half of the book's
    sampling units (:meth:`MetricBook.unit_index`: patients where cases share one, else cases; the unit its
    intervals resample) and recomputes ``value(a) − value(b)``; ``p`` = share of resamples at least as far from
    0 as the observed difference (with the observed one counted, so ``p > 0``). Under the null the two runs are
    exchangeable within each unit whatever the correlation of the cases and items inside it."""
    ma, mb = book.info(a), book.info(b)
    unit = {"unit": book.unit, "n_units": book.n_units}
    if len(ma.components) != len(mb.components):
        return {"p": None, "method": "case swap", "note": "the two metrics differ in form", **unit}
    cols = np.column_stack(book._columns) if book._columns else np.zeros((book.n_cases, 0))
    units = book.unit_index(np.arange(book.n_cases))
    members = sparse.csr_matrix((np.ones(book.n_cases), (units, np.arange(book.n_cases))),
                                shape=(book.n_units, book.n_cases))
    ca = np.asarray(members @ cols[:, list(ma.components)])  # units × components
    cb = np.asarray(members @ cols[:, list(mb.components)])
    observed = float(np.asarray(difference(ma.combine(*ca.sum(0)), mb.combine(*cb.sum(0)))))
    if not np.isfinite(observed):
        return {"p": None, "method": "case swap", "note": "undefined difference", **unit}
    rng = np.random.default_rng(seed)
    swap = rng.integers(0, 2, size=(n_resamples, book.n_units)).astype(np.float64)
    diff = cb - ca  # per unit: what a swap moves from A to B
    ta = ca.sum(0)[None, :] + swap @ diff
    tb = cb.sum(0)[None, :] - swap @ diff
    with np.errstate(divide="ignore", invalid="ignore"):
        draws = np.asarray(difference(ma.combine(*ta.T), mb.combine(*tb.T)), dtype=float)
    draws = draws[np.isfinite(draws)]
    hits = int(np.sum(np.abs(draws) >= abs(observed) - 1e-12))
    p = (hits + 1) / (draws.size + 1)
    return {"p": float(p), "method": "case swap", "n_resamples": int(draws.size), **unit}


def compare_metrics(rows_a: pd.DataFrame, rows_b: pd.DataFrame, metrics: Mapping[str, Sequence[str]], *,
                    seed: int = 0, n_resamples: int = DEFAULT_RESAMPLES,
                    swap_resamples: int = SWAP_RESAMPLES, clusters: Mapping[str, str] | None = None
                    ) -> dict[str, dict[str, Any]]:
    """``{name: {"a", "b", "delta", "test"}}`` for each metric (name → (mode, *path)) both runs have on
    their shared items; a metric one side lacks is reported as ``{"missing": True}``."""
    rows_a, rows_b = _shared(rows_a, rows_b)
    book = MetricBook(pd.concat([rows_a["case_id"], rows_b["case_id"]]).astype(str).unique().tolist(), clusters)
    trees: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    for mode in sorted({str(p[0]) for p in metrics.values()}):
        ma, mb = rows_a[rows_a["mode"] == mode], rows_b[rows_b["mode"] == mode]
        if ma.empty or mb.empty:
            continue
        trees[mode] = (_tree(book, ma, mode, rows_a), _tree(book, mb, mode, rows_b))
    pairs: dict[str, tuple[int, int, int]] = {}
    out: dict[str, dict[str, Any]] = {}
    for name, (mode, *path) in metrics.items():
        ta, tb = trees.get(mode, ({}, {}))
        ra, rb = _find(ta, path), _find(tb, path)
        if ra is None or rb is None:
            out[name] = {"missing": True}
            continue
        pairs[name] = (ra.index, rb.index, book.derived([ra.index, rb.index], difference))
    results = book.evaluate(n_resamples, seed_for(seed, "bootstrap"))
    for name, (a, b, d) in pairs.items():
        test = case_swap_test(book, a, b, n_resamples=swap_resamples, seed=seed_for(seed, "swap", name))
        out[name] = {"a": results[a], "b": results[b], "delta": results[d], "test": test,
                     "bootstrap": book.bootstrap_info()}
    return out


def significant(entry: Mapping[str, Any], alpha: float = ALPHA) -> bool:
    """The difference is significant: its 95% interval excludes 0 and the cluster-aware test has p < alpha."""
    d, t = entry.get("delta") or {}, entry.get("test") or {}
    lo, hi, p = d.get("lo"), d.get("hi"), t.get("p")
    if lo is None or hi is None or p is None:
        return False
    return bool((lo > 0 or hi < 0) and p < alpha)
