"""``medr2 variants-sheet``: one question of one case across its visual variants, as a PNG."""

from __future__ import annotations

from pathlib import Path

import typer

from medr2.console import echo


def register(app: typer.Typer) -> None:
    @app.command("variants-sheet")
    def variants_sheet_cmd(
        bench: Path = typer.Argument(..., help="bench folder (built with visual variants)"),
        out: Path = typer.Option(..., "--out", help="PNG to write"),
        case: str | None = typer.Option(None, "--case", help="case id (default: the item with most visual variants)"),
    ) -> None:
        """One question of one case across its visual variants (image, variant id, answer), as a PNG."""
        from medr2.api import variants_sheet

        parent, variants = variants_sheet(bench, out, case=case)
        echo(f"wrote {out}: case {parent.case_id}, task {parent.task}, {len(variants)} variants")
