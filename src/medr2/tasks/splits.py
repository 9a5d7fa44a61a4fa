"""Leakage-free splits: cases sharing a patient or a source image always land in the same split.

The split unit is a build option (``medr2 build --split-unit``, recorded as ``build.split_unit``):

- ``patient`` (default): cases sharing a ``patient_id`` or a ``background`` form one group;
- ``case``: every case is its own group (hashed by its case id), so crops, windows, lesions and
  degradations of one background can land in different splits. The test split then measures whether a
  model reads the lesions and image attributes of images whose backgrounds it has seen, not generalisation
  to new patients (the demo's bench, docs/demo.md). A source-given split still wins.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from medr2.bench.clusters import ClusterRecord, patient_groups


class SplitRecord(ClusterRecord, Protocol):
    """What a split needs of a case (a :class:`medr2.records.Case` or a :class:`SplitKey`): what grouping needs,
    and the split its source gave."""

    @property
    def split(self) -> str | None: ...


class SplitKey(NamedTuple):
    """The four fields of a case that decide its split (lets a builder drop the rest of the case)."""

    case_id: str
    patient_id: str
    background: str | None
    split: str | None

SPLIT_SHARES = (("train", 60), ("val", 10), ("test", 30))  # percent
_RESTRICTIVE = {"train": 0, "val": 1, "test": 2}


def hashed_split(key: str) -> str:
    bucket = int(hashlib.sha256(f"medr2-split:{key}".encode()).hexdigest()[:8], 16) % 100
    acc = 0
    for name, share in SPLIT_SHARES:
        acc += share
        if bucket < acc:
            return name
    return SPLIT_SHARES[-1][0]


@dataclass(frozen=True)
class SplitAssignment:
    by_case: dict[str, str]
    conflicts: int  # cases whose source split was overridden to keep a patient group together


def assign_splits(cases: Sequence[SplitRecord], unit: str = "patient") -> SplitAssignment:
    """The split of every case, grouped by ``unit`` (a key of :data:`SPLIT_UNITS`)."""
    try:
        group = SPLIT_UNITS[unit]
    except KeyError:
        raise ValueError(f"unknown split unit {unit!r} (known: {', '.join(SPLIT_UNITS)})") from None
    return group(cases)


def _by_case(cases: Sequence[SplitRecord]) -> SplitAssignment:
    """Each case is its own group: its source's split, else a hash of its case id."""
    return SplitAssignment({c.case_id: c.split or hashed_split(f"case:{c.case_id}") for c in cases}, 0)


def _by_patient(cases: Sequence[SplitRecord]) -> SplitAssignment:
    """Group cases by shared ``patient_id`` or ``background`` (:func:`patient_groups`); a group takes the split
    its source gave (the most held-out one if they disagree), else a hash of its smallest patient id."""
    group_of = patient_groups(cases)
    groups: dict[str, list[SplitRecord]] = {}
    for c in cases:
        groups.setdefault(group_of[c.case_id], []).append(c)
    by_case: dict[str, str] = {}
    conflicts = 0
    for members in groups.values():
        given = {c.split for c in members if c.split}
        if given:
            split = max(given, key=lambda s: _RESTRICTIVE[s])
            conflicts += sum(1 for c in members if c.split and c.split != split)
        else:
            split = hashed_split(min(c.patient_id for c in members))
        for c in members:
            by_case[c.case_id] = split
    return SplitAssignment(by_case, conflicts)


# the split units (``medr2 build --split-unit``): name -> how cases are grouped
SPLIT_UNITS: dict[str, Callable[[Sequence[SplitRecord]], SplitAssignment]] = {"patient": _by_patient,
                                                                                "case": _by_case}
