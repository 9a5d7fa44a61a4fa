"""``medr2 finetune``: TRL + PEFT LoRA on the bench's train split (docs/finetuning.md)."""

from __future__ import annotations

from pathlib import Path

import typer

from medr2.catalog import FINETUNE_STRATEGIES, STRATEGIES, listing
from medr2.console import echo


def register(app: typer.Typer) -> None:
    @app.command("finetune")
    def finetune_cmd(
        base: Path = typer.Option(..., "--base", help="local checkpoint folder"),
        bench: Path = typer.Option(..., "--bench", help="bench folder (its train split is used)"),
        out: Path = typer.Option(..., "--out", help="output folder: adapter/, merged/, finetune.json"),
        strategy: str = typer.Option("flat", "--strategy", help=f"{listing(STRATEGIES, ' | ')} (SFT) | "
                                     f"{listing(FINETUNE_STRATEGIES[len(STRATEGIES):], ' | ')}"),
        with_variants: bool = typer.Option(False, "--with-variants", metavar=""),
        epochs: float = typer.Option(3.0, "--epochs"),
        lr: float = typer.Option(2e-4, "--lr", help="LoRA learning rate"),
        lora_r: int = typer.Option(16, "--lora-r"),
        lora_alpha: int = typer.Option(32, "--lora-alpha"),
        target_modules: list[str] = typer.Option([], "--target-modules",
                                                 help="LoRA target layer names (repeat); default all linear+conv"),
        batch_size: int = typer.Option(8, "--batch-size"),
        grad_accum: int = typer.Option(1, "--grad-accum"),
        full_steps: int = typer.Option(0, "--full-steps", help="full fine-tuning steps before LoRA"),
        pretrain_steps: int = typer.Option(0, "--pretrain-steps",
                                           help="full fine-tuning steps on one caption per train image, first"),
        full_lr: float = typer.Option(1e-3, "--full-lr"),
        vision_lr_scale: float = typer.Option(1.0, "--vision-lr-scale",
                                              help="the image path's rate relative to --full-lr in the full stages"),
        freeze: list[str] = typer.Option([], "--freeze", show_default="none",
                                         help="a module no stage trains, by name (repeat), e.g. vision_tower"),
        max_length: int = typer.Option(2048, "--max-length"),
        seed: int = typer.Option(0, "--seed"),
        device: str = typer.Option("auto", "--device", help="auto | cpu | cuda"),
        preset: str | None = typer.Option(None, "--preset", show_default="pixels of the processor's input",
                                          help="box convention of the target boxes (as medr2 eval --preset)"),
        answer_style: str = typer.Option("letter", "--answer-style",
                                         help="multiple-choice targets: letter ('B. X-ray') | option-text ('X-ray') | "
                                              "letter-only ('B')"),
    ) -> None:
        """Fine-tune a checkpoint with TRL + PEFT LoRA on the bench's train split."""
        from medr2.api import finetune
        from medr2.train.finetune import describe_stage

        rep = finetune(base, bench, out, strategy=strategy, with_variants=with_variants, epochs=epochs, lr=lr,
                       lora_r=lora_r, lora_alpha=lora_alpha, target_modules=target_modules, batch_size=batch_size,
                       grad_accum=grad_accum, full_steps=full_steps, full_lr=full_lr, max_length=max_length,
                       seed=seed, device=device, preset=preset, answer_style=answer_style,
                       pretrain_steps=pretrain_steps, vision_lr_scale=vision_lr_scale, freeze=freeze)
        losses = "; ".join(describe_stage(s) for s in rep["stages"])
        echo(f"fine-tuned on {rep['n_examples']} examples ({losses}); evaluate with --model hf:{rep['merged']}")
