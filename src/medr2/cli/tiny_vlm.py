"""Model commands: ``medr2 tiny-vlm`` builds the offline tiny VLM."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command("tiny-vlm")
    def tiny_vlm(
        out: Path = typer.Option(..., "--out", help="folder to write the model into"),
        seed: int = typer.Option(0, "--seed", help="weight initialisation seed (same seed, same bytes)"),
        image_size: int = typer.Option(32, "--image-size", help="input side in pixels; also the patch size"),
        family: str | None = typer.Option(None, "--family", help="build a tiny checkpoint of this real "
                                          "architecture instead (medr2.models.families; see docs/models.md)"),
    ) -> None:
        """Build the tiny offline LLaVA-style VLM (about 1M parameters) into OUT; usable as hf:OUT."""
        from medr2.models.tiny import build_tiny_vlm, count_parameters

        if family is not None:
            from medr2.models.families import build_family, get_family

            path = build_family(family, out, seed=seed)
            typer.echo(f"wrote {path}: tiny {family} ({count_parameters(path):,} parameters); evaluate it with "
                       f"--model hf:{path} --preset {get_family(family).preset}")
            return
        path = build_tiny_vlm(out, seed=seed, image_size=image_size)
        typer.echo(f"wrote {path} ({count_parameters(path):,} parameters); evaluate it with --model hf:{path}")
