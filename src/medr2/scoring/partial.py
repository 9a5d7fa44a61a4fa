"""The parts of a metric tree that are not per-case sums, kept so that chunks of cases can be merged.

A metric group (``medr2.scoring.metrics``) puts these in its tree where a value is not a bootstrapped metric:
the McNemar tests of a paired comparison (:class:`PairTests`, read through :class:`TestView`) and the units
of an accuracy task (:class:`TaskUnits`: its mean chance, whose float bits depend on the order it is summed
in). Each merges with the same part of another chunk of cases (``merge``) and gives its ``metrics.json``
value (``resolve``) once every chunk is in (:mod:`medr2.scoring.aggregate`); :data:`DROP` leaves a key out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from medr2.scoring.stats import MetricBook, clustered_mcnemar_from, mcnemar_from_counts

DROP = object()  # a resolved value that leaves its key out of the tree


@dataclass(eq=False)
class PairTests:
    """Exact McNemar and the cluster-aware test of ``first`` vs ``second`` over paired binary outcomes, kept
    as their counts and, per case the pairs span, the case's difference ``d`` (pairs right only in ``first`` −
    right only in ``second``): in ``parts``, one per chunk of cases, as (the chunk's case ids, the positions of
    these cases among them, their ``d``). The cluster-aware test sums ``d`` over the sampling unit of the book it
    is resolved with (:meth:`medr2.scoring.stats.MetricBook.unit_index`: patients where cases share one, else
    cases), so it groups what the intervals beside it resample, even where one patient's cases were counted in
    different chunks. ``valid`` false: the outcomes are not binary, and neither test is reported."""

    only_first: int
    only_second: int
    n_pairs: int
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
    valid: bool = True

    @property
    def n_cases(self) -> int:
        return sum(int(pos.size) for _, pos, _ in self.parts)

    @classmethod
    def of(cls, first: np.ndarray, second: np.ndarray, case_idx: np.ndarray, cases: np.ndarray | None = None, *,
           valid: bool = True) -> PairTests:
        """From each pair's case: its position ``case_idx`` in ``cases`` (a chunk's case ids, e.g.
        :attr:`medr2.scoring.stats.MetricBook.case_array`), or, without ``cases``, its id."""
        a, b = np.asarray(first, dtype=bool), np.asarray(second, dtype=bool)
        if cases is None:
            cases, case_idx = np.unique(np.asarray(case_idx, dtype=object), return_inverse=True)
        idx = np.asarray(case_idx, dtype=np.int64)
        parts = []
        if a.size:
            pos, inv = np.unique(idx, return_inverse=True)
            d = np.bincount(inv, weights=(a & ~b).astype(float) - (~a & b).astype(float), minlength=pos.size)
            parts.append((cases, pos, d))
        return cls(int(np.sum(a & ~b)), int(np.sum(~a & b)), int(a.size), parts, valid)

    def merge(self, other: PairTests) -> PairTests:
        """Two chunks' pairs (each case in one chunk: the scorer's chunks are of whole cases)."""
        return PairTests(self.only_first + other.only_first, self.only_second + other.only_second,
                         self.n_pairs + other.n_pairs, self.parts + other.parts, self.valid and other.valid)

    def by_unit(self, book: MetricBook | None) -> tuple[np.ndarray, str, int]:
        """The non-zero per-unit differences, the unit's name and how many units the pairs span, the units
        being ``book``'s (cases without a book)."""
        d = np.concatenate([part[2] for part in self.parts]) if self.parts else np.zeros(0)
        if book is None or not d.size:
            return d[d != 0], "case", self.n_cases
        units = np.concatenate([book.units_of(cases)[pos] for cases, pos, _ in self.parts])
        found, inv = np.unique(units, return_inverse=True)
        per_unit = np.bincount(inv, weights=d, minlength=found.size)
        return per_unit[per_unit != 0], book.unit, int(found.size)


@dataclass(eq=False)
class TestView:
    """One of the two blocks of a :class:`PairTests`: ``"mcnemar"`` (exact, item level) or ``"cluster_test"``."""

    tests: PairTests
    kind: str

    def merge(self, other: TestView) -> TestView:
        return TestView(self.tests.merge(other.tests), self.kind)

    def resolve(self, book: MetricBook | None = None) -> Any:
        """The block's ``metrics.json`` value; the cluster-aware test over ``book``'s sampling unit."""
        t = self.tests
        if not t.valid:
            return DROP
        if self.kind == "mcnemar":
            return {**mcnemar_from_counts(t.only_first, t.only_second, t.n_pairs), "n_cases": t.n_cases}
        d, unit, n_units = t.by_unit(book)
        return clustered_mcnemar_from(d, t.only_first, t.only_second, t.n_pairs, t.n_cases, unit=unit,
                                      n_units=n_units)


def pair_tests(first: np.ndarray, second: np.ndarray, case_idx: np.ndarray, cases: np.ndarray | None = None, *,
               valid: bool = True) -> dict[str, TestView]:
    """``{"mcnemar": ..., "cluster_test": ...}`` of one paired comparison (each pair's case: see
    :meth:`PairTests.of`)."""
    t = PairTests.of(first, second, case_idx, cases, valid=valid)
    return {"mcnemar": TestView(t, "mcnemar"), "cluster_test": TestView(t, "cluster_test")}


# order key of an accuracy unit: (0, row order) for a row, (1, variant, pair id) for a yes/no pair; the units of
# a task are ordered by it (rows in stored order, then pairs as ``groupby(["variant", "pair_id"])`` sorts them)
UnitKey = tuple[Any, ...]


@dataclass(eq=False)
class TaskUnits:
    """The accuracy units of one task as its chance needs them: per unit its order key and chance; and the
    form and stage of the first unit."""

    rest_order: np.ndarray
    rest_chance: np.ndarray
    pair_keys: list[tuple[Any, Any]]
    pair_chance: np.ndarray
    first: UnitKey
    form: str
    stage: int

    @classmethod
    def of(cls, units: pd.DataFrame) -> TaskUnits:
        """From units of :func:`medr2.scoring.metrics.accuracy_units` (with ``_order``, -1 for a pair, and
        ``_pair`` = (variant, pair id) when made with keys; else the units' own order)."""
        if "_order" in units.columns:
            order = units["_order"].to_numpy(dtype=np.int64)
            rest = order >= 0
            pairs = units["_pair"].to_numpy(dtype=object)[~rest].tolist()
        else:
            order = np.arange(len(units), dtype=np.int64)
            rest = np.ones(len(units), dtype=bool)
            pairs = []
        chance = units["chance"].to_numpy(dtype=np.float64)
        first: UnitKey = (0, int(order[0])) if rest[0] else (1, *units["_pair"].iloc[0])
        return cls(order[rest], chance[rest], pairs, chance[~rest], first, str(units["form"].iloc[0]),
                   int(units["stage"].iloc[0]))

    def merge(self, other: TaskUnits) -> TaskUnits:
        head = self if self.first <= other.first else other
        return TaskUnits(np.concatenate([self.rest_order, other.rest_order]),
                         np.concatenate([self.rest_chance, other.rest_chance]), self.pair_keys + other.pair_keys,
                         np.concatenate([self.pair_chance, other.pair_chance]), head.first, head.form, head.stage)

    def chance(self) -> float:
        """The mean chance of the units, summed in their order (as over the whole table)."""
        rest = self.rest_chance[np.argsort(self.rest_order, kind="stable")]
        by_key = sorted(range(len(self.pair_keys)), key=self.pair_keys.__getitem__)
        values = np.concatenate([rest, self.pair_chance[np.asarray(by_key, dtype=np.int64)]])
        return float(pd.Series(values).mean())
