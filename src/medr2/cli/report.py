"""``medr2 report RUN [RUN ...] --out DIR``."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report(
        runs: list[Path] = typer.Argument(..., help="Scored run folders (after `medr2 score`)."),
        out: Path = typer.Option(..., "--out", help="Output folder for index.html, leaderboard.*, plots/."),
        bench: Path | None = typer.Option(None, "--bench", show_default="where the runs recorded it",
                                              help="Bench folder, if not where the runs recorded it."),
        max_items: int = typer.Option(1000, "--max-items", help="Most rows in the per-item browser."),
        title: str = typer.Option("medr2 report", "--title", help="Report title."),
    ) -> None:
        """Leaderboard (Markdown, CSV, JSON), plots and a self-contained index.html comparing the runs."""
        from medr2.api import report as api_report
        from medr2.console import say
        from medr2.progress import for_console

        progress = for_console("medr2 report")
        try:
            index = api_report(runs, out, bench=bench, max_items=max_items, title=title, progress=progress)
        finally:
            progress.close()
        say(f"wrote {index} and {out / 'leaderboard.md'}")
