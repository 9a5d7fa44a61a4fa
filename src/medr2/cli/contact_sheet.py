"""``medr2 contact-sheet``: draw a built bench's images with their ground-truth boxes."""

from __future__ import annotations

from pathlib import Path

import typer

from medr2.console import echo


def register(app: typer.Typer) -> None:
    @app.command("contact-sheet")
    def contact_sheet_cmd(
        bench: Path = typer.Argument(..., help="bench folder"),
        out: Path = typer.Option(..., "--out", help="output PNG"),
        n: int = typer.Option(24, "--n", min=1, help="number of cases"),
        case: str | None = typer.Option(None, "--case", show_default="a grid of --n cases",
                                          help="one case across its visual variants"),
    ) -> None:
        """Draw cases in a grid: structure boxes (cyan), findings (red synthetic / yellow real), captions."""
        from medr2.api import contact_sheet

        path = contact_sheet(bench, out, n=n, case=case)
        echo(str(path))
