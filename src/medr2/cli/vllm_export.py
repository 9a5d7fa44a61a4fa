"""``medr2 vllm-export``: a LLaVA / LLaVA-OneVision / Gemma 3 checkpoint in vLLM's weight layout (docs/serving.md)."""

from __future__ import annotations

from pathlib import Path

import typer

from medr2.console import echo


def register(app: typer.Typer) -> None:
    @app.command("vllm-export")
    def vllm_export(
        src: Path = typer.Argument(..., help="transformers checkpoint folder (LLaVA, LLaVA-OneVision or Gemma 3, e.g. "
                                                 "from medr2 tiny-vlm)"),
        out: Path = typer.Option(..., "--out", help="folder to write the vLLM-loadable copy into"),
    ) -> None:
        """Copy a LLaVA / LLaVA-OneVision / Gemma 3 checkpoint with its vision-tower weights renamed for vLLM
        (serve OUT with vLLM)."""
        from medr2.api import vllm_export as api_vllm_export

        path = api_vllm_export(src, out)
        echo(f"wrote {path}; serve it with: python -m vllm.entrypoints.openai.api_server --model {path}")
