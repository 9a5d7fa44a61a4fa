"""``medr2 merge``: combine shard runs into one run (docs/running.md)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer


def merge_command(
    shards: Annotated[list[Path], typer.Argument(help="Shard run folders.")],
    out: Annotated[Path, typer.Option("--out", help="Merged run folder (new).")],
) -> None:
    """Combine shard runs of one bench and one model setting into one run."""
    from medr2.api import merge
    from medr2.console import make_console

    manifest = merge(shards, out, command=sys.argv)
    missing = manifest["shards_missing"]
    console = make_console(stderr=True)
    console.print(
        f"merged {len(manifest['merged_from'])} shards into {out}: {manifest['counts']}"
        + (f" [yellow](missing shards: {', '.join(missing)})[/]" if missing else ""), highlight=False)
    for s in manifest.get("shards_incomplete", []):
        console.print(f"[bold yellow]warning:[/] shard {s['shard']} ({s['path']}) did not finish its eval "
                      f"(status {s['status']}): the merged run is incomplete; rerun that shard's eval to resume it, "
                      "then merge again", highlight=False, markup=True)


def register(app: typer.Typer) -> None:
    app.command("merge")(merge_command)
