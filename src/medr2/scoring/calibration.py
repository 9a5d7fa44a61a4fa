"""Calibration and abstention (issue 45; formulas and n: docs/metrics.md, "Calibration and abstention").

Does the model know when it is right, and when the image cannot answer the question? Per mode:

* **calibration** of the confidence in the answer given (``medr2.records.Confidence``: ``probs[parsed]``; or the
  verbalised confidence read from the answer, :func:`medr2.scoring.extract.confidence.read_confidence`): ECE with
  equal-width and adaptive (equal-count) bins, Brier score, AUROC of confidence for correctness, the
  risk–coverage curve and its area (AURC), on the clean, answerable rows with a confidence and a parsed answer;
* **abstention** on answerable rows (over-abstention) and on unanswerable ones (appropriate abstention; the
  probes whose evidence was removed or replaced, :func:`medr2.scoring.table.is_unanswerable`), and the accuracy of
  the answerable rows the model answered (selective accuracy);
* **calibration shift** per variant: mean confidence on a variant minus on its clean parent, paired.

Every value carries a case-bootstrap 95% interval from the same resamples as ``metrics.json``
(:func:`medr2.scoring.stats.case_multiplicities`), ``n`` (rows) and ``n_cases``. The metric functions take
per-row weights (one row per resample): the point value is the function at weight 1, each resample the function
at the rows' case multiplicities, so a metric that is not a per-case sum (AUROC, AURC, ECE) is resampled exactly.
Written to ``RUN/calibration.json`` (``metrics.json`` is unchanged)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from medr2 import jsonsafe
from medr2.errors import BadInput
from medr2.scoring.stats import (
    CHUNK_CELLS,
    DEFAULT_RESAMPLES,
    LOW_N_CASES,
    _cluster_index,
    case_multiplicities,
    percentile_interval,
    seed_for,
)

CALIBRATION_FILE = "calibration.json"
N_BINS = 10
CHOICE_FORMS = ("mcq", "yesno")
CURVE_POINTS = 50  # risk–coverage points kept for the report
CONFORMAL_COVERAGE = 0.9  # the conformal sets' target coverage (``medr2 score --conformal-coverage``)

Weighted = Callable[[np.ndarray], np.ndarray]  # (resamples × rows) weights -> one value per resample


# -- the formulas (weights ``w``: resamples × rows; weight 1 everywhere is the sample itself) ---------------

def _rows(w: np.ndarray) -> np.ndarray:
    return np.atleast_2d(np.asarray(w, dtype=np.float64))


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def weighted_mean(values: np.ndarray) -> Weighted:
    v = np.asarray(values, dtype=np.float64)
    return lambda w: _ratio(_rows(w) @ v, _rows(w).sum(axis=1))


def brier(conf: np.ndarray, correct: np.ndarray) -> Weighted:
    """``Σ w (conf − 1[correct])² / Σ w`` (sklearn ``brier_score_loss``)."""
    return weighted_mean((np.asarray(conf, float) - np.asarray(correct, float)) ** 2)


def bin_edges(conf: np.ndarray, n_bins: int = N_BINS, *, adaptive: bool = False) -> np.ndarray:
    """Bin edges over [0, 1]: equal width, or (adaptive) the confidences' quantiles, as sklearn's
    ``calibration_curve`` (``strategy="uniform"`` / ``"quantile"``). Adaptive edges come from the sample and are
    kept fixed in the resamples."""
    if adaptive:
        return np.asarray(np.percentile(conf, np.linspace(0, 100, n_bins + 1)), dtype=np.float64)
    return np.linspace(0.0, 1.0, n_bins + 1)


def bin_index(conf: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """The bin of each confidence, right edges included (sklearn's ``searchsorted(edges[1:-1], conf)``: a
    confidence of exactly 0.5 is in the bin (0.4, 0.5])."""
    return np.searchsorted(edges[1:-1], np.asarray(conf, float))


def ece(conf: np.ndarray, correct: np.ndarray, edges: np.ndarray) -> Weighted:
    """``Σ_b |Σ_{i∈b} w_i (conf_i − 1[correct_i])| / Σ w``: the weighted mean gap between confidence and
    accuracy over bins."""
    conf = np.asarray(conf, float)
    gap = conf - np.asarray(correct, float)
    idx = bin_index(conf, edges)
    k = len(edges) - 1
    onehot = np.zeros((len(conf), k))
    onehot[np.arange(len(conf)), idx] = gap

    def f(w: np.ndarray) -> np.ndarray:
        w = _rows(w)
        return _ratio(np.abs(w @ onehot).sum(axis=1), w.sum(axis=1))
    return f


def _grouped(conf: np.ndarray, correct: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct confidences (ascending) and the row → group indicator matrices of right and wrong rows."""
    from scipy import sparse

    values, inv = np.unique(np.asarray(conf, float), return_inverse=True)
    ok = np.asarray(correct, bool)
    n, u = len(ok), len(values)
    right = sparse.csr_matrix((ok.astype(float), (np.arange(n), inv)), shape=(n, u))
    wrong = sparse.csr_matrix(((~ok).astype(float), (np.arange(n), inv)), shape=(n, u))
    return values, right, wrong


def auroc(conf: np.ndarray, correct: np.ndarray) -> Weighted:
    """P(confidence of a right answer > of a wrong one), ties counted ½ (sklearn ``roc_auc_score`` with
    ``sample_weight``): ``Σ_v R_v (W_<v + ½ W_v) / (R · W)`` over distinct confidences ``v``."""
    _, right, wrong = _grouped(conf, correct)

    def f(w: np.ndarray) -> np.ndarray:
        w = _rows(w)
        r = np.asarray((right.T @ w.T).T)
        x = np.asarray((wrong.T @ w.T).T)
        below = np.cumsum(x, axis=1) - x
        return _ratio((r * (below + 0.5 * x)).sum(axis=1), r.sum(axis=1) * x.sum(axis=1))
    return f


def aurc(conf: np.ndarray, correct: np.ndarray) -> Weighted:
    """Area under the risk–coverage curve: answering only the rows with confidence ≥ t, coverage is their share
    and risk their error rate; rows of equal confidence enter together. ``Σ_t (C_t − C_{t−1}) / C · E_t / C_t``
    over distinct confidences from the highest (``C_t``, ``E_t``: weight and errors covered at t)."""
    _, right, wrong = _grouped(conf, correct)

    def f(w: np.ndarray) -> np.ndarray:
        w = _rows(w)
        r = np.asarray((right.T @ w.T).T)[:, ::-1]  # highest confidence first
        x = np.asarray((wrong.T @ w.T).T)[:, ::-1]
        covered = np.cumsum(r + x, axis=1)
        errors = np.cumsum(x, axis=1)
        step = r + x
        risk = _ratio(errors, covered)
        risk = np.where(step > 0, risk, 0.0)
        return _ratio((step * risk).sum(axis=1), covered[:, -1])
    return f


def risk_coverage_curve(conf: np.ndarray, correct: np.ndarray, points: int = CURVE_POINTS) -> list[list[float]]:
    """``[coverage, risk]`` at each distinct confidence from the highest (at most ``points`` of them, evenly
    spaced in coverage; the last is full coverage)."""
    values, inv = np.unique(np.asarray(conf, float), return_inverse=True)
    ok = np.asarray(correct, bool)
    n_at = np.bincount(inv, minlength=len(values))[::-1]
    err_at = np.bincount(inv, weights=(~ok).astype(float), minlength=len(values))[::-1]
    cov = np.cumsum(n_at) / len(ok)
    risk = np.cumsum(err_at) / np.cumsum(n_at)
    keep = np.unique(np.linspace(0, len(cov) - 1, min(points, len(cov))).round().astype(int))
    return [[float(cov[i]), float(risk[i])] for i in keep]


def reliability(conf: np.ndarray, correct: np.ndarray, edges: np.ndarray) -> list[dict[str, Any]]:
    """Per non-empty bin: its edges, rows, mean confidence and accuracy (the reliability diagram)."""
    conf = np.asarray(conf, float)
    ok = np.asarray(correct, float)
    idx = bin_index(conf, edges)
    out = []
    for b in range(len(edges) - 1):
        m = idx == b
        if m.any():
            out.append({"lo": float(edges[b]), "hi": float(edges[b + 1]), "n": int(m.sum()),
                        "confidence": float(conf[m].mean()), "accuracy": float(ok[m].mean())})
    return out


# -- the bootstrap of weighted metrics ------------------------------------------------------------------

class WeightedBook:
    """Metrics as functions of per-row weights, evaluated at weight 1 and at every resample of the cases, or of
    their ``clusters`` (patient groups) where some cluster holds several cases: the resampling unit of
    :class:`medr2.scoring.stats.MetricBook`, drawn by the same :func:`~medr2.scoring.stats.case_multiplicities`."""

    def __init__(self, case_ids: list[str], clusters: Mapping[str, str] | None = None) -> None:
        self.cases = sorted(set(case_ids))
        self._pos = {c: i for i, c in enumerate(self.cases)}
        self._metrics: list[tuple[np.ndarray, Weighted]] = []
        self._cluster_of = _cluster_index(self.cases, clusters)

    @property
    def unit(self) -> str:
        """What the bootstrap resamples: ``patient`` (clusters of cases) or ``case``."""
        return "case" if self._cluster_of is None else "patient"

    @property
    def n_units(self) -> int:
        return len(self.cases) if self._cluster_of is None else int(self._cluster_of.max(initial=-1)) + 1

    def add(self, case_ids: Any, fn: Weighted) -> int:
        self._metrics.append((np.asarray([self._pos[str(c)] for c in case_ids], dtype=np.int64), fn))
        return len(self._metrics) - 1

    def evaluate(self, n_resamples: int, seed: int) -> list[dict[str, Any]]:
        draws: list[list[np.ndarray]] = [[] for _ in self._metrics]
        for _, drawn in case_multiplicities(self.n_units, n_resamples, seed):
            w = drawn if self._cluster_of is None else drawn[:, self._cluster_of]  # a case weighs as its cluster
            for k, (idx, fn) in enumerate(self._metrics):
                step = max(1, CHUNK_CELLS // max(len(idx), 1))
                for a in range(0, len(w), step):
                    draws[k].append(np.asarray(fn(w[a:a + step][:, idx]), dtype=float))
        out = []
        for k, (idx, fn) in enumerate(self._metrics):
            v = float(np.asarray(fn(np.ones((1, len(idx)))), dtype=float)[0]) if len(idx) else float("nan")
            value = v if np.isfinite(v) else None
            lo, hi = percentile_interval(np.concatenate(draws[k])) if value is not None and draws[k] else (None, None)
            n_cases = int(np.unique(idx).size)
            out.append({"value": value, "lo": lo, "hi": hi, "n": int(len(idx)), "n_cases": n_cases,
                        "low_n": n_cases < LOW_N_CASES})
        return out


# -- a run's rows -> calibration.json ---------------------------------------------------------------------

def row_confidence(parsed: Any, probs: Mapping[str, float] | None) -> float | None:
    """The confidence in the answer given: the probability of the parsed answer (None without one)."""
    if probs is None or parsed is None or (isinstance(parsed, float) and np.isnan(parsed)):
        return None
    return float(probs.get(str(parsed), 0.0))


def mode_calibration(df: pd.DataFrame, book: WeightedBook) -> dict[str, Any]:
    """The calibration tree of one mode's tidy rows (columns of ``load_table`` plus ``confidence``:
    float or NaN, and ``confidence_source``); leaves are metric indices of ``book``."""
    out: dict[str, Any] = {}
    conf_all = df["confidence"].to_numpy(dtype=float)
    has = np.isfinite(conf_all)
    sources = sorted({str(s) for s in df.loc[has, "confidence_source"].dropna()})
    out["confidence"] = {"sources": sources, "rows_with_confidence": int(has.sum()), "rows": int(len(df))}
    answerable = ~df["probe"].to_numpy(dtype=bool)
    clean = (df["variant"] == "clean").to_numpy(dtype=bool) & answerable
    abstained = (df["verdict"] == "abstained").to_numpy(dtype=bool)
    correct = df["correct"].to_numpy(dtype=bool)
    cal = clean & has & df["form"].isin(CHOICE_FORMS).to_numpy(dtype=bool) & df["parsed"].notna().to_numpy()
    if cal.any():
        c, y, cases = conf_all[cal], correct[cal], df.loc[cal, "case_id"]
        eq, ad = bin_edges(c), bin_edges(c, adaptive=True)
        out["calibration"] = {
            "ECE": book.add(cases, ece(c, y, eq)), "ECE_adaptive": book.add(cases, ece(c, y, ad)),
            "Brier": book.add(cases, brier(c, y)), "AUROC": book.add(cases, auroc(c, y)),
            "AURC": book.add(cases, aurc(c, y)), "mean_confidence": book.add(cases, weighted_mean(c)),
            "accuracy": book.add(cases, weighted_mean(y.astype(float))),
        }
        out["reliability"] = {"equal_width": reliability(c, y, eq), "adaptive": reliability(c, y, ad)}
        out["risk_coverage"] = risk_coverage_curve(c, y)
    else:
        out["confidence"]["note"] = "no confidence: the answers carry none (see docs/metrics.md, Calibration)"
    unans = ~answerable
    block: dict[str, Any] = {
        "over_abstention": book.add(df.loc[clean, "case_id"], weighted_mean(abstained[clean].astype(float))),
        "selective_acc": book.add(df.loc[clean & ~abstained, "case_id"],
                                  weighted_mean(correct[clean & ~abstained].astype(float))),
        "coverage": book.add(df.loc[clean, "case_id"], weighted_mean((~abstained[clean]).astype(float))),
    }
    if unans.any():
        block["appropriate_abstention"] = book.add(df.loc[unans, "case_id"],
                                                   weighted_mean(abstained[unans].astype(float)))
        for code in sorted(set(df.loc[unans, "code"].dropna())):
            m = unans & (df["code"] == code).to_numpy(dtype=bool)
            block[f"appropriate_abstention_{code}"] = book.add(df.loc[m, "case_id"],
                                                               weighted_mean(abstained[m].astype(float)))
    out["abstention"] = block
    shift = _shifts(df, has, book)
    if shift:
        out["shift"] = shift
    return out


def _shifts(df: pd.DataFrame, has: np.ndarray, book: WeightedBook) -> dict[str, int]:
    """Per variant code: mean over (variant, parent) pairs, both with a confidence, of conf_v − conf_p."""
    rows = df[has]
    parents = rows[rows["variant"] == "clean"].drop_duplicates("item_id").set_index("item_id")["confidence"]
    var = rows[(rows["variant"] != "clean") & rows["parent_id"].isin(parents.index)]
    out: dict[str, int] = {}
    for code in sorted(set(var["code"].dropna())):
        v = var[var["code"] == code]
        d = v["confidence"].to_numpy(float) - parents.loc[v["parent_id"]].to_numpy(float)
        out[str(code)] = book.add(v["case_id"], weighted_mean(d))
    return out


def conformal_sets(df: pd.DataFrame, book: WeightedBook, coverage: float) -> dict[str, Any] | None:
    """Split conformal prediction sets (LAC): on the calibration split (``val``, else ``train``), the scores
    ``s = 1 − p(gold)`` of the clean answerable choice rows with probabilities give ``q̂``, their
    ``⌈(n+1)·coverage⌉``-th smallest (1 when that exceeds n); a row of any other split gets the set of answers
    with ``p ≥ 1 − q̂``. Reported: coverage (gold in the set) and mean set size, overall and per stage, over
    those other rows; None without calibration or test rows."""
    ok = ((df["variant"] == "clean") & ~df["probe"].astype(bool) & df["form"].isin(CHOICE_FORMS)
          & df["probs"].map(lambda p: isinstance(p, dict) and bool(p)))
    rows = df[ok]
    cal_split = "val" if (rows["split"] == "val").any() else "train"
    cal, test = rows[rows["split"] == cal_split], rows[rows["split"] != cal_split]
    if cal.empty or test.empty:
        return None
    scores = np.sort([1.0 - float(p.get(str(g), 0.0)) for p, g in zip(cal["probs"], cal["answer"], strict=True)])
    n = len(scores)
    k = math.ceil((n + 1) * coverage)
    qhat = 1.0 if k > n else float(scores[k - 1])
    sets = [{lab for lab, v in p.items() if v >= 1.0 - qhat} for p in test["probs"]]
    hit = np.array([str(g) in s for s, g in zip(sets, test["answer"], strict=True)], dtype=float)
    size = np.array([len(s) for s in sets], dtype=float)
    out: dict[str, Any] = {"target": coverage, "qhat": qhat, "calibration_split": cal_split, "n_calibration": n,
                           "coverage": book.add(test["case_id"], weighted_mean(hit)),
                           "set_size": book.add(test["case_id"], weighted_mean(size)), "stages": {}}
    stages = test["stage"].to_numpy()
    for s in sorted(set(stages.tolist())):
        m = stages == s
        out["stages"][str(s)] = {"coverage": book.add(test.loc[m, "case_id"], weighted_mean(hit[m])),
                                 "set_size": book.add(test.loc[m, "case_id"], weighted_mean(size[m]))}
    return out


_RESOLVED = ("calibration", "abstention", "shift", "conformal")
_CONFORMAL_PLAIN = ("n_calibration",)  # ints of the conformal block that are counts, not metric handles


def _resolve(tree: Any, results: list[dict[str, Any]], keys: tuple[str, ...] = ()) -> Any:
    if isinstance(tree, dict):
        return {k: _resolve(v, results, (*keys, k)) for k, v in tree.items()}
    if isinstance(tree, int) and not isinstance(tree, bool) and keys and keys[0] in _RESOLVED \
            and keys[-1] not in _CONFORMAL_PLAIN:
        return results[tree]
    return tree


def compute_calibration(rows: pd.DataFrame, *, seed: int = 0, n_resamples: int = DEFAULT_RESAMPLES,
                        coverage: float = CONFORMAL_COVERAGE, clusters: Mapping[str, str] | None = None
                        ) -> dict[str, Any]:
    """``calibration.json``'s ``modes`` block (and its bootstrap) from tidy rows with ``confidence`` and
    ``confidence_source`` columns (and ``probs``, the per-answer probabilities, for the conformal sets)."""
    if not 0 < coverage < 1:
        raise BadInput(f"the conformal coverage must be between 0 and 1, not {coverage}", field="--conformal-coverage")
    book = WeightedBook(rows["case_id"].astype(str).tolist(), clusters)
    trees = {}
    for mode, df in rows.groupby("mode", sort=True):
        trees[str(mode)] = mode_calibration(df, book)
        if "probs" in df.columns and (sets := conformal_sets(df, book, coverage)) is not None:
            trees[str(mode)]["conformal"] = sets
    results = book.evaluate(n_resamples, seed_for(seed, "bootstrap"))
    return {"bootstrap": {"unit": book.unit, "n_units": book.n_units, "n_resamples": n_resamples, "level": 0.95,
                          "seed": seed, "n_cases": len(book.cases)},
            "modes": {m: _resolve(t, results) for m, t in trees.items()}}


def write_calibration(run_dir: Path, metrics: Mapping[str, Any] | None = None, *,
                      coverage: float = CONFORMAL_COVERAGE) -> dict[str, Any] | None:
    """Compute and write ``RUN/calibration.json`` for a scored run whose answers carry a confidence or an
    abstention (or whose eval offered the abstain option); otherwise remove a stale one and return None."""
    from medr2.atomic import atomic_write_bytes
    from medr2.run.manifest import eval_option
    from medr2.run.store import Store
    from medr2.scoring.confread import run_confidences
    from medr2.scoring.scorer import load_table

    run_dir = Path(run_dir)
    path = run_dir / CALIBRATION_FILE
    manifest = jsonsafe.load_object(run_dir / "manifest.json")
    if metrics is None and (run_dir / "metrics.json").is_file():
        metrics = jsonsafe.load_object(run_dir / "metrics.json")
    abstained = any("abstained" in (m.get("rates") or {}) for m in ((metrics or {}).get("modes") or {}).values())
    with Store.open(run_dir) as store:
        confident = store.has_confidences()
    confidence, abstain_option = eval_option(manifest, "confidence"), eval_option(manifest, "abstain_option")
    if not (confident or abstained or abstain_option or confidence):
        path.unlink(missing_ok=True)  # nothing to measure (and the table is not read)
        return None
    rows = load_table(run_dir)
    conf, source, probs = run_confidences(run_dir, rows, manifest)
    rows = rows.assign(confidence=conf, confidence_source=source, probs=probs)
    boot = (metrics or {}).get("bootstrap") or {}
    from medr2.scoring.scorer import run_clusters

    out = compute_calibration(rows, seed=int(boot.get("seed", 0)),
                              n_resamples=int(boot.get("n_resamples", DEFAULT_RESAMPLES)), coverage=coverage,
                              clusters=run_clusters(run_dir))
    out = {"model_key": (metrics or {}).get("model_key"), "confidence_option": confidence,
           "abstain_option": bool(abstain_option), **out}
    data = json.dumps(out, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
    atomic_write_bytes(path, data.encode("utf-8"))
    return out
