"""Metrics from chunks of whole cases: memory O(cases × metric cells), not O(scored rows).

Every pairing the metrics make (a variant and its parent, siblings of one parent, yes/no twins, chain steps,
consistency groups, the blind-mode join) stays inside one case, and every bootstrapped metric is a function
of per-case sums (:class:`medr2.scoring.stats.MetricBook`). So :class:`MetricsAccumulator` runs the metric
groups on one chunk of cases at a time (``add``: a tidy table of whole cases, rows in their stored order),
keeps per metric its per-case sums over the chunk's cases, named by the metric's path in the tree, and
drops the rows. ``finish`` lays the chunks' sums side by side into one book over every case, registered in
the order one whole-table pass registers them (so the bootstrap, which resamples cases, sees the same
matrix and gives the same bytes), and resolves the parts kept for merging (:mod:`medr2.scoring.partial`).

What is not a per-case sum and must be known for every chunk before one is computed: the lowest severity
per variant code (consistency; ``severity_floors``, :class:`medr2.scoring.table.SeverityFloors`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from medr2.scoring.metrics import Ctx, Ref, drop_unseen_rates, finish_accuracy, mode_tree, resolve
from medr2.scoring.stats import DEFAULT_RESAMPLES, Combine, MetricBook, seed_for

Key = tuple[str, ...]
# path element of a metric registered but not placed in the tree (e.g. both sides of a paired delta): it is
# named after the next metric that is placed, which the same code path always registers after it
_BEFORE, _AFTER = "\x00before", "\x00after"


@dataclass
class _Piece:
    """One metric, over the chunks seen so far: per chunk its components' per-case sums."""

    combine: Combine | None  # None for a derived metric (``fn`` of its parts' values)
    extra: dict[str, Any]
    parts: tuple[Key, ...] | None = None  # a derived metric: the metrics it is computed from
    fn: Combine | None = None
    n: int = 0
    n_cases: int = 0
    sums: list[tuple[int, list[np.ndarray]]] = field(default_factory=list)


@dataclass(eq=False)
class _KeyRef:
    key: Key
    extra: dict[str, Any]


@dataclass(eq=False)
class ChunkMetric:
    """One metric of one chunk, named by its path in the tree: what it is computed from (its components'
    per-case sums over the chunk's cases, or, derived, the metrics ``parts`` and ``fn``)."""

    key: Key
    combine: Combine | None
    extra: dict[str, Any]
    parts: tuple[Key, ...] | None
    fn: Combine | None
    n: int
    n_cases: int
    sums: list[np.ndarray] | None


@dataclass(eq=False)
class ChunkMetrics:
    """Every metric group run on one chunk of whole cases (:func:`chunk_metrics`), as numbers: the chunk's cases
    (sorted), its metrics in registration order, its trees per mode with each metric named by its key, and its
    model keys. Nothing refers to the chunk's rows, so a worker process can compute it and send it back (it
    pickles when the metric groups' combine functions do: the built-in ones are module-level functions)."""

    cases: list[str]
    metrics: list[ChunkMetric]
    trees: dict[str, Any]
    models: list[str]
    rows: int


def chunk_metrics(rows: pd.DataFrame, severity_floors: Mapping[str, Mapping[str, float]] | None = None,
                  first_row: int = 0) -> ChunkMetrics:
    """Compute every metric group on ``rows`` (whole cases, in stored order; an ``_order`` column, when given,
    orders them among every chunk's rows, else they are numbered from ``first_row``) and keep their per-case
    sums (see :meth:`MetricsAccumulator.add`): a pure function of its arguments."""
    if "_order" not in rows.columns:
        rows = rows.assign(_order=np.arange(first_row, first_row + len(rows), dtype=np.int64))
    book = MetricBook(rows["case_id"].astype(str).unique().tolist())
    trees: dict[str, Any] = {}
    for mode, df in rows.groupby("mode", sort=True):
        floor = None if severity_floors is None else severity_floors.get(str(mode), {})
        trees[str(mode)] = mode_tree(Ctx(book=book, rows=df, mode=str(mode), all_rows=rows, partial=True,
                                         severity_floor=floor))
    keys: dict[int, Key] = {}

    def walk(node: Any, path: Key) -> Any:
        if isinstance(node, Ref):
            keys.setdefault(node.index, path)
            return _KeyRef(path, {k: walk(v, (*path, k)) for k, v in node.extra.items()})
        if isinstance(node, dict):
            return {k: walk(v, (*path, str(k))) for k, v in node.items()}
        return node

    keyed = {mode: walk(t, (mode,)) for mode, t in trees.items()}
    pending: list[int] = []
    last: Key = ()
    for i in range(book.n_metrics):
        if i not in keys:
            pending.append(i)
            continue
        for j, anon in enumerate(pending):
            keys[anon] = (*keys[i], _BEFORE, str(j))
        pending, last = [], keys[i]
    for j, anon in enumerate(pending):
        keys[anon] = (*last, _AFTER, str(j))
    metrics: list[ChunkMetric] = []
    for i in range(book.n_metrics):
        m = book.info(i)
        if m.parts is None:
            metrics.append(ChunkMetric(keys[i], m.combine, dict(m.extra), None, None, m.n, m.n_cases,
                                       [book.column(c) for c in m.components]))
        else:
            metrics.append(ChunkMetric(keys[i], None, dict(m.extra), tuple(keys[p] for p in m.parts), m.fn,
                                       m.n, m.n_cases, None))
    return ChunkMetrics(list(book.cases), metrics, keyed, rows["model_key"].astype(str).unique().tolist(),
                        len(rows))


class MetricsAccumulator:
    """``add`` chunks of whole cases (each case in one chunk), or ``absorb`` their :func:`chunk_metrics`, then
    ``finish``: ``compute_metrics``'s dict."""

    def __init__(self) -> None:
        self._chunks: list[list[str]] = []
        self._order: list[Key] = []
        self._pieces: dict[Key, _Piece] = {}
        self._trees: dict[str, Any] = {}
        self._models: set[str] = set()
        self._rows = 0

    def add(self, rows: pd.DataFrame, severity_floors: Mapping[str, Mapping[str, float]] | None = None) -> None:
        """Compute every metric group on ``rows`` (whole cases, in stored order; an ``_order`` column, when
        given, orders them among every chunk's rows) and keep their per-case sums. ``severity_floors``: per
        mode, the lowest severity per code over every chunk (required when there is more than one chunk)."""
        if rows.empty:
            return
        self.absorb(chunk_metrics(rows, severity_floors, self._rows))

    def absorb(self, chunk: ChunkMetrics) -> None:
        """Keep one chunk's metrics (:func:`chunk_metrics`; chunks absorbed in order give what :meth:`add` of
        their rows in that order gives)."""
        if not chunk.rows:
            return
        self._rows += chunk.rows
        self._models.update(chunk.models)
        index = len(self._chunks)
        self._chunks.append(chunk.cases)
        prev: Key | None = None
        for m in chunk.metrics:
            piece = self._pieces.get(m.key)
            if piece is None:
                piece = self._pieces[m.key] = _Piece(m.combine, m.extra, m.parts, m.fn)
                self._order.insert(0 if prev is None else self._order.index(prev) + 1, m.key)
            prev = m.key
            if piece.parts is None:
                assert m.sums is not None
                piece.n += m.n
                piece.n_cases += m.n_cases
                piece.sums.append((index, m.sums))
        self._trees = _merge(self._trees, chunk.trees)

    def finish(self, seed: int = 0, n_resamples: int = DEFAULT_RESAMPLES,
               clusters: Mapping[str, str] | None = None) -> dict[str, Any]:
        """Every metric of every mode with its 95% bootstrap interval (as ``compute_metrics``): over patients
        where ``clusters`` (case id -> patient group) puts several cases in one, else over cases."""
        cases = [c for chunk in self._chunks for c in chunk]
        book = MetricBook(cases, clusters)
        if book.n_cases != len(cases):
            raise ValueError("a case's rows were added in more than one chunk")
        where = [book.case_index(np.asarray(chunk, dtype=object)) for chunk in self._chunks]
        index: dict[Key, int] = {}
        for key in self._order:
            piece = self._pieces.pop(key)
            if piece.parts is not None:
                assert piece.fn is not None
                index[key] = book.derived([index[k] for k in piece.parts], piece.fn, **piece.extra)
                continue
            comps = []
            for r in range(len(piece.sums[0][1])):
                col = np.zeros(book.n_cases)
                for chunk, sums in piece.sums:
                    col[where[chunk]] = sums[r]
                comps.append(book.add_column(col))
            piece.sums.clear()
            assert piece.combine is not None
            index[key] = book.metric(comps, piece.combine, n=piece.n, n_cases=piece.n_cases, **piece.extra)
        trees: dict[str, Any] = {}
        for mode, keyed in self._trees.items():
            tree = _refs(keyed, index)
            tree.update(finish_accuracy(book, tree.pop("tasks")))
            trees[mode] = tree
        results = book.evaluate(n_resamples, seed_for(seed, "bootstrap"))
        models = sorted(self._models)
        return {
            "model_key": models[0] if len(models) == 1 else models,
            "bootstrap": {**book.bootstrap_info(), "n_resamples": n_resamples, "level": 0.95, "seed": seed,
                          "n_cases": book.n_cases},
            "modes": {m: drop_unseen_rates(resolve(t, results, book)) for m, t in trees.items()},
        }


def _merge(a: Any, b: Any) -> Any:
    """Two chunks' keyed trees as one: blocks united, metrics' extras merged, parts merged, values: the first."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = dict(a)
        for k, v in b.items():
            out[k] = _merge(out[k], v) if k in out else v
        return out
    if isinstance(a, _KeyRef) and isinstance(b, _KeyRef):
        return _KeyRef(a.key, _merge(a.extra, b.extra))
    if hasattr(a, "merge") and type(a) is type(b):
        return a.merge(b)
    return b if a is None else a


def _refs(node: Any, index: Mapping[Key, int]) -> Any:
    if isinstance(node, _KeyRef):
        return Ref(index[node.key], {k: _refs(v, index) for k, v in node.extra.items()})
    if isinstance(node, dict):
        return {k: _refs(v, index) for k, v in node.items()}
    return node
