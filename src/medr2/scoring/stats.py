"""Statistics: vectorised cluster bootstrap (95% percentile intervals), paired deltas, exact McNemar and a
cluster-aware paired test (:func:`clustered_mcnemar`: items of one case are not independent).

Every metric is a function of a few *components*: per-case sums of some per-unit value (a numerator,
a denominator, a BLEU statistic, ...). The bootstrap resamples the sampling unit with a seeded
``numpy.random.Generator``, turns each resample into per-unit multiplicities (one ``bincount``),
and gets every component's resampled totals with one matrix product ``W @ S`` (units × components).
The unit is the *patient* (the true cluster: cases of one patient, or of one source image, share a random
effect) wherever the book is told the cases' clusters (``MetricBook(..., clusters=)``) and some cluster holds
more than one of its cases; else the case. :attr:`MetricBook.unit` says which. All metrics see the same
resamples, so a difference of two metrics is a *paired* bootstrap.
"""

from __future__ import annotations

import hashlib
import math
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from scipy import sparse

CI_LEVEL = 0.95
DEFAULT_RESAMPLES = 1000
# resample-chunk budget: cases × resamples held at once (float64 multiplicities)
CHUNK_CELLS = 1 << 24
# use a sparse cases × components matrix when fewer than this share of its cells are non-zero
SPARSE_BELOW = 0.05
# a metric computed from fewer cases than this is flagged ``low_n`` (its interval is not to be trusted)
LOW_N_CASES = 10
# clustered McNemar: with at most this many cases holding a discordant pair, the exact sign-flip
# distribution is enumerated (2**k sign patterns); above it Durkalski's chi-square approximation is used
EXACT_SIGN_FLIP_MAX = 16

Combine = Callable[..., Any]


def seed_for(seed: int, *keys: str) -> int:
    """A stable 63-bit seed derived from a base seed and names (not from iteration order)."""
    h = hashlib.sha256(("\x1f".join([str(seed), *keys])).encode()).digest()
    return int.from_bytes(h[:8], "big") >> 1


def ratio(num: Any, den: Any) -> Any:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.asarray(den) > 0, np.asarray(num, dtype=float) / np.where(np.asarray(den) > 0, den, 1),
                        np.nan)


@dataclass
class _Metric:
    components: tuple[int, ...]
    combine: Combine
    n: int
    n_cases: int
    extra: dict[str, Any] = field(default_factory=dict)
    # a derived metric (:meth:`MetricBook.derived`): the metrics it is computed from and the function of
    # their values (kept so that books of case chunks can be merged: medr2.scoring.aggregate)
    parts: tuple[int, ...] | None = None
    fn: Combine | None = None


class MetricBook:
    """Collects components (per-case sums) and metrics over them; ``evaluate`` bootstraps all at once.
    ``clusters``: case id -> its cluster (patient group, :func:`medr2.bench.clusters.patient_groups`); the
    bootstrap then resamples clusters when some cluster holds several of the book's cases."""

    def __init__(self, case_ids: Sequence[str], clusters: Mapping[str, str] | None = None) -> None:
        self.cases = sorted(set(case_ids))
        self._case_pos = {c: i for i, c in enumerate(self.cases)}
        self._cluster_of = _cluster_index(self.cases, clusters)
        self._columns: list[np.ndarray] = []
        self._known: dict[bytes, int] = {}
        self._metrics: list[_Metric] = []
        self._index: pd.Index | None = None
        self._arrow: dict[pa.DataType, pa.Array] = {}
        self._case_array: np.ndarray | None = None
        self._units_of: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # id(case array) -> (it, its units)

    @property
    def n_cases(self) -> int:
        return len(self.cases)

    @property
    def unit(self) -> str:
        """What the bootstrap resamples: ``patient`` (clusters of cases) or ``case``."""
        return "case" if self._cluster_of is None else "patient"

    @property
    def n_units(self) -> int:
        """How many units the bootstrap resamples (patients, or cases)."""
        return self.n_cases if self._cluster_of is None else int(self._cluster_of.max(initial=-1)) + 1

    def unit_index(self, case_idx: np.ndarray) -> np.ndarray:
        """Per case position (from :meth:`case_index`) the number of its sampling unit (:attr:`unit`): its
        cluster where the book resamples patients, else the case itself. Every cluster-aware test groups by it,
        so a test and the intervals beside it resample the same unit."""
        idx = np.asarray(case_idx, dtype=np.int64)
        return idx if self._cluster_of is None else self._cluster_of[idx]

    @property
    def case_array(self) -> np.ndarray:
        """The book's case ids as one object array (made once: the parts of a chunk's tree refer to it)."""
        if self._case_array is None:
            self._case_array = np.asarray(self.cases, dtype=object)
        return self._case_array

    def units_of(self, case_ids: np.ndarray) -> np.ndarray:
        """:meth:`unit_index` of each of ``case_ids`` (an array of case ids, e.g. another book's
        :attr:`case_array`), looked up once per array for the life of the book."""
        got = self._units_of.get(id(case_ids))
        if got is None or got[0] is not case_ids:
            got = self._units_of[id(case_ids)] = (case_ids, self.unit_index(self.case_index(case_ids)))
        return got[1]

    def bootstrap_info(self) -> dict[str, Any]:
        """``{"unit", "n_units"}``: what the intervals resample, for the metrics' ``bootstrap`` block."""
        return {"unit": self.unit, "n_units": self.n_units}

    def case_index(self, case_ids: Sequence[str] | np.ndarray | pd.Series) -> np.ndarray:
        """Positions of ``case_ids`` among the book's cases (one vectorised hash lookup; Arrow-backed
        string columns are looked up in Arrow, without making Python strings)."""
        values = case_ids.array if isinstance(case_ids, pd.Series) else case_ids
        if isinstance(values, pd.arrays.ArrowStringArray):
            arr = pa.array(values)
            found = pc.index_in(arr, value_set=self._arrow_cases(arr.type))
            if found.null_count:
                raise KeyError(arr.filter(found.is_null())[0].as_py())
            return cast(np.ndarray, found.to_numpy().astype(np.int64))
        if self._index is None:
            self._index = pd.Index(np.asarray(self.cases, dtype=object))
        idx = self._index.get_indexer(np.asarray(case_ids, dtype=object)).astype(np.int64, copy=False)
        if len(idx) and idx.min() < 0:
            raise KeyError(np.asarray(case_ids, dtype=object)[idx < 0][0])
        return cast(np.ndarray, idx)

    def _arrow_cases(self, typ: pa.DataType) -> pa.Array:
        got = self._arrow.get(typ)
        if got is None:
            got = self._arrow[typ] = pa.array(self.cases, type=typ)
        return got

    def n_cases_of(self, case_idx: np.ndarray) -> int:
        """How many distinct cases ``case_idx`` (positions from :meth:`case_index`) holds."""
        return int(np.count_nonzero(np.bincount(case_idx, minlength=self.n_cases)))

    def component(self, case_idx: np.ndarray, values: np.ndarray | float) -> int:
        """Register per-case sums of ``values`` over units located at ``case_idx``; returns its id."""
        w = np.broadcast_to(np.asarray(values, dtype=np.float64), case_idx.shape)
        return self.add_column(np.bincount(case_idx, weights=w, minlength=self.n_cases).astype(np.float64))

    def add_column(self, col: np.ndarray) -> int:
        """Register a component given as its per-case sums (one float per case of the book); returns its id."""
        key = hashlib.blake2b(col.tobytes(), digest_size=16).digest()
        known = self._known.get(key)
        if known is not None:  # identical sums (e.g. the same denominator): resample once
            return known
        self._columns.append(col)
        self._known[key] = len(self._columns) - 1
        return len(self._columns) - 1

    def metric(self, components: Sequence[int], combine: Combine, *, n: int, n_cases: int,
               **extra: Any) -> int:
        self._metrics.append(_Metric(tuple(components), combine, int(n), int(n_cases), dict(extra)))
        return len(self._metrics) - 1

    def ratio_metric(self, case_idx: np.ndarray, num: np.ndarray, den: np.ndarray | None = None,
                     **extra: Any) -> int:
        """Mean of ``num`` over units (or sum(num)/sum(den)); n = units counted, n_cases = their cases."""
        den_v = np.ones(len(case_idx)) if den is None else np.asarray(den, dtype=np.float64)
        keep = den_v > 0
        kn = self.component(case_idx, np.asarray(num, dtype=np.float64))
        kd = self.component(case_idx, den_v)
        return self.metric((kn, kd), ratio, n=int(keep.sum()), n_cases=self.n_cases_of(case_idx[keep]), **extra)

    def derived(self, metrics: Sequence[int], fn: Combine, **extra: Any) -> int:
        """A metric computed from other metrics' values (e.g. a difference or a macro mean)."""
        parts = [self._metrics[m] for m in metrics]
        comps: list[int] = []
        spans: list[tuple[int, int]] = []
        for p in parts:
            spans.append((len(comps), len(comps) + len(p.components)))
            comps.extend(p.components)

        def combine(*totals: Any) -> Any:
            return fn(*[p.combine(*totals[a:b]) for p, (a, b) in zip(parts, spans, strict=True)])

        m = self.metric(comps, combine, n=sum(p.n for p in parts),
                        n_cases=max((p.n_cases for p in parts), default=0), **extra)
        self._metrics[m].parts, self._metrics[m].fn = tuple(int(i) for i in metrics), fn
        return m

    def info(self, m: int) -> _Metric:
        return self._metrics[m]

    @property
    def n_metrics(self) -> int:
        return len(self._metrics)

    def column(self, k: int) -> np.ndarray:
        """Component ``k``'s per-case sums."""
        return self._columns[k]

    def resampled_totals(self, n_resamples: int, seed: int) -> np.ndarray:
        """(n_resamples × components) totals over bootstrap resamples of the units (:attr:`unit`): the cases'
        sums are added up per cluster first, and the clusters are resampled."""
        s = self._sum_matrix()
        if self._cluster_of is not None:
            k = self.n_units
            members = sparse.csr_matrix((np.ones(self.n_cases), (self._cluster_of, np.arange(self.n_cases))),
                                        shape=(k, self.n_cases))
            s = members @ s  # clusters × components (dense stays dense, sparse stays sparse)
        c = s.shape[0]
        out = np.empty((n_resamples, s.shape[1]))
        if c == 0 or n_resamples == 0:
            out.fill(np.nan)
            return out
        for start, w in case_multiplicities(c, n_resamples, seed):
            out[start: start + len(w)] = np.asarray((s.T @ w.T).T) if sparse.issparse(s) else w @ s
        return out

    def _sum_matrix(self) -> Any:
        """Cases × components sums: dense for BLAS when dense enough, else CSC sparse."""
        if not self._columns:
            return np.zeros((self.n_cases, 0))
        nnz = sum(int(np.count_nonzero(col)) for col in self._columns)
        if nnz > SPARSE_BELOW * self.n_cases * len(self._columns):
            return np.column_stack(self._columns)
        rows = [np.flatnonzero(col) for col in self._columns]
        data = np.concatenate([col[r] for col, r in zip(self._columns, rows, strict=True)])
        indptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])])
        return sparse.csc_matrix((data, np.concatenate(rows), indptr), shape=(self.n_cases, len(self._columns)))

    def evaluate(self, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> list[dict[str, Any]]:
        """Point value, 95% percentile interval, n and n_cases of every metric, in registration order."""
        return self.evaluate_draws(n_resamples, seed)[0]

    def evaluate_draws(self, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0, keep: Sequence[int] = ()
                       ) -> tuple[list[dict[str, Any]], dict[int, np.ndarray]]:
        """:meth:`evaluate`, and the resampled values of the metrics ``keep`` (one per resample, NaN where
        undefined, aligned across metrics: the same resamples, so a difference of two is paired by case)."""
        s_total = np.array([col.sum() for col in self._columns])
        boot = self.resampled_totals(n_resamples, seed)
        results: list[dict[str, Any]] = []
        kept: dict[int, np.ndarray] = {}
        wanted = set(keep)
        for i, m in enumerate(self._metrics):
            value = _finite(m.combine(*[s_total[k] for k in m.components]))
            lo = hi = None
            if i in wanted:
                with np.errstate(divide="ignore", invalid="ignore"):
                    kept[i] = np.asarray(m.combine(*[boot[:, k] for k in m.components]), dtype=float)
            if value is not None and n_resamples > 0:
                lo, hi = percentile_interval(m.combine(*[boot[:, k] for k in m.components]))
            results.append({"value": value, "lo": lo, "hi": hi, "n": m.n, "n_cases": m.n_cases,
                            "low_n": m.n_cases < LOW_N_CASES, **m.extra})
        return results, kept


def case_multiplicities(n_cases: int, n_resamples: int, seed: int) -> Iterator[tuple[int, np.ndarray]]:
    """The case bootstrap's resamples, in chunks: ``(first resample, multiplicities)`` with multiplicities a
    (resamples × cases) float array (how often each case is drawn). Every bootstrap of medr2 draws its resamples
    here (:meth:`MetricBook.resampled_totals`, ``medr2.scoring.calibration``), so the same seed gives the same
    resamples to every metric."""
    if n_cases == 0 or n_resamples == 0:
        return
    c = n_cases
    rng = np.random.default_rng(seed)
    chunk = max(1, min(n_resamples, CHUNK_CELLS // max(c, 1)))
    for start in range(0, n_resamples, chunk):
        b = min(chunk, n_resamples - start)
        idx = rng.integers(0, c, size=(b, c), dtype=np.int32 if c < 2**31 else np.int64).astype(np.int64)
        idx += (np.arange(b, dtype=np.int64) * c)[:, None]
        w = np.bincount(idx.ravel(), minlength=b * c).reshape(b, c).astype(np.float64)
        del idx
        yield start, w


def percentile_interval(draws: Any) -> tuple[float | None, float | None]:
    """The 95% percentile interval of the finite resampled values (None, None when there are none)."""
    d = np.asarray(draws, dtype=float)
    d = d[np.isfinite(d)]
    if not d.size:
        return None, None
    alpha = (1 - CI_LEVEL) / 2
    lo, hi = np.quantile(d, [alpha, 1 - alpha])
    return float(lo), float(hi)


def _cluster_index(cases: Sequence[str], clusters: Mapping[str, str] | None) -> np.ndarray | None:
    """Per case (in the book's order) its cluster's number, clusters numbered as they first appear; None when no
    cluster holds two of ``cases`` (each case its own unit: the case bootstrap, same draws as without
    clusters). A case ``clusters`` does not name is a cluster of its own."""
    if not clusters:
        return None
    numbers: dict[str, int] = {}
    idx = np.fromiter((numbers.setdefault(clusters.get(c, "\x00case:" + c), len(numbers)) for c in cases),
                      dtype=np.int64, count=len(cases))
    return idx if len(numbers) < len(cases) else None


def _finite(x: Any) -> float | None:
    v = float(np.asarray(x, dtype=float))
    return v if np.isfinite(v) else None


def nanmean_stack(*values: Any) -> Any:
    """Macro mean ignoring undefined parts (NaN), vectorised over resamples."""
    arr = np.stack([np.asarray(v, dtype=float) for v in values])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all parts undefined -> NaN
        return np.nanmean(arr, axis=0)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error at the nominal level over the family)."""
    p = np.asarray(pvalues, dtype=float)
    m = p.size
    order = np.argsort(p, kind="stable")
    adj = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, float(p[i]) * (m - rank)))
        adj[i] = running
    return [float(x) for x in adj]


def bootstrap_z_test(estimate: float, draws: np.ndarray) -> dict[str, Any]:
    """Two-sided Wald test of "the quantity is 0", its standard error the standard deviation of its case-bootstrap
    ``draws`` (NaN draws dropped): ``z = estimate / se``, ``p = 2 Φ(−|z|)``. The draws carry the sampling design
    (cases resampled whole, shared resamples), so the test is paired where the two sides share cases and a
    two-sample test where they do not. ``p = None`` with fewer than 20 finite draws."""
    d = np.asarray(draws, dtype=float)
    d = d[np.isfinite(d)]
    if d.size < 20:
        return {"p": None, "z": None, "se": None, "method": "bootstrap z"}
    se = float(np.std(d, ddof=1))
    if se == 0.0:
        return {"p": 1.0 if estimate == 0 else 0.0, "z": None, "se": 0.0, "method": "bootstrap z"}
    z = float(estimate) / se
    return {"p": math.erfc(abs(z) / math.sqrt(2.0)), "z": z, "se": se, "method": "bootstrap z"}  # 2 Φ(−|z|)


def difference(a: Any, b: Any) -> Any:
    return np.asarray(a, dtype=float) - np.asarray(b, dtype=float)


def mcnemar_exact(first_correct: np.ndarray, second_correct: np.ndarray) -> dict[str, float | int]:
    """Exact (binomial) McNemar test on paired binary outcomes; p = 1 when there are no discordant pairs."""
    a = np.asarray(first_correct, dtype=bool)
    b = np.asarray(second_correct, dtype=bool)
    return mcnemar_from_counts(int(np.sum(a & ~b)), int(np.sum(~a & b)), int(a.size))


def mcnemar_from_counts(only_first: int, only_second: int, n_pairs: int) -> dict[str, float | int]:
    """:func:`mcnemar_exact` from its discordant counts and the number of pairs."""
    from scipy.stats import binomtest

    n = only_first + only_second
    p = 1.0 if n == 0 else float(binomtest(only_first, n, 0.5, alternative="two-sided").pvalue)
    return {"p": p, "only_first": only_first, "only_second": only_second, "n_pairs": n_pairs}


def clustered_mcnemar(first_correct: np.ndarray, second_correct: np.ndarray, unit_idx: np.ndarray, *,
                      unit: str = "case") -> dict[str, Any]:
    """Cluster-aware McNemar test on paired binary outcomes grouped by their sampling unit (``unit_idx``: per
    pair, its case, or its patient: :meth:`MetricBook.unit_index`; ``unit`` names which).

    Per unit ``k``, ``d_k`` = pairs right only in the first condition − pairs right only in the second.
    Under the null (no difference), each unit's ``d_k`` is symmetric about 0 whatever the correlation of
    the items inside the unit. The statistic is Durkalski et al. (2003)'s ``X² = (Σ d_k)² / Σ d_k²``
    (chi-square, 1 df); when at most ``EXACT_SIGN_FLIP_MAX`` units have ``d_k ≠ 0``, ``p`` is instead the
    exact sign-flip (randomisation) p-value ``P(|Σ s_k d_k| ≥ |Σ d_k|)`` over all ``s_k = ±1``.
    ``p = 1`` without discordant pairs."""
    a = np.asarray(first_correct, dtype=bool)
    b = np.asarray(second_correct, dtype=bool)
    idx = np.asarray(unit_idx, dtype=np.int64)
    if a.size == 0:
        return clustered_mcnemar_from(np.zeros(0), 0, 0, 0, 0, unit=unit, n_units=0)
    _, inv = np.unique(idx, return_inverse=True)
    d = np.bincount(inv, weights=(a & ~b).astype(float) - (~a & b).astype(float))
    n_units = int(np.unique(idx).size)
    return clustered_mcnemar_from(d[d != 0], int(np.sum(a & ~b)), int(np.sum(~a & b)), int(a.size), n_units,
                                  unit=unit, n_units=n_units)


def clustered_mcnemar_from(d: np.ndarray, only_first: int, only_second: int, n_pairs: int, n_cases: int, *,
                           unit: str = "case", n_units: int | None = None) -> dict[str, Any]:
    """:func:`clustered_mcnemar` from the non-zero per-unit differences ``d`` (integers: in any order) and the
    counts it reports (so that cases counted in separate chunks can be tested together); ``unit`` and
    ``n_units``: what ``d`` is summed over (cases, or patients) and how many of them the pairs span."""
    d = np.asarray(d, dtype=float)
    out: dict[str, Any] = {"only_first": only_first, "only_second": only_second, "n_pairs": n_pairs,
                           "n_cases": n_cases, "unit": unit, "n_units": n_cases if n_units is None else n_units}
    if n_pairs == 0:
        return {"p": 1.0, "statistic": 0.0, "method": "none", **out}
    denom = float(np.sum(d * d))
    stat = float(np.sum(d)) ** 2 / denom if denom > 0 else 0.0
    if d.size == 0:
        return {"p": 1.0, "statistic": 0.0, "method": "none", **out}
    if d.size <= EXACT_SIGN_FLIP_MAX:
        signs = ((np.arange(1 << d.size)[:, None] >> np.arange(d.size)[None, :]) & 1) * 2 - 1
        totals = np.abs(signs @ d)
        observed = abs(float(np.sum(d)))
        p = float(np.mean(totals >= observed - 1e-9))
        return {"p": p, "statistic": stat, "method": "sign-flip exact", **out}
    from scipy.stats import chi2

    return {"p": float(chi2.sf(stat, 1)), "statistic": stat, "method": "durkalski", **out}


def bootstrap_mean(case_ids: Sequence[str], values: Sequence[float], seed: int = 0,
                   n_resamples: int = DEFAULT_RESAMPLES, clusters: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Mean of per-item values with a bootstrap 95% interval over cases, or over their ``clusters`` (convenience
    for single metrics)."""
    book = MetricBook(case_ids, clusters)
    book.ratio_metric(book.case_index(case_ids), np.asarray(values, dtype=float))
    return book.evaluate(n_resamples, seed)[0]


def paired_delta(case_ids: Sequence[str], first: Sequence[float], second: Sequence[float], seed: int = 0,
                 n_resamples: int = DEFAULT_RESAMPLES, clusters: Mapping[str, str] | None = None) -> dict[str, Any]:
    """mean(first) − mean(second) over paired units, with a paired bootstrap interval (cases, or ``clusters``)."""
    book = MetricBook(case_ids, clusters)
    idx = book.case_index(case_ids)
    a = book.ratio_metric(idx, np.asarray(first, dtype=float))
    b = book.ratio_metric(idx, np.asarray(second, dtype=float))
    book.derived([a, b], difference)
    return book.evaluate(n_resamples, seed)[2]
