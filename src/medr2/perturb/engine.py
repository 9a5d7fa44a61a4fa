"""Apply perturbations to the clean items of a bench (called by the build pipeline and ``medr2 perturb``).

Variants are made one case at a time (:class:`VariantMaker`): a case, its clean items and the few other
cases its perturbations declared (``Perturbation.related_cases``, e.g. the partner image of V2/V3),
over fact pools and a case index shared by all cases. So the build can stream the pass through its
workers, holding only the cases in flight. The result order is the order of the clean items, then
of the codes in ``all_codes()``, then of what each perturbation returns, whatever the number of workers.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from medr2.errors import BadInput, Quarantine, QuarantineEntry
from medr2.images import ImageStore
from medr2.perturb.context import CaseIndex, PerturbContext
from medr2.perturb.facts import FactPools
from medr2.perturb.registry import PERTURBATIONS, Perturbation, Skip, all_codes, parse_variants
from medr2.records import Case, Item

QUARANTINED = "quarantined (bad input, see quarantine.jsonl)"
UNKNOWN_CASE = "item refers to an unknown case"

# per-process state for pool workers (set by the initializer; fork shares it copy-on-write)
_STATE: dict[str, object] = {}

Outcome = tuple[list[Item], list[tuple[str, str]], list[QuarantineEntry]]


def make_perturbations(codes: Sequence[str], params: dict[str, dict[str, object]] | None = None
                       ) -> list[Perturbation]:
    params = params or {}
    return [PERTURBATIONS.lookup(c)(**params.get(c, {})) for c in codes]


def _run_group(ctx: PerturbContext, perts: Sequence[Perturbation], items: Sequence[Item]) -> list[Outcome]:
    out: list[Outcome] = []
    for item in items:
        case = ctx.cases.get(item.case_id)
        made: list[Item] = []
        skips: list[tuple[str, str]] = []
        bad: list[QuarantineEntry] = []
        for p in perts:
            if case is None:
                skips.append((p.code, UNKNOWN_CASE))
                continue
            try:
                made.extend(p.apply(item, case, ctx))
            except Skip as s:
                skips.append((p.code, s.reason))
            except BadInput as e:
                rec = e.record or item.item_id
                bad.append(QuarantineEntry(e.file, f"{rec} ({p.code})", e.field, e.reason, "variant"))
                skips.append((p.code, QUARANTINED))
        out.append((made, skips, bad))
    return out


class VariantMaker:
    """The perturbations of ``codes`` over fact pools and a case index of the whole bench; makes the
    variants of one case at a time. Picklable, and small: it holds no case and no item."""

    def __init__(self, root: Path, images: ImageStore, seed: int, codes: Sequence[str], pools: FactPools,
                 index: CaseIndex, params: dict[str, dict[str, object]] | None = None) -> None:
        self.codes = tuple(codes)
        self.perts = make_perturbations(self.codes, params)
        self.base = PerturbContext(Path(root), images, seed, {}, {}, pools, index)

    def related(self, case: Case) -> list[str]:
        """Ids of the other cases :meth:`make` needs in full for ``case`` (in a stable order)."""
        ctx = self.base.for_case(case, ())
        ids: list[str] = []
        for p in self.perts:
            ids.extend(cid for cid in p.related_cases(case, ctx) if cid != case.case_id and cid not in ids)
        return ids

    def make(self, case: Case | None, items: Sequence[Item], related: Iterable[Case] = ()) -> list[Outcome]:
        """(variants, skips, quarantine entries) per item of ``items`` (all of ``case``; ``None``: unknown)."""
        if case is None:
            return [([], [(p.code, UNKNOWN_CASE) for p in self.perts], []) for _ in items]
        return _run_group(self.base.for_case(case, items, related), self.perts, items)


def collect(outcomes: Iterable[Outcome], seen: set[str], skips: dict[str, Counter[str]],
            quarantine: Quarantine) -> Iterator[Item]:
    """The variant items of ``outcomes`` not in ``seen`` (added to it), in order; counts skips into
    ``skips`` and writes the quarantine entries."""
    for made, sk, bad in outcomes:
        for it in made:
            if it.item_id not in seen:
                seen.add(it.item_id)
                yield it
        for code, reason in sk:
            skips[code][reason] += 1
        for entry in bad:
            quarantine.add(entry)


def _init_worker(maker: VariantMaker) -> None:
    _STATE["maker"] = maker


def _worker(jobs: list[tuple[Case | None, list[Item], list[Case]]]) -> list[list[Outcome]]:
    maker = _STATE["maker"]
    assert isinstance(maker, VariantMaker)
    return [maker.make(*job) for job in jobs]


def _groups(items: Sequence[Item]) -> list[list[int]]:
    """Indices of ``items`` grouped by case, groups in order of first appearance."""
    by_case: dict[str, list[int]] = {}
    for i, it in enumerate(items):
        by_case.setdefault(it.case_id, []).append(i)
    return list(by_case.values())


def generate_variants(bench_root: Path, cases: list[Case], clean_items: list[Item], codes: Sequence[str] | str,
                      seed: int, images: ImageStore, workers: int | None = None,
                      params: dict[str, dict[str, object]] | None = None
                      ) -> tuple[list[Item], dict[str, dict[str, int]]]:
    """Variant items of ``clean_items`` for ``codes`` (deterministic order, duplicates removed) and
    the skip counts ``{code: {reason: n}}`` (every requested code present, possibly empty).

    Everything is held in memory; the build streams the same per-case steps instead."""
    codes = parse_variants(codes) if isinstance(codes, str) else parse_variants(list(codes))
    clean = [it for it in clean_items if it.variant == "clean"]
    if not codes or not clean:
        return [], {c: {} for c in codes}
    by_id = {c.case_id: c for c in cases}
    maker = VariantMaker(Path(bench_root), images, seed, codes, FactPools(cases), CaseIndex(cases), params)
    groups = _groups(clean)
    jobs: list[tuple[Case | None, list[Item], list[Case]]] = []
    for g in groups:
        case = by_id.get(clean[g[0]].case_id)
        related = [by_id[cid] for cid in maker.related(case)] if case is not None else []
        jobs.append((case, [clean[i] for i in g], related))
    n_workers = min(len(groups), workers if workers is not None else (os.cpu_count() or 1))
    results: list[Outcome | None] = [None] * len(clean)
    if n_workers <= 1:
        for g, job in zip(groups, jobs, strict=True):
            for i, res in zip(g, maker.make(*job), strict=True):
                results[i] = res
    else:
        batches = [list(range(k, len(groups), n_workers * 4)) for k in range(min(len(groups), n_workers * 4))]
        with ProcessPoolExecutor(n_workers, mp_context=mp.get_context("fork"), initializer=_init_worker,
                                 initargs=(maker,)) as pool:
            for batch, batch_res in zip(batches, pool.map(_worker, [[jobs[j] for j in b] for b in batches]),
                                        strict=True):
                for j, outcomes in zip(batch, batch_res, strict=True):
                    for i, r in zip(groups[j], outcomes, strict=True):
                        results[i] = r
    skips: dict[str, Counter[str]] = {c: Counter() for c in codes}
    quarantine = Quarantine(Path(bench_root) / "quarantine.jsonl")
    out = list(collect((r for r in results if r is not None), set(), skips, quarantine))
    return out, {c: dict(sorted(skips[c].items())) for c in codes}


__all__ = ["VariantMaker", "all_codes", "collect", "generate_variants", "parse_variants"]
