"""``medr2 demo [--out DIR]``: the whole loop on the bundled sample, offline."""

from __future__ import annotations

from pathlib import Path

import typer

from medr2.console import echo


def register(app: typer.Typer) -> None:
    @app.command("demo")
    def demo(
        out: Path = typer.Option(Path("medr2-demo"), "--out", help="output folder (rerun to resume)"),
        cases: int | None = typer.Option(None, "--cases", help="sample cases to build (default 200; --quick 40)"),
        seed: int = typer.Option(0, "--seed", help="seed for the bench, the model and training"),
        quick: bool = typer.Option(False, "--quick", metavar="", help="a much smaller configuration (a smoke test)"),
        workers: int | None = typer.Option(None, "--workers", help="build processes (default: all cores)"),
        threads: int = typer.Option(1, "--threads", min=1, help="torch CPU threads for the tiny model"),
        strategies: str = typer.Option("", "--strategies", show_default="flat only",
                                        help="more fine-tuning strategies, comma-separated "
                                       "(e.g. augmented,dpo), each compared with flat in the summary"),
        lanes: int | None = typer.Option(None, "--lanes", help="processes running the fine-tunings and "
                                         "evaluations side by side, 1 or 2 (default: 2 with 2+ cores); "
                                         "the same things are computed"),
        choice: str = typer.Option("loglik", "--choice", help="how the tiny VLMs answer multiple-choice and "
                                   "yes/no questions: loglik (the most likely offered answer) or generate "
                                   "(greedy text, parsed)"),
    ) -> None:
        """Build the sample bench, evaluate baselines and a tiny VLM, fine-tune it (flat and chain),
        evaluate again, and write a report comparing all of them (DIR/report/index.html, DIR/summary.md)."""
        from medr2.api import demo as api_demo
        from medr2.cli._signals import sigterm_as_interrupt

        try:
            with sigterm_as_interrupt():  # SIGTERM cleans up too: the background lane's process is ended
                result = api_demo(out, cases=cases, seed=seed, quick=quick, workers=workers, threads=threads,
                                  strategies=strategies, lanes=lanes, choice=choice)
        except KeyboardInterrupt:
            echo(f"interrupted: rerun the same command to resume from what is stored in {out}", err=True)
            raise typer.Exit(130) from None
        echo(f"report: {result.report}\nsummary: {result.summary}")
