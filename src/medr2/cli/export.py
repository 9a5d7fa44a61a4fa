"""``medr2 export``: the train split as SFT or DPO data (docs/finetuning.md)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from medr2.catalog import EXPORT_FORMATS, STRATEGIES, listing
from medr2.console import echo


def register(app: typer.Typer) -> None:
    @app.command("export")
    def export(
        bench: Path = typer.Option(..., "--bench", help="bench folder"),
        fmt: str = typer.Option(..., "--format", help=listing(EXPORT_FORMATS, " | ")),
        out: Path = typer.Option(..., "--out", help="output folder (must be empty or absent)"),
        strategy: str = typer.Option("flat", "--strategy", help=listing(STRATEGIES, " | ")),
        with_variants: bool = typer.Option(False, "--with-variants", metavar="",
                                           help="add the train split's perturbed copies"),
        seed: int = typer.Option(0, "--seed", help="order seed"),
        replay: float = typer.Option(0.25, "--replay", help="curriculum: share of earlier stages replayed per stage"),
        reviewed: str | None = typer.Option(None, "--reviewed", show_default="every item",
                                            help="accepted: only the items the bench's clinician review accepted "
                                                 "(medr2 review; docs/review.md)"),
    ) -> None:
        """Export the bench's train split as SFT or DPO data (never test items or their images)."""
        from medr2.api import export as api_export

        m = api_export(bench, fmt, out, strategy=strategy, with_variants=with_variants, seed=seed, replay=replay,
                       reviewed=reviewed)
        echo(f"wrote {m['n_examples']} {fmt} records ({m['n_items']} items) to {out}; "
                   f"skipped: {json.dumps(m['skipped'])}")
