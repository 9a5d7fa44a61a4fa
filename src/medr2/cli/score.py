"""``medr2 score RUN [--judge SPEC] [--workers N]``: writes RUN/scores.parquet and RUN/metrics.json."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command("score")
    def score(
        run: Path = typer.Argument(..., help="run folder (holds manifest.json and store.sqlite)"),
        judge: str | None = typer.Option(None, "--judge", help="LLM judge for unreadable answers, e.g. openai:MODEL"),
        judge_base_url: list[str] = typer.Option([], "--judge-base-url", help="base URL of the judge endpoint"),
        judge_api_key_env: str | None = typer.Option(None, "--judge-api-key-env",
                                                     help="environment variable holding the judge's API key"),
        judge_claims: bool = typer.Option(False, "--judge-claims", metavar="",
                                          help="also ask the judge about rationale claims the rules leave "
                                               "unverifiable (needs --judge)"),
        seed: int = typer.Option(0, "--seed", help="bootstrap seed"),
        resamples: int = typer.Option(1000, "--resamples", help="bootstrap resamples (0: no intervals)"),
        workers: int = typer.Option(1, "--workers", min=1,
                                    help="processes scoring the answers (same outputs for any number; no --judge)"),
    ) -> None:
        """Score a run: extract answers, compute every metric with 95% case-bootstrap intervals."""
        import warnings

        from medr2.api import score as api_score
        from medr2.arrowmem import use_lean_pool
        from medr2.console import say, warn
        from medr2.progress import for_console
        from medr2.report.fmt import fmt_value_n
        from medr2.score.completeness import describe
        from medr2.score.scorer import METRICS_FILE, SCORES_FILE, IncompleteRunWarning
        from medr2.score.truncation import TRUNCATED_HINT

        use_lean_pool()  # the allocator that keeps least of what scoring frees (medr2.arrowmem)
        progress = for_console("medr2 score")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", IncompleteRunWarning)  # shown below, on stderr
                metrics = api_score(run, judge=judge, judge_base_url=judge_base_url,
                                    judge_api_key_env=judge_api_key_env, seed=seed, resamples=resamples,
                                    judge_claims=judge_claims, progress=progress, workers=workers)
        finally:
            progress.close()
        if (message := describe(metrics.get("plan") or {})) is not None:
            warn(message)
        hinted = False
        for mode, m in metrics["modes"].items():
            ov = m.get("overall") or {}
            rates = m.get("rates", {})
            acc = fmt_value_n(ov, 3)  # value [lo, hi] (n=…, … cases), † from fewer than 10 cases
            unparsed = (rates.get("unparsed") or {}).get("value") or 0.0
            truncated = (rates.get("truncated") or {}).get("value") or 0.0
            error = (rates.get("error") or {}).get("value") or 0.0
            say(f"{mode}: overall {acc}; unparsed {unparsed:.3f}, truncated {truncated:.3f}, error {error:.3f}")
            if truncated:
                hinted = True
        if hinted:
            say(("note", "yellow"), f": {TRUNCATED_HINT}")
        say(f"wrote {Path(run) / SCORES_FILE} and {Path(run) / METRICS_FILE}")
