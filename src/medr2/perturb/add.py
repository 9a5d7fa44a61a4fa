"""Add variants to an existing bench (``medr2 perturb``): generate the requested codes for its clean items
and rewrite its item table (sources and clean images are never changed; docs/variants.md)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any


def add_variants(bench: Path | str, variants: str | Sequence[str], seed: int | None = None,
                 workers: int | None = None) -> tuple[dict[str, Any], dict[str, int], dict[str, dict[str, int]]]:
    """Generate ``variants`` for the clean items of the bench folder ``bench`` and rewrite its item table.

    Variants of the requested codes already in the bench are replaced; others are kept. Items are
    written clean first, then variants ordered by parent and code, as ``medr2 build --variants`` does (the
    writer then sorts the table by split and variant, stably). The bench is read by columns
    (:class:`~medr2.bench.table.BenchTable`, validated streaming): the cases, the clean items and the new
    variants are held; the variants kept stream from the old table into the new one.
    Returns (manifest, new items per code, skip counts per code).
    """
    from collections import Counter

    from medr2.bench.format import WRITER_KEYS, BenchWriter
    from medr2.bench.idset import IdSet
    from medr2.bench.table import BenchTable
    from medr2.images import ImageStore
    from medr2.perturb.engine import generate_variants
    from medr2.perturb.registry import all_codes, parse_variants
    from medr2.records import Item
    from medr2.variant_id import variant_code

    codes = parse_variants(variants if isinstance(variants, str) else ",".join(variants))
    every = all_codes()
    table = BenchTable.open(bench)
    m = table.manifest
    build = dict(m.get("build", {}))
    seed = int(build.get("seed", 0)) if seed is None else seed
    cases = list(table.iter_cases())
    clean = [it for it in table.iter_items() if it.variant == "clean"]
    new, skips = generate_variants(table.root, cases, clean, codes, seed,
                                    ImageStore(table.root, identity=table.identity), workers)

    def code(variant: str) -> str:
        return variant_code(variant)

    clean_ids = IdSet()
    clean_ids.add_all([it.item_id for it in clean])
    kept_ids = IdSet()  # variants kept (their codes not asked for)
    for cols in table.column_values(["item_id", "variant"]):
        ids = [i for i, v in zip(cols["item_id"], cols["variant"], strict=True)
               if v != "clean" and code(v) not in codes]
        kept_ids.add_all([i for i, known in zip(ids, clean_ids.contains_all(ids), strict=True) if not known])

    def kept() -> Iterator[Item]:
        for it in table.iter_items():
            if it.variant != "clean" and code(it.variant) not in codes and it.item_id not in clean_ids:
                yield it

    order = {it.item_id: i for i, it in enumerate(clean)}
    fresh: list[Item] = []  # new variants (without repeats: generate_variants removes them) not in the bench
    for start in range(0, len(new), 4096):
        block = new[start:start + 4096]
        ids = [it.item_id for it in block]
        known = [a or b for a, b in zip(clean_ids.contains_all(ids), kept_ids.contains_all(ids), strict=True)]
        fresh.extend(it for it, k in zip(block, known, strict=True) if not k)
    fresh.sort(key=lambda it: (order.get(it.parent_id or "", len(order)), every.index(code(it.variant))))
    build["variants"] = [c for c in every if c in set(build.get("variants", [])) | set(codes)]
    if seed != int(build.get("seed", seed)):
        build["variant_seeds"] = {**build.get("variant_seeds", {}), **dict.fromkeys(codes, seed)}
    extra = {k: v for k, v in m.items() if k not in WRITER_KEYS}
    extra["build"] = build
    extra["variants_skipped"] = {**m.get("variants_skipped", {}), **skips}
    with BenchWriter(table.root, identity=table.identity) as w:  # the bench's own rule: never mixed
        w.add_cases(cases)
        w.add_items(clean)
        w.add_items(kept())
        w.add_items(fresh)
        manifest = w.close(extra)
    table.close()
    return manifest, dict(Counter(code(it.variant) for it in new)), skips
