"""``medr2 perturb``: add variants to an existing bench."""

from __future__ import annotations

from pathlib import Path

import typer

from medr2.catalog import TEXT_CODES, VISUAL_CODES


def register(app: typer.Typer) -> None:
    @app.command()
    def perturb(
        bench: Path = typer.Argument(..., help="bench folder"),
        variants: str = typer.Option(..., "--variants", help="comma list of variant codes "
                                     f"({', '.join(TEXT_CODES + VISUAL_CODES)}) or 'all'"),
        seed: int | None = typer.Option(None, "--seed", help="seed (default: the bench's build seed)"),
        workers: int | None = typer.Option(None, "--workers", min=1, help="processes (default: all cores)"),
    ) -> None:
        """Add adversarial variants to an existing bench (sources and clean images are never changed)."""
        from medr2.api import add_variants
        from medr2.console import say, table

        manifest, made, skips = add_variants(bench, variants, seed=seed, workers=workers)
        table(f"variants added to {bench}", ["code", ("items", "right"), "skipped (reason: items)"],
              [(code, made.get(code, 0), "; ".join(f"{r}: {n}" for r, n in reasons.items()))
               for code, reasons in skips.items()])
        say(f"items now {manifest['counts']['items']}, checksum {manifest['checksums']['bench'][:16]}")
