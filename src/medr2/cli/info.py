"""``medr2 info``: what a bench holds."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from medr2.console import echo


def register(app: typer.Typer) -> None:
    @app.command()
    def info(
        bench: Path = typer.Argument(..., help="bench folder"),
        as_json: bool = typer.Option(False, "--json", metavar="", help="print JSON instead of tables"),
        check: bool = typer.Option(False, "--check", metavar="",
                                   help="first check every record, reference and image of the bench (each image "
                                        "by the identity rule of the bench's format version: its pixels' hash "
                                        "for format 3, its PNG bytes' for 1 and 2), as load_bench does; exit 2 "
                                        "naming the first bad one"),
        quality: bool = typer.Option(False, "--quality", metavar="",
                                     help="per task: clean items generated, cases skipped and why, and the "
                                          "answerability contract that applied (docs/tasks.md)"),
    ) -> None:
        """Counts per stage / task / variant / split, chains, skipped tasks, licences, quarantine."""
        from medr2.api import info as api_info
        from medr2.bench.info import render_info, render_quality

        data = api_info(bench, check=check, quality=quality)
        if quality:
            if as_json:
                echo(json.dumps(data, indent=2, ensure_ascii=False))
            else:
                render_quality({"quality": data})
        elif as_json:
            echo(json.dumps(data, indent=2, ensure_ascii=False))
        else:
            render_info(data)
            if check:
                echo(f"checked: {data['checked']['cases']} cases, {data['checked']['items']} items, every "
                     f"record, reference and image ({data['image_identity']}): no error")
