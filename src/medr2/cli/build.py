"""``medr2 build``: build a bench from one or more sources."""

from __future__ import annotations

from pathlib import Path

import typer

from medr2.catalog import SOURCE_KINDS, TEXT_CODES, VISUAL_CODES, listing


def register(app: typer.Typer) -> None:
    @app.command()
    def build(
        source: list[str] = typer.Option(..., "--source", help="NAME or NAME:PATH (e.g. sample, folder:/data); "
                                         "repeat it to build one bench from several sources. Kinds: "
                                         f"{listing(SOURCE_KINDS)}"),
        quota: list[str] = typer.Option([], "--quota", show_default="no quota",
                                        help="LABEL=N: at most N cases from that source "
                                        "(LABEL: the source as given, its reader name or its mapping's name)"),
        out: Path = typer.Option(..., "--out", help="bench folder to write"),
        seed: int = typer.Option(0, "--seed", help="seed for everything random"),
        cases: int | None = typer.Option(None, "--cases", help="number of cases (default: all)"),
        variants: str | None = typer.Option(None, "--variants", show_default="none: clean items only",
                                            help="comma list of variant codes "
                                            f"({TEXT_CODES[0]}..{TEXT_CODES[-1]}, {VISUAL_CODES[0]}.."
                                            f"{VISUAL_CODES[-1]}), or 'all'"),
        workers: int | None = typer.Option(None, "--workers", help="processes (default: all cores)"),
        executor: str = typer.Option("local", "--executor", help="where the worker passes run: local (processes "
                                     "here) or ray (Ray tasks; medr2[ray]); the same bench either way"),
        ray_address: str | None = typer.Option(None, "--ray-address", help="--executor ray: the Ray cluster "
                                               "(default: RAY_ADDRESS or a running local one)"),
        renders: str = typer.Option("deferred", "--renders", help="deferred: the V2/V3/V8-V12 images are "
                                    "recorded in renders.parquet and rendered (and cached) on first use, "
                                    "77% of the bytes not written; stored: every image written. Same items, "
                                    "ids and image hashes either way"),
        split_unit: str = typer.Option("patient", "--split-unit", help="patient: cases sharing a patient or a "
                                       "source image share a split (no patient in two splits); case: each case "
                                       "on its own (test images may be other crops/lesions of train "
                                       "backgrounds; recorded as build.split_unit)"),
    ) -> None:
        """Build a bench from a source."""
        from medr2.api import build as api_build
        from medr2.builder.summary import print_summary
        from medr2.cli._signals import sigterm_as_interrupt
        from medr2.progress import for_console

        tracker = for_console("medr2 build")
        try:
            with sigterm_as_interrupt():
                result = api_build(source, out, quota=quota, seed=seed, cases=cases, variants=variants,
                                   workers=workers,
                                   progress=tracker, executor=executor, ray_address=ray_address,
                                   renders=renders, split_unit=split_unit)
        finally:
            tracker.close()
        print_summary(result)
