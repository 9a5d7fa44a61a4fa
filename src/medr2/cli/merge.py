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
    from medr2.console import say, warn

    manifest = merge(shards, out, command=sys.argv)
    missing = manifest["shards_missing"]
    say(f"merged {len(manifest['merged_from'])} shards into {out}: {manifest['counts']}",
        *((" ", (f"(missing shards: {', '.join(missing)})", "yellow")) if missing else ()), err=True)
    for s in manifest.get("shards_incomplete", []):
        warn(f"shard {s['shard']} ({s['path']}) did not finish its eval (status {s['status']}): the merged run is "
             "incomplete; rerun that shard's eval to resume it, then merge again")


def register(app: typer.Typer) -> None:
    app.command("merge")(merge_command)
