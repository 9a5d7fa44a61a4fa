"""``medr2 import FORMAT PATH --out BENCH``: an existing medical VQA set as a bench."""

from __future__ import annotations

from pathlib import Path

import typer

from medr2.catalog import IMPORT_FORMATS, listing


def register(app: typer.Typer) -> None:
    @app.command("import")
    def import_cmd(
        fmt: str = typer.Argument(..., metavar="FORMAT", help=listing(IMPORT_FORMATS)),
        path: Path = typer.Argument(..., help="the dataset's local file or folder"),
        out: Path = typer.Option(..., "--out", help="bench folder to write"),
        license: str | None = typer.Option(None, "--license", show_default="unspecified",
                                            help="licence recorded on every item"),
        access: str | None = typer.Option(None, "--access", show_default="open",
                                           help="open, credentialed or restricted"),
        source: str | None = typer.Option(None, "--source-name", help="source name (default: the format)"),
        option: list[str] = typer.Option([], "--option", show_default="none",
                                          help="format option KEY=VALUE (e.g. images=DIR)"),
    ) -> None:
        """Import an existing medical VQA set as a bench (questions mapped onto the four stages)."""
        from medr2.api import import_dataset
        from medr2.console import say
        from medr2.interop.common import why_quarantined

        res = import_dataset(fmt, path, out, license=license, access=access, source_name=source, option=option)
        say(f"imported {len(res.items)} items on {len(res.cases)} images into {out}")
        for task, n in res.counts.items():
            say(f"  {task:24s} {n}")
        say(f"unmapped (imported.other): {res.unmapped}, duplicates merged: {res.duplicates}, "
            f"quarantined: {len(res.quarantined)}")
        if res.quarantined:
            say(("quarantined", "yellow"), why_quarantined(res.quarantined, out))
        unknown = sum(1 for it in res.items if it.meta.get("answer_unknown"))
        if unknown:
            say((f"{unknown} item(s) without an answer", "yellow"), " (meta answer_unknown): for running models "
                "and exporting predictions, not for scoring")
