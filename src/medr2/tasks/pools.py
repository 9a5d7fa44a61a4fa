"""Label pools built from all cases of a build, and distractor selection.

Distractors for a case come from the same task's pool within the same modality and body region;
when that is too small the modality's pool, then the global pool, then the built-in vocabulary fill
up the rest. Candidates are taken in sorted order and drawn with the caller's rng, so the choice is
deterministic. A candidate equivalent to any true label (see :func:`medr2.tasks.vocab.norm`) is never
returned.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from medr2.records import Case
from medr2.tasks import vocab

POOL_KEYS = ("modality", "plane", "sequence", "body_region", "organ", "landmark", "instance", "finding",
             "diagnosis", "severity", "shape", "margin", "intensity", "location", "laterality")
ATTRIBUTE_KEYS = ("shape", "margin", "intensity", "location", "laterality")


def case_labels(case: Case) -> dict[str, set[str]]:
    """The labels a case contributes to each pool."""
    out: dict[str, set[str]] = {k: set() for k in POOL_KEYS}
    for key in ("modality", "plane", "sequence", "body_region", "diagnosis", "severity"):
        value = getattr(case, key)
        if value:
            out[key].add(value)
    out["diagnosis"].update(case.mimics)
    for s in case.structures:
        kind = {"organ": "organ", "region": "organ", "landmark": "landmark", "instance": "instance"}[s.kind]
        out[kind].add(s.name)
    for f in case.findings:
        out["finding"].add(f.label)
        for key in ATTRIBUTE_KEYS:
            v = f.attributes.get(key)
            if isinstance(v, str) and v:
                out[key].add(v)
    return out


@dataclass
class LabelPools:
    """Pools per key at three levels: (modality, region), modality, global."""

    by_mod_region: dict[str, dict[tuple[str, str], set[str]]] = field(default_factory=dict)
    by_mod: dict[str, dict[str, set[str]]] = field(default_factory=dict)
    glob: dict[str, set[str]] = field(default_factory=dict)

    @classmethod
    def from_cases(cls, cases: Iterable[Case]) -> LabelPools:
        pools = cls.empty()
        for case in cases:
            pools.add_case(case)
        return pools

    @classmethod
    def empty(cls) -> LabelPools:
        return cls({k: {} for k in POOL_KEYS}, {k: {} for k in POOL_KEYS}, {k: set() for k in POOL_KEYS})

    def add_case(self, case: Case) -> None:
        """Add the labels of one case (pools are sets: the order cases are added in does not matter)."""
        mod, reg = vocab.norm(case.modality), vocab.norm(case.body_region or "")
        for key, labels in case_labels(case).items():
            if not labels:
                continue
            self.by_mod_region[key].setdefault((mod, reg), set()).update(labels)
            self.by_mod[key].setdefault(mod, set()).update(labels)
            self.glob[key].update(labels)

    def levels(self, key: str, case: Case) -> list[list[str]]:
        mod, reg = vocab.norm(case.modality), vocab.norm(case.body_region or "")
        return [
            sorted(self.by_mod_region.get(key, {}).get((mod, reg), ())),
            sorted(self.by_mod.get(key, {}).get(mod, ())),
            sorted(self.glob.get(key, ())),
            list(vocab.builtin(key, case.modality)),
        ]

    def distractors(self, key: str, case: Case, true_labels: Iterable[str], k: int, rng: np.random.Generator,
                    *, min_k: int | None = None, levels: list[list[str]] | None = None) -> list[str]:
        """Up to ``k`` labels from the pool of ``key`` none of which is equivalent to a true label.

        Raises :class:`medr2.tasks.spec.Skip` when fewer than ``min_k`` (default ``k``) are available.
        """
        from medr2.tasks.spec import Skip

        true_labels = list(true_labels)
        taken = {vocab.norm(t) for t in true_labels}
        # a merged class of a dataset ("nodule/mass") is partly true of each of its parts, and the reverse
        parts = {vocab.norm(p) for t in true_labels for p in _slash_parts(t)}
        taken |= parts
        chosen: list[str] = []
        for level in levels if levels is not None else self.levels(key, case):
            need = k - len(chosen)
            if need <= 0:
                break
            cands: list[str] = []
            for c in level:
                n = vocab.norm(c)
                if n not in taken and not any(vocab.norm(p) in taken for p in _slash_parts(c)):
                    taken.add(n)
                    cands.append(c)
            if not cands:
                continue
            idx = sorted(rng.choice(len(cands), size=min(need, len(cands)), replace=False).tolist())
            chosen.extend(cands[i] for i in idx)
        if len(chosen) < (k if min_k is None else min_k):
            raise Skip(f"too few distinct {key} labels for distractors")
        return chosen


def _slash_parts(label: str) -> list[str]:
    """The parts of a merged label written with ``/`` (VinDr-CXR ``Nodule/Mass``, ISIC ``AKIEC``); none
    for a plain label."""
    return [p.strip() for p in label.split("/") if p.strip()] if "/" in label else []
