"""``medr2 tiny-vlm``: build the offline tiny VLM (or a tiny checkpoint of a real architecture)."""

from __future__ import annotations

from pathlib import Path

import typer

from medr2.catalog import FAMILIES, listing
from medr2.console import echo


def register(app: typer.Typer) -> None:
    @app.command("tiny-vlm")
    def tiny_vlm(
        out: Path = typer.Option(..., "--out", help="folder to write the model into"),
        seed: int = typer.Option(0, "--seed", help="weight initialisation seed (same seed, same bytes)"),
        image_size: int = typer.Option(32, "--image-size", help="input side in pixels; also the patch size"),
        family: str | None = typer.Option(None, "--family", show_default="the tiny LLaVA-style VLM",
                                          help="build a tiny checkpoint of this real architecture instead: "
                                          f"{listing(FAMILIES)} (docs/models.md)"),
    ) -> None:
        """Build the tiny offline LLaVA-style VLM (about 1M parameters) into OUT; usable as hf:OUT."""
        from medr2.api import tiny_vlm as api_tiny_vlm
        from medr2.models.tiny import count_parameters

        path = api_tiny_vlm(out, seed=seed, image_size=image_size, family=family)
        if family is not None:
            from medr2.models.families import get_family

            echo(f"wrote {path}: tiny {family} ({count_parameters(path):,} parameters); evaluate it with "
                       f"--model hf:{path} --preset {get_family(family).preset}")
            return
        echo(f"wrote {path} ({count_parameters(path):,} parameters); evaluate it with --model hf:{path}")
