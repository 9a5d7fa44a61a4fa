"""Patient groups: cases sharing a ``patient_id`` or a ``background`` (source image) are one group. The groups a
patient split keeps together (:mod:`medr2.tasks.splits`) and the clusters the score's bootstrap resamples
(:class:`medr2.scoring.stats.MetricBook`, :func:`medr2.bench.format.case_clusters`). Part of the bench layer (the
foundation), so both the builder and the bench readers use the one definition."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol


class ClusterRecord(Protocol):
    """What grouping needs of a case (a :class:`medr2.records.Case`, a split key, ...)."""

    @property
    def case_id(self) -> str: ...
    @property
    def patient_id(self) -> str: ...
    @property
    def background(self) -> str | None: ...


class ClusterKey(NamedTuple):
    """The three fields of a case that decide its group (a reader's row of ``cases.parquet``)."""

    case_id: str
    patient_id: str
    background: str | None


def patient_groups(cases: Sequence[ClusterRecord]) -> dict[str, str]:
    """Case id -> its patient group: cases sharing a ``patient_id`` or a ``background`` (source image) are one
    group (union-find), named by its smallest member key. The groups a patient split keeps together, and the
    clusters the score's bootstrap resamples (:class:`medr2.scoring.stats.MetricBook`)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    for c in cases:
        p = f"p:{c.patient_id}"
        find(p)
        if c.background:
            union(p, f"b:{c.background}")
    return {c.case_id: find(f"p:{c.patient_id}") for c in cases}
