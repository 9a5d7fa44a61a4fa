"""``medr2 perturb`` (add variants to an existing bench) and ``medr2 variants-sheet``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer


def add_variants(root: Path, variants: str, seed: int | None = None, workers: int | None = None
                 ) -> tuple[dict[str, Any], dict[str, int], dict[str, dict[str, int]]]:
    """Generate ``variants`` for the clean items of the bench at ``root`` and rewrite its item table.

    Variants of the requested codes already in the bench are replaced; others are kept. Items are
    written clean first, then variants ordered by parent and code, as ``medr2 build --variants`` does.
    Returns (manifest, new items per code, skip counts per code).
    """
    from collections import Counter

    from medr2.bench.format import load_bench, write_bench
    from medr2.imageio import ImageStore
    from medr2.perturb.engine import generate_variants
    from medr2.perturb.registry import all_codes, parse_variants
    from medr2.variant_id import variant_code

    codes = parse_variants(variants)
    every = all_codes()
    bench = load_bench(root)
    m = bench.manifest
    build = dict(m.get("build", {}))
    seed = int(build.get("seed", 0)) if seed is None else seed
    clean = bench.clean_items()
    new, skips = generate_variants(bench.root, bench.cases, clean, codes, seed, ImageStore(bench.root), workers)

    def code(it: Any) -> str:
        return variant_code(str(it.variant))

    kept = [it for it in bench.items if it.variant != "clean" and code(it) not in codes]
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
    manifest = write_bench(bench.root, bench.cases, [*clean, *variants_all], extra)
    return manifest, dict(Counter(code(it) for it in new)), skips


def register(app: typer.Typer) -> None:
    @app.command()
    def perturb(
        bench: Path = typer.Argument(..., help="bench folder"),
        variants: str = typer.Option(..., "--variants", help="comma list of variant codes (T1..T8, V1..V9) or 'all'"),
        seed: int | None = typer.Option(None, "--seed", help="seed (default: the bench's build seed)"),
        workers: int | None = typer.Option(None, "--workers", min=1, help="processes (default: all cores)"),
    ) -> None:
        """Add adversarial variants to an existing bench (sources and clean images are never changed)."""
        from rich.console import Console
        from rich.table import Table

        manifest, made, skips = add_variants(bench, variants, seed, workers)
        t = Table(title=f"variants added to {bench}")
        t.add_column("code")
        t.add_column("items", justify="right")
        t.add_column("skipped (reason: items)")
        for code, reasons in skips.items():
            t.add_row(code, str(made.get(code, 0)), "; ".join(f"{r}: {n}" for r, n in reasons.items()))
        con = Console()
        con.print(t)
        con.print(f"items now {manifest['counts']['items']}, checksum {manifest['checksums']['bench'][:16]}")

    @app.command("variants-sheet")
    def variants_sheet_cmd(
        bench: Path = typer.Argument(..., help="bench folder (built with visual variants)"),
        out: Path = typer.Option(..., "--out", help="PNG to write"),
        case: str | None = typer.Option(None, "--case", help="case id (default: the item with most visual variants)"),
    ) -> None:
        """One question of one case across its visual variants (image, variant id, answer), as a PNG."""
        from medr2.bench.format import load_bench
        from medr2.perturb.sheet import contact_sheet

        parent, variants = contact_sheet(load_bench(bench), out, case)
        typer.echo(f"wrote {out}: case {parent.case_id}, task {parent.task}, {len(variants)} variants")
