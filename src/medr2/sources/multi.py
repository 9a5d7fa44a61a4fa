"""Several sources as one: ``medr2 build --source A:PATH --source B:PATH ... [--quota LABEL=N ...]``.

Each source plans its own cases with the build's seed (so each keeps its own deterministic sample);
a quota caps the cases taken from one source (``LABEL`` is the source as written on the command line,
its reader name when only one source uses that reader, or the ``source`` name its mapping gives). The
plan is the sources' plans one after another, in the order given; ``--cases N`` then samples ``N`` of
them with the seed, keeping that order. Cases keep their own source name, licence and access; case ids
are prefixed by the source name, so two sources never share a case.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from medr2.errors import BadInput
from medr2.images import ImageStore
from medr2.records import Case
from medr2.sources.base import Source, get_source
from medr2.sources.common import sample_indices


@dataclass(frozen=True)
class MultiSpec:
    source: int  # index into MultiSource.sources
    spec: Any


def parse_quotas(pairs: Sequence[str]) -> dict[str, int]:
    """``["folder:/data=100", "coco=20"]`` -> ``{label: n}`` (the last ``=`` splits, so paths may hold one)."""
    out: dict[str, int] = {}
    for p in pairs:
        label, sep, n = p.rpartition("=")
        if not sep or not label.strip():
            raise BadInput(f"expected LABEL=N, got {p!r}", field="--quota")
        try:
            k = int(n)
        except ValueError:
            raise BadInput(f"quota must be an integer, got {n!r}", field="--quota") from None
        if k < 1:
            raise BadInput("a quota must be at least 1", field="--quota")
        out[label.strip()] = k
    return out


class MultiSource:
    name = "multi"

    def __init__(self, specs: Sequence[str], quotas: dict[str, int] | None = None) -> None:
        if not specs:
            raise BadInput("no --source given", field="--source")
        if len(set(specs)) != len(specs):
            raise BadInput("the same --source is given twice", field="--source")
        self.specs = list(specs)
        self.sources: list[Source] = [get_source(s) for s in specs]
        self.labels = [self._labels(i) for i in range(len(specs))]
        quotas = dict(quotas or {})
        self.quota: list[int | None] = [None] * len(specs)
        for label, n in quotas.items():
            hits = [i for i, ls in enumerate(self.labels) if label in ls]
            if len(hits) != 1:
                known = sorted({x for ls in self.labels for x in ls})
                raise BadInput(f"quota label {label!r} names {'no' if not hits else 'more than one'} source; "
                               f"use one of {known}", field="--quota")
            self.quota[hits[0]] = n

    def _labels(self, i: int) -> set[str]:
        spec = self.specs[i]
        reader = spec.partition(":")[0]
        labels = {spec}
        if sum(1 for s in self.specs if s.partition(":")[0] == reader) == 1:
            labels.add(reader)
        dr = getattr(self.sources[i], "dr", None)
        if dr is not None:
            labels.add(str(dr.source))
        return labels

    def plan(self, seed: int, n: int | None) -> list[MultiSpec]:
        out = [MultiSpec(i, s) for i, src in enumerate(self.sources) for s in src.plan(seed, self.quota[i])]
        return [out[j] for j in sample_indices(len(out), seed, n)]

    def realize(self, spec: MultiSpec, images: ImageStore) -> Case:
        return self.sources[spec.source].realize(spec.spec, images)

    def locality(self, spec: MultiSpec) -> Any:
        loc = getattr(self.sources[spec.source], "locality", None)
        return (spec.source, loc(spec.spec) if loc else 0)

    def planned(self, specs: Sequence[MultiSpec]) -> dict[str, int]:
        """Planned cases per source (as given on the command line)."""
        c = Counter(s.source for s in specs)
        return {self.specs[i]: c.get(i, 0) for i in range(len(self.specs))}


def source_for(specs: Sequence[str], quotas: Sequence[str] = ()) -> str | MultiSource:
    """One source spec as it is (the single-source build is unchanged), several as a MultiSource."""
    if len(specs) == 1 and not quotas:
        return specs[0]
    return MultiSource(specs, parse_quotas(quotas))
