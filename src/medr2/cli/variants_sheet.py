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
        pairs: int = typer.Option(0, "--pairs", min=0, metavar="N", show_default="0: one question's variants",
                                  help="draw the N most alike look-alike pairs (V12) instead"),
    ) -> None:
        """One question of one case across its visual variants (image, variant id, answer), or the most alike
        look-alike pairs (--pairs N), as a PNG."""
        from medr2.api import variants_sheet

        parent, variants = variants_sheet(bench, out, case=case, pairs=pairs)
        if pairs:
            echo(f"wrote {out}: {len(variants)} look-alike pairs")
        else:
            echo(f"wrote {out}: case {parent.case_id}, task {parent.task}, {len(variants)} variants")
