"""``medr2 build`` and ``medr2 info``."""

from __future__ import annotations

import json
from pathlib import Path

import typer


def _parse_variants(text: str | None) -> tuple[str, ...]:
    if not text:
        return ()
    return tuple(v.strip() for v in text.split(",") if v.strip())


def register(app: typer.Typer) -> None:
    @app.command()
    def build(
        source: list[str] = typer.Option(..., "--source", help="NAME or NAME:PATH (e.g. sample, folder:/data); "
                                         "repeat it to build one bench from several sources"),
        quota: list[str] = typer.Option([], "--quota", help="LABEL=N: at most N cases from that source "
                                        "(LABEL: the source as given, its reader name or its mapping's name)"),
        out: Path = typer.Option(..., "--out", help="bench folder to write"),
        seed: int = typer.Option(0, "--seed", help="seed for everything random"),
        cases: int | None = typer.Option(None, "--cases", help="number of cases (default: all)"),
        variants: str | None = typer.Option(None, "--variants", help="comma list of variant codes, or 'all'"),
        workers: int | None = typer.Option(None, "--workers", help="processes (default: all cores)"),
    ) -> None:
        """Build a bench from a source."""
        from medr2.build.pipeline import build_bench
        from medr2.build.summary import print_summary
        from medr2.progress import for_console
        from medr2.sources.multi import source_for

        tracker = for_console("medr2 build")
        try:
            result = build_bench(source_for(source, quota), out, seed=seed, n_cases=cases,
                                 variants=_parse_variants(variants), workers=workers, tracker=tracker)
        finally:
            tracker.close()
        print_summary(result)

    @app.command()
    def info(
        bench: Path = typer.Argument(..., help="bench folder"),
        as_json: bool = typer.Option(False, "--json", help="print JSON instead of tables"),
    ) -> None:
        """Counts per stage / task / variant / split, chains, skipped tasks, licences, quarantine."""
        from medr2.bench.info import bench_info, render_info

        data = bench_info(bench)
        if as_json:
            typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
        else:
            render_info(data)
