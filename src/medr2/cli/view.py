"""``medr2 view RUN [RUN ...] [--bench B] [--host H] [--port P]``."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command("view")
    def view(
        runs: list[Path] = typer.Argument(..., help="Scored run folders (after `medr2 score`)."),
        bench: Path | None = typer.Option(None, "--bench", show_default="where the runs recorded it",
                                              help="Bench folder, if not where the runs recorded it."),
        host: str = typer.Option("127.0.0.1", "--host",
                                 help="Address to listen on (loopback by default; another exposes the runs)."),
        port: int = typer.Option(8765, "--port", help="Port to listen on (0: a free one)."),
    ) -> None:
        """A local web app over every item of the runs: leaderboard, the items behind each number, answers side
        by side. Serves until Ctrl-C."""
        from medr2.api import view as api_view
        from medr2.console import say

        def ready(url: str) -> None:
            say(f"medr2 view: serving {len(runs)} run(s) at {url} (Ctrl-C to stop)")

        api_view(runs, bench=bench, host=host, port=port, on_ready=ready)
