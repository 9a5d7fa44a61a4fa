"""``medr2 materialise``: render and store every deferred image of a bench (docs/bench-format.md)."""

from __future__ import annotations

from pathlib import Path

import typer

from medr2.console import echo


def register(app: typer.Typer) -> None:
    @app.command()
    def materialise(bench: Path = typer.Argument(..., help="bench folder")) -> None:
        """Render every V2/V3/V8-V12 image a --renders deferred build left in renders.parquet into images/,
        each checked against its pinned sha256 (e.g. before copying the bench to another machine)."""
        from medr2.api import materialise as api_materialise

        n = api_materialise(bench)
        echo(f"{bench}: {n} deferred image(s) rendered and stored")
