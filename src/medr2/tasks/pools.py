"""Label pools built from all cases of a build, and distractor selection.

Distractors for a case come from the same task's pool within the same modality and body region. How
far they may reach when that pool is too small depends on the key (:data:`SCOPE`, docs/tasks.md):

- ``region`` keys (organ, landmark, instance, finding, diagnosis, location): anatomy rules out anything
  from another body region or modality, so only the (modality, region) pool, then the built-in labels of
  that modality family and region (:func:`medr2.tasks.vocab.builtin_for_region`);
- ``modality`` keys (plane, sequence, intensity, body region): the (modality, region) pool, the
  modality's pool, then the built-in labels for that modality (none for an unknown modality);
- ``any`` keys (modality, shape, margin, laterality, severity): then also the global pool and the
  generic built-in vocabulary.

Too few candidates -> :class:`medr2.tasks.spec.Skip`. ``wide=True`` (used for the absent statement of a
yes/no twin, where a label from elsewhere is still certainly absent) reaches as far as ``any``.
Candidates are taken in sorted order and drawn with the caller's rng, so the choice is deterministic.
A candidate equivalent to any true label (see :func:`medr2.tasks.vocab.norm`) is never returned, nor one the
clinical vocabulary relates to a true label (:func:`medr2.vocab.conflicts`: a synonym, sub-type, super-type,
part/whole or co-occurring label), nor a built-in label whose words occur inside a true label or the reverse
("mass" for a "spiculated mass"). For the finding and diagnosis keys every finding and the diagnosis of the
case count as true labels (:func:`case_positives`): an RSNA image whose diagnosis is pneumonia is never asked
about "infiltration" as an absent finding. So do the case's mimics its image cannot rule out
(:func:`medr2.vocab.differential.compatible_mimics`: every mimic the source does not declare discriminable), and their
vocabulary relatives: a mimic is compatible with the image by definition, so "does this image support brain
abscess?" is no false statement for a glioblastoma whose differential lists abscess (:func:`case_compatible`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from medr2.records import Case
from medr2.tasks import vocab
from medr2.tasks.contract import anatomical, states_absent
from medr2.vocab.differential import compatible_mimics

POOL_KEYS = ("modality", "plane", "sequence", "body_region", "organ", "landmark", "instance", "finding",
             "diagnosis", "severity", "shape", "margin", "intensity", "location", "laterality")
ATTRIBUTE_KEYS = ("shape", "margin", "intensity", "location", "laterality")
SCOPE: dict[str, str] = {
    "modality": "any", "shape": "any", "margin": "any", "laterality": "any", "severity": "any",
    "plane": "modality", "sequence": "modality", "intensity": "modality", "body_region": "modality",
    "organ": "region", "landmark": "region", "instance": "region", "finding": "region", "diagnosis": "region",
    "location": "region",
}


def _words(label: str) -> tuple[str, ...]:
    return tuple(w[:-1] if len(w) > 3 and w.endswith("s") else w
                 for w in re.sub(r"[\s_\-]+", " ", label.lower()).split())


def _inside(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    return any(b[i:i + len(a)] == a for i in range(len(b) - len(a) + 1)) if a else False


def overlaps(candidate: str, true_labels: Iterable[str]) -> bool:
    """Whether the words of ``candidate`` occur in a true label or the reverse (plural folded)."""
    c = _words(candidate)
    return any(_inside(c, t) or _inside(t, c) for t in (_words(x) for x in true_labels))


PATHOLOGY_KEYS = frozenset({"finding", "diagnosis"})


def case_positives(case: Case) -> list[str]:
    """What a case has: its finding labels and its diagnosis (unless normal)."""
    out = [f.label for f in case.findings]
    if case.diagnosis and not vocab.is_normal(case.diagnosis):
        out.append(case.diagnosis)
    return out


def case_compatible(case: Case) -> list[str]:
    """What a case's image is compatible with: :func:`case_positives`, the mimics it cannot rule out and the axis
    planes an oblique slice may be named by (``meta["near_planes"]``, :func:`medr2.sources.dicom.planes_near`). None
    of them (nor a synonym, sub-type, super-type, part/whole or co-occurring label of one) is a wrong option or a
    false statement of the case."""
    out = case_positives(case)
    near = [str(p) for p in case.meta.get("near_planes") or () if isinstance(p, str)]  # an oblique slice's axes
    return out + [m for m in (*compatible_mimics(case), *near) if m not in out]


def case_labels(case: Case) -> dict[str, set[str]]:
    """The labels a case contributes to each pool."""
    out: dict[str, set[str]] = {k: set() for k in POOL_KEYS}
    for key in ("modality", "plane", "sequence", "body_region", "diagnosis", "severity"):
        value = getattr(case, key)
        if value:
            out[key].add(value)
    out["diagnosis"].update(case.mimics)
    for s in anatomical(case).structures:
        kind = {"organ": "organ", "region": "organ", "landmark": "landmark", "instance": "instance"}[s.kind]
        out[kind].add(s.name)
    for f in case.findings:
        out["finding"].add(f.label)
        for key in ATTRIBUTE_KEYS:
            v = f.attributes.get(key)
            if key == "location" and isinstance(v, str):
                v = vocab.location_words(v)  # the words a radiologist signs; a tissue class is no location
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

    def levels(self, key: str, case: Case, *, wide: bool = False) -> list[list[str]]:
        """Candidate lists in the order they are tried; the last one is a built-in vocabulary."""
        mod, reg = vocab.norm(case.modality), vocab.norm(case.body_region or "")
        same = sorted(self.by_mod_region.get(key, {}).get((mod, reg), ()))
        scope = "any" if wide else SCOPE.get(key, "any")
        if scope == "region":
            return [same, list(vocab.builtin_for_region(key, case.modality, case.body_region))]
        modality = sorted(self.by_mod.get(key, {}).get(mod, ()))
        if scope == "modality":
            return [same, modality, list(vocab.builtin(key, case.modality))]
        return [same, modality, sorted(self.glob.get(key, ())), list(vocab.builtin(key, case.modality))]

    def distractors(self, key: str, case: Case, true_labels: Iterable[str], k: int, rng: np.random.Generator,
                    *, min_k: int | None = None, levels: list[list[str]] | None = None,
                    wide: bool = False, absent_from: Sequence[Case] = (),
                    refuse: Callable[[str], str | None] | None = None,
                    refused: dict[str, str] | None = None) -> list[str]:
        """Up to ``k`` labels from the pool of ``key`` none of which is equivalent to a true label.

        ``absent_from``: the cases each label must be stated absent from (:func:`medr2.tasks.contract.states_absent`),
        for the wrong answers of a presence question (its "no", the wrong options of "which finding is present");
        the labels the first of them states absent (``Case.absent``) are tried first. ``refuse``: why a label is no
        wrong option of this question (the rendering of the asked lesion shows it too:
        :func:`medr2.tasks.rendered.drop_reason`), or None; a label it refuses is left out and recorded in
        ``refused`` (label -> reason). Raises
        :class:`medr2.tasks.spec.Skip` when fewer than ``min_k`` (default ``k``) are available.
        """
        from medr2.tasks.spec import Skip

        true = list(true_labels)
        if key in PATHOLOGY_KEYS:
            true += [p for p in case_compatible(case) if p not in true]
        taken = {vocab.norm(t) for t in true}
        # a merged class of a dataset ("nodule/mass") is partly true of each of its parts, and the reverse
        taken |= {vocab.norm(p) for t in true for p in _slash_parts(t)}
        all_levels = levels if levels is not None else self.levels(key, case, wide=wide)
        builtin_at = len(all_levels) - 1 if levels is None else -1
        if absent_from:
            stated = list(dict.fromkeys(absent_from[0].absent))
            all_levels = [[c for c in level if all(states_absent(x, c) for x in absent_from)]
                          for level in ([stated] if stated else []) + all_levels]
            builtin_at += 1 if stated and builtin_at >= 0 else 0
        chosen: list[str] = []
        for li, level in enumerate(all_levels):
            need = k - len(chosen)
            if need <= 0:
                break
            builtin_level = li == builtin_at
            cands: list[str] = []
            for c in level:
                n = vocab.norm(c)
                if n not in taken and not any(vocab.norm(p) in taken for p in _slash_parts(c)) and not any(
                        vocab.conflicts(c, t) for t in true) and not (
                        builtin_level and overlaps(c, true)) and not (
                        key == "body_region" and any(vocab.region_related(c, t) for t in true)):
                    taken.add(n)
                    why = refuse(c) if refuse is not None else None
                    if why is not None:
                        if refused is not None:
                            refused[c] = why
                        continue
                    cands.append(c)
            if not cands:
                continue
            idx = sorted(rng.choice(len(cands), size=min(need, len(cands)), replace=False).tolist())
            chosen.extend(_exclusive(cands, idx, chosen, rng))
        if len(chosen) < (k if min_k is None else min_k):
            raise Skip(f"too few distinct {key} labels for distractors")
        return chosen


def _nested(label: str, others: Iterable[str]) -> bool:
    return any(vocab.contains(label, o) for o in others)


def _exclusive(cands: list[str], idx: list[int], chosen: list[str], rng: np.random.Generator) -> list[str]:
    """The candidates ``idx`` drawn from ``cands``, made mutually exclusive with each other and with those
    ``chosen`` before: a draw that contains another option or is part of it (is-a or part-of in the clinical
    vocabulary, :func:`medr2.tasks.vocab.contains`: "glioblastoma" beside "glioma", "whole body" beside "chest")
    is replaced by the next candidate, in a seeded order, that contains none; dropped where none is left. A draw
    with no nested pair is kept as drawn (and draws nothing more)."""
    keep: list[int] = []
    for i in idx:
        if not _nested(cands[i], [*chosen, *(cands[j] for j in keep)]):
            keep.append(i)
    if len(keep) == len(idx):
        return [cands[i] for i in idx]
    for i in (int(j) for j in rng.permutation(len(cands))):
        if len(keep) == len(idx):
            break
        if i not in keep and i not in idx and not _nested(cands[i], [*chosen, *(cands[j] for j in keep)]):
            keep.append(i)
    return [cands[i] for i in sorted(keep)]


def _slash_parts(label: str) -> list[str]:
    """The parts of a merged label written with ``/`` (VinDr-CXR ``Nodule/Mass``, ISIC ``AKIEC``); none
    for a plain label."""
    return [p.strip() for p in label.split("/") if p.strip()] if "/" in label else []
