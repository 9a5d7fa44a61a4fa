"""``medr2 score RUN [--judge SPEC] [--workers N]``: writes RUN/scores.parquet and RUN/metrics.json."""

from __future__ import annotations

from pathlib import Path

import typer

from medr2.catalog import SLICE_FIELDS, listing


def register(app: typer.Typer) -> None:
    @app.command("score")
    def score(
        run: Path = typer.Argument(..., help="run folder (holds manifest.json and store.sqlite)"),
        judge: str | None = typer.Option(None, "--judge", show_default="none: unreadable answers stay unparsed",
                                          help="LLM judge for unreadable answers: any OpenAI-compatible MODEL at "
                                               "--judge-base-url (or an adapter spec such as openai:MODEL); judged "
                                               "answers are counted apart, and its agreement with the reader (Cohen's "
                                               "κ) is measured on a sample of parsed answers"),
        judge_base_url: list[str] = typer.Option([], "--judge-base-url", show_default="none",
                                                help="base URL of the judge endpoint"),
        judge_api_key_env: str | None = typer.Option(None, "--judge-api-key-env",
                                                     show_default="no key",
                                                     help="environment variable holding the judge's API key (the "
                                                          "key itself is never printed or recorded)"),
        judge_sample: int = typer.Option(200, "--judge-sample", min=0,
                                         help="parsed closed answers the judge is also asked about, for its "
                                              "agreement with the reader (seeded by --seed)"),
        judge_claims: bool = typer.Option(False, "--judge-claims", metavar="",
                                          help="also ask the judge about rationale claims the rules leave "
                                               "unverifiable (needs --judge)"),
        seed: int = typer.Option(0, "--seed", help="bootstrap seed"),
        resamples: int = typer.Option(1000, "--resamples", help="bootstrap resamples (0: no intervals)"),
        workers: int = typer.Option(1, "--workers", min=1,
                                    help="processes scoring the answers (same outputs for any number; no --judge)"),
        slice: list[str] = typer.Option([], "--slice", metavar="FIELD[,FIELD...]",
                                        show_default="none: no slices.json",
                                        help="subgroup slices written to RUN/slices.json (repeatable; fields: "
                                             f"{listing(SLICE_FIELDS)}; a,b: their combinations)"),
        bins: list[str] = typer.Option([], "--bins", metavar="FIELD=EDGES",
                                       show_default="each binned field's own edges",
                                       help="bin edges of a binned slice field, e.g. age=18,40,65 (repeatable)"),
        slice_min_cases: int = typer.Option(20, "--slice-min-cases", min=1,
                                            help="slices from fewer cases are marked low-n and never ranked"),
        harm: Path | None = typer.Option(None, "--harm", metavar="FILE",
                                         show_default="the built-in tiers and weights",
                                         help="risk tiers and weights overriding the defaults (JSON/YAML); "
                                              "writes RUN/harm.json"),
        conformal_coverage: float = typer.Option(0.9, "--conformal-coverage", min=0.0, max=1.0,
                                                 help="target coverage of the conformal prediction sets in "
                                                      "calibration.json (docs/metrics.md)"),
        mixed_splits: bool = typer.Option(False, "--mixed-splits", metavar="",
                                          help="score a run whose answers span several splits (refused "
                                               "otherwise: train items would count beside held-out ones)"),
    ) -> None:
        """Score a run: extract answers, compute every metric with 95% bootstrap intervals (resampling patients
        where cases share one)."""
        import warnings

        from medr2.api import score as api_score
        from medr2.arrowmem import use_lean_pool
        from medr2.console import say, warn
        from medr2.models.truncation import TRUNCATED_HINT
        from medr2.progress import for_console
        from medr2.reporting.fmt import fmt_value_n, scope_text
        from medr2.scoring.completeness import describe
        from medr2.scoring.scorer import METRICS_FILE, SCORES_FILE, IncompleteRunWarning

        use_lean_pool()  # the allocator that keeps least of what scoring frees (medr2.arrowmem)
        progress = for_console("medr2 score")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", IncompleteRunWarning)  # shown below, on stderr
                metrics = api_score(run, judge=judge, judge_base_url=judge_base_url,
                                    judge_api_key_env=judge_api_key_env, seed=seed, resamples=resamples,
                                    judge_claims=judge_claims, progress=progress, workers=workers,
                                    slice=slice or None, bins=bins, harm=harm, slice_min_cases=slice_min_cases,
                                    conformal_coverage=conformal_coverage, mixed_splits=mixed_splits,
                                    judge_sample=judge_sample)
        finally:
            progress.close()
        if (message := describe(metrics.get("plan") or {})) is not None:
            warn(message)
        hinted = False
        splits = (metrics.get("run") or {}).get("splits") or {}
        split_word = "+".join(splits) or "?"  # the split(s) the answers come from, on every line
        say(f"scored: {scope_text(metrics)}")  # the split(s) and what the intervals resample, as every table says
        for mode, m in metrics["modes"].items():
            ov = m.get("overall") or {}
            rates = m.get("rates", {})
            acc = fmt_value_n(ov, 3)  # value [lo, hi] (n=…, … cases), † from fewer than 10 cases
            unparsed = (rates.get("unparsed") or {}).get("value") or 0.0
            truncated = (rates.get("truncated") or {}).get("value") or 0.0
            error = (rates.get("error") or {}).get("value") or 0.0
            abstained = (f", abstained {rates['abstained']['value']:.3f}"
                         if (rates.get("abstained") or {}).get("value") is not None else "")
            say(f"{split_word} split, {mode}: overall {acc}; unparsed {unparsed:.3f}{abstained}, "
                f"truncated {truncated:.3f}, error {error:.3f}")
            if truncated:
                hinted = True
            if (line := comparison_line(m.get("comparison"))) is not None:
                say(f"{split_word} split, {mode}: {line}")
        if hinted:
            say(("note", "yellow"), f": {TRUNCATED_HINT}")
        if metrics.get("judge"):
            from medr2.scoring.judge import describe_audit

            say(f"judge {describe_audit(metrics['judge'])}")
        cal = Path(run) / "calibration.json"  # medr2.scoring.calibration.CALIBRATION_FILE (where there is one)
        wrote = [Path(run) / SCORES_FILE, Path(run) / METRICS_FILE, *([cal] if cal.is_file() else [])]
        say(f"wrote {', '.join(map(str, wrote[:-1]))} and {wrote[-1]}")
        _print_analysis(Path(run), metrics)


def comparison_line(block: object) -> str | None:
    """The comparison items' accuracy and prior reliance of one mode (issue 49; docs/metrics.md), or None."""
    from medr2.reporting.fmt import fmt_value_n

    if not isinstance(block, dict) or not block.get("acc"):
        return None
    parts = [f"comparison accuracy {fmt_value_n(block['acc'], 3)}"]
    if block.get("prior_reliance"):
        parts.append(f"prior reliance {fmt_value_n(block['prior_reliance'], 3)} (answers that follow the prior "
                     "where it differs from the current image)")
    return "; ".join(parts)


def _print_analysis(run: Path, metrics: dict[str, object]) -> None:
    """The harm figures and each slicing's largest accuracy gap (text from the data printed as plain text)."""
    from medr2.console import say
    from medr2.reporting.fmt import fmt_value_n
    from medr2.scoring.files import HARM_FILE, SLICES_FILE

    harm, slices = metrics.get("harm"), metrics.get("slices")
    if isinstance(harm, dict):
        for mode, h in harm["modes"].items():
            parts = [f"{k.replace('_', ' ')} {fmt_value_n(h[k], 3)}" for k in
                     ("harm_weighted_error", "high_risk_error", "silent_failure", "harm_weighted_ASR") if k in h]
            say(f"{mode}: " + "; ".join(parts))
        say(f"wrote {run / HARM_FILE}")
    if isinstance(slices, dict):
        for note in slices["missing"].values():
            say(("note", "yellow"), f": {note}")
        for mode, by in slices["modes"].items():
            for name, s in by.items():
                g = s["gaps"].get("accuracy")
                if g is None:
                    say(f"{mode} {name}: no accuracy gap ranked (fewer than two slices of "
                        f"{slices['min_cases']}+ cases)")
                    continue
                test = ("untested: no bootstrap resamples" if g["p_holm"] is None else
                        f"p_holm {g['p_holm']:.3g}, {'significant' if g['significant'] else 'not significant'}")
                say(f"{mode} {name}: largest accuracy gap {g['high']} - {g['low']} = {g['delta']:+.3f} "
                    f"({test})")
        say(f"wrote {run / SLICES_FILE}")
