"""``medr2 review BENCH [--host H] [--port P]``."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command("review")
    def review(
        bench: Path = typer.Argument(..., help="Bench folder to review."),
        host: str = typer.Option("127.0.0.1", "--host",
                                 help="Address to listen on (loopback by default; another lets anyone reaching it "
                                      "write reviews)."),
        port: int = typer.Option(8765, "--port", help="Port to listen on (0: a free one)."),
    ) -> None:
        """Clinician review of a bench in the viewer's app: accept / fix / reject each item with a reason, saved to
        BENCH/reviews.sqlite as made; agreement per task and the adjudication queue (docs/review.md). Serves until
        Ctrl-C."""
        from medr2.api import review as api_review
        from medr2.console import say

        def ready(url: str) -> None:
            say(f"medr2 review: reviewing {bench} at {url} (Ctrl-C to stop)")

        api_review(bench, host=host, port=port, on_ready=ready)
