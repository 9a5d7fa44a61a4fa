"""``medr2 export`` and ``medr2 finetune`` (DESIGN §10, §13)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer


def register(app: typer.Typer) -> None:
    @app.command("export")
    def export(
        bench: Path = typer.Option(..., "--bench", help="bench folder"),
        fmt: str = typer.Option(..., "--format", help="llamafactory | swift | hf | llamafactory-dpo | swift-dpo | hf-dpo"),  # noqa: E501
        out: Path = typer.Option(..., "--out", help="output folder (must be empty or absent)"),
        strategy: str = typer.Option("flat", "--strategy", help="flat | curriculum | chain | augmented"),
        with_variants: bool = typer.Option(False, "--with-variants", help="add the train split's perturbed copies"),
        seed: int = typer.Option(0, "--seed", help="order seed"),
        replay: float = typer.Option(0.25, "--replay", help="curriculum: share of earlier stages replayed per stage"),
    ) -> None:
        """Export the bench's train split as SFT or DPO data (never test items or their images)."""
        from medr2.train.dataset import export_dataset

        opts: dict[str, Any] = {"replay": replay} if strategy == "curriculum" else {}
        m = export_dataset(bench, fmt, out, strategy=strategy, with_variants=with_variants, seed=seed, **opts)
        typer.echo(f"wrote {m['n_examples']} {fmt} records ({m['n_items']} items) to {out}; "
                   f"skipped: {json.dumps(m['skipped'])}")

    @app.command("finetune")
    def finetune_cmd(
        base: Path = typer.Option(..., "--base", help="local checkpoint folder"),
        bench: Path = typer.Option(..., "--bench", help="bench folder (its train split is used)"),
        out: Path = typer.Option(..., "--out", help="output folder: adapter/, merged/, finetune.json"),
        strategy: str = typer.Option("flat", "--strategy",
                                     help="flat | curriculum | chain | augmented (SFT) | dpo | grpo"),
        with_variants: bool = typer.Option(False, "--with-variants"),
        epochs: float = typer.Option(3.0, "--epochs"),
        lr: float = typer.Option(2e-4, "--lr", help="LoRA learning rate"),
        lora_r: int = typer.Option(16, "--lora-r"),
        lora_alpha: int = typer.Option(32, "--lora-alpha"),
        target_modules: list[str] = typer.Option([], "--target-modules",
                                                 help="LoRA target layer names (repeat); default all linear+conv"),
        batch_size: int = typer.Option(8, "--batch-size"),
        grad_accum: int = typer.Option(1, "--grad-accum"),
        full_steps: int = typer.Option(0, "--full-steps", help="full fine-tuning steps before LoRA"),
        full_lr: float = typer.Option(1e-3, "--full-lr"),
        max_length: int = typer.Option(2048, "--max-length"),
        seed: int = typer.Option(0, "--seed"),
        device: str = typer.Option("auto", "--device", help="auto | cpu | cuda"),
        preset: str | None = typer.Option(None, "--preset",
                                          help="box convention of the target boxes (as medr2 eval --preset)"),
    ) -> None:
        """Fine-tune a checkpoint with TRL + PEFT LoRA on the bench's train split."""
        from medr2.train.finetune import FinetuneConfig, describe_stage, finetune

        cfg = FinetuneConfig(strategy=strategy, with_variants=with_variants, epochs=epochs, lr=lr, lora_r=lora_r,
                             lora_alpha=lora_alpha, target_modules=tuple(target_modules), batch_size=batch_size,
                             grad_accum=grad_accum, full_steps=full_steps, full_lr=full_lr, max_length=max_length,
                             seed=seed, device=device, preset=preset)
        rep = finetune(base, bench, out, cfg)
        losses = "; ".join(describe_stage(s) for s in rep["stages"])
        typer.echo(f"fine-tuned on {rep['n_examples']} examples ({losses}); evaluate with --model hf:{rep['merged']}")
