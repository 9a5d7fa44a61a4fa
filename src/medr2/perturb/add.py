"""Add variants to an existing bench (``medr2 perturb``): generate the requested codes for its clean items
and rewrite its item table (sources and clean images are never changed; docs/variants.md)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any


def add_variants(bench: Path | str, variants: str | Sequence[str], seed: int | None = None,
                 workers: int | None = None) -> tuple[dict[str, Any], dict[str, int], dict[str, dict[str, int]]]:
    """Generate ``variants`` for the clean items of the bench folder ``bench`` and rewrite its item table.

    Variants of the requested codes already in the bench are replaced; others are kept. Items are
    written clean first, then variants ordered by parent and code, as ``medr2 build --variants`` does.
    Returns (manifest, new items per code, skip counts per code).
    """
    from collections import Counter

    from medr2.bench.format import load_bench, write_bench
    from medr2.images import ImageStore
    from medr2.perturb.engine import generate_variants
    from medr2.perturb.registry import all_codes, parse_variants
    from medr2.variant_id import variant_code

    codes = parse_variants(variants if isinstance(variants, str) else ",".join(variants))
    every = all_codes()
    loaded = load_bench(bench)
    m = loaded.manifest
    build = dict(m.get("build", {}))
    seed = int(build.get("seed", 0)) if seed is None else seed
    clean = loaded.clean_items()
    new, skips = generate_variants(loaded.root, loaded.cases, clean, codes, seed, ImageStore(loaded.root), workers)

    def code(it: Any) -> str:
        return variant_code(str(it.variant))

    kept = [it for it in loaded.items if it.variant != "clean" and code(it) not in codes]
    order = {it.item_id: i for i, it in enumerate(clean)}
    seen: set[str] = {it.item_id for it in clean}
    variants_all = []
    for it in [*kept, *new]:
        if it.item_id not in seen:
            seen.add(it.item_id)
            variants_all.append(it)
    variants_all.sort(key=lambda it: (order.get(it.parent_id or "", len(order)), every.index(code(it))))
    build["variants"] = [c for c in every if c in set(build.get("variants", [])) | set(codes)]
    if seed != int(build.get("seed", seed)):
        build["variant_seeds"] = {**build.get("variant_seeds", {}), **dict.fromkeys(codes, seed)}
    reserved = {"format", "format_version", "medr2_version", "counts", "cases", "checksums", "complete"}
    extra = {k: v for k, v in m.items() if k not in reserved}
    extra["build"] = build
    extra["variants_skipped"] = {**m.get("variants_skipped", {}), **skips}
    manifest = write_bench(loaded.root, loaded.cases, [*clean, *variants_all], extra)
    return manifest, dict(Counter(code(it) for it in new)), skips
