"""``medr2 convert BENCH --to TARGET --out PATH``: a bench in another harness's format."""

from __future__ import annotations

from pathlib import Path

import typer

from medr2.catalog import CONVERT_TARGETS, listing
from medr2.console import echo


def register(app: typer.Typer) -> None:
    @app.command("convert")
    def convert_cmd(
        bench: Path = typer.Argument(..., help="bench folder"),
        to: str = typer.Option(..., "--to", help=listing(CONVERT_TARGETS, " | ")),
        out: Path = typer.Option(..., "--out", help="output folder"),
    ) -> None:
        """Export a bench to another harness's format."""
        from medr2.api import convert

        summary = convert(bench, to, out)
        echo(f"wrote {sum(summary['splits'].values())} items ({summary['splits']}) to {out}")
