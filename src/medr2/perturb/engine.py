"""Apply perturbations to the clean items of a bench (called by the build pipeline and ``medr2 perturb``).

Items are processed in groups per case (so each perturbed image is rendered once per process), in
parallel when ``workers`` > 1; the result order is the order of the clean items, then of the codes
in ``ALL_CODES``, then of what each perturbation returns, whatever the number of workers.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from medr2.errors import BadInput, Quarantine, QuarantineEntry
from medr2.imageio import ImageStore
from medr2.perturb.context import PerturbContext
from medr2.perturb.registry import ALL_CODES, PERTURBATIONS, Perturbation, Skip, load_perturbations, parse_variants
from medr2.records import Case, Item

QUARANTINED = "quarantined (bad input, see quarantine.jsonl)"

# per-process state for pool workers (set by the initializer; fork shares it copy-on-write)
_STATE: dict[str, object] = {}

Outcome = tuple[list[Item], list[tuple[str, str]], list[QuarantineEntry]]


def make_perturbations(codes: Sequence[str], params: dict[str, dict[str, object]] | None = None
                       ) -> list[Perturbation]:
    load_perturbations()
    params = params or {}
    return [PERTURBATIONS[c](**params.get(c, {})) for c in codes]


def _run_group(ctx: PerturbContext, perts: Sequence[Perturbation], items: Sequence[Item]) -> list[Outcome]:
    out: list[Outcome] = []
    for item in items:
        case = ctx.cases.get(item.case_id)
        made: list[Item] = []
        skips: list[tuple[str, str]] = []
        bad: list[QuarantineEntry] = []
        for p in perts:
            if case is None:
                skips.append((p.code, "item refers to an unknown case"))
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


def _init_worker(ctx: PerturbContext, perts: list[Perturbation]) -> None:
    _STATE["ctx"], _STATE["perts"] = ctx, perts


def _worker(items: list[Item]) -> list[Outcome]:
    ctx = _STATE["ctx"]
    perts = _STATE["perts"]
    assert isinstance(ctx, PerturbContext) and isinstance(perts, list)
    return _run_group(ctx, perts, items)


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
    the skip counts ``{code: {reason: n}}`` (every requested code present, possibly empty)."""
    codes = parse_variants(codes) if isinstance(codes, str) else parse_variants(list(codes))
    clean = [it for it in clean_items if it.variant == "clean"]
    skips: dict[str, Counter[str]] = {c: Counter() for c in codes}
    if not codes or not clean:
        return [], {c: {} for c in codes}
    perts = make_perturbations(codes, params)
    ctx = PerturbContext.build(Path(bench_root), cases, clean, seed, images)
    groups = _groups(clean)
    n_workers = min(len(groups), workers if workers is not None else (os.cpu_count() or 1))
    results: list[Outcome | None] = [None] * len(clean)
    if n_workers <= 1:
        for g in groups:
            for i, res in zip(g, _run_group(ctx, perts, [clean[i] for i in g]), strict=True):
                results[i] = res
    else:
        chunks = [groups[k::n_workers * 4] for k in range(n_workers * 4)]
        batches = [[i for g in ch for i in g] for ch in chunks if ch]
        with ProcessPoolExecutor(n_workers, mp_context=mp.get_context("fork"), initializer=_init_worker,
                                 initargs=(ctx, perts)) as pool:
            for batch, res in zip(batches, pool.map(_worker, [[clean[i] for i in b] for b in batches]), strict=True):
                for i, r in zip(batch, res, strict=True):
                    results[i] = r
    quarantine = Quarantine(Path(bench_root) / "quarantine.jsonl")
    seen: set[str] = set()
    out: list[Item] = []
    for res in results:
        assert res is not None
        made, sk, bad = res
        for it in made:
            if it.item_id not in seen:
                seen.add(it.item_id)
                out.append(it)
        for code, reason in sk:
            skips[code][reason] += 1
        for entry in bad:
            quarantine.add(entry)
    return out, {c: dict(sorted(skips[c].items())) for c in codes}


__all__ = ["ALL_CODES", "generate_variants", "parse_variants"]
