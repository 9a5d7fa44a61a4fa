"""``finetune``: TRL SFTTrainer + PEFT LoRA on a local checkpoint, with the bench's train split (DESIGN §10).

Loss only on what the assistant says (TRL ``assistant_only_loss``; the chat template's
``{% generation %}`` markers, or TRL's training template for known model families). An optional
short full fine-tuning "base" stage runs first: LoRA on a randomly initialised model stalls. The
default LoRA targets are every linear and convolution layer except the output head, so for LLaVA the
vision patch layer and the projector adapt too. Writes ``OUT/adapter`` (PEFT), ``OUT/merged`` (a
plain checkpoint for ``hf:OUT/merged``) and ``OUT/finetune.json``. Same code on CPU and GPU:
bf16 and gradient checkpointing only where CUDA is present.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from medr2.errors import BadInput
from medr2.models.hf import box_convention_for
from medr2.train.export import Example, plan_examples
from medr2.train.formats import hf_features, hf_records


@dataclass(frozen=True)
class FinetuneConfig:
    strategy: str = "flat"
    with_variants: bool = False
    epochs: float = 3.0
    lr: float = 2e-4
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.0
    target_modules: tuple[str, ...] = ()  # empty: all linear + conv layers except the output head
    batch_size: int = 8
    grad_accum: int = 1
    full_steps: int = 0  # optional full fine-tuning steps before LoRA
    full_lr: float = 1e-3
    max_length: int | None = 2048
    seed: int = 0
    device: str = "auto"  # auto / cpu / cuda
    logging_steps: int = 10
    preset: str | None = None  # the box convention of the target boxes; None: pixels of the processor's input
    extra: dict[str, Any] = field(default_factory=dict)  # more SFTConfig arguments


def default_target_modules(model: Any) -> list[str]:
    """Names (last component) of every Linear / Conv2d layer except the output head; a layer whose last
    component also names another kind of module (Qwen2-VL's merger ``mlp.0`` beside its vision ``blocks.0``,
    which PEFT would then try to wrap) is named by its full path instead."""
    import torch

    head = model.get_output_embeddings()
    wanted: dict[str, list[str]] = {}
    other: set[str] = set()
    for name, mod in model.named_modules():
        last = name.rsplit(".", 1)[-1]
        if mod is not head and isinstance(mod, torch.nn.Linear | torch.nn.Conv2d):
            wanted.setdefault(last, []).append(name)
        elif mod is not head:
            other.add(last)
    names = set()
    for last, full in wanted.items():
        names.update(full if last in other else [last])
    return sorted(names)


def build_dataset(examples: list[Example], bench_root: Path) -> Any:
    """The TRL conversational dataset (same rows as the ``hf`` export)."""
    from datasets import Dataset

    return Dataset.from_list(hf_records(examples, bench_root, dpo=False), features=hf_features(False))


def _use_cuda(cfg: FinetuneConfig) -> bool:
    import torch

    if cfg.device == "auto":
        return torch.cuda.is_available()
    return cfg.device.startswith("cuda")


def sft_config(cfg: FinetuneConfig, out: Path, *, max_steps: int = -1, lr: float | None = None) -> Any:
    from trl import SFTConfig

    cuda = _use_cuda(cfg)
    import torch

    bf16 = cuda and torch.cuda.is_bf16_supported()
    kwargs: dict[str, Any] = {
        "output_dir": str(out), "num_train_epochs": cfg.epochs, "max_steps": max_steps,
        "learning_rate": cfg.lr if lr is None else lr, "per_device_train_batch_size": cfg.batch_size,
        "gradient_accumulation_steps": cfg.grad_accum, "assistant_only_loss": True, "max_length": cfg.max_length,
        "bf16": bf16, "fp16": False, "gradient_checkpointing": cuda, "use_cpu": not cuda,
        "seed": cfg.seed, "data_seed": cfg.seed, "logging_steps": cfg.logging_steps, "save_strategy": "no",
        "report_to": "none", "dataloader_num_workers": 0, "lr_scheduler_type": "constant",
        "warmup_steps": 0, "weight_decay": 0.0, "disable_tqdm": True,
        "train_sampling_strategy": "sequential" if cfg.strategy == "curriculum" else "random",
    }
    kwargs.update(cfg.extra)
    return SFTConfig(**kwargs)


def build_trainer(model: Any, processor: Any, dataset: Any, args: Any, peft_config: Any = None,
                  callbacks: Sequence[Any] = ()) -> Any:
    from transformers.trainer_callback import PrinterCallback
    from trl import SFTTrainer

    trainer = SFTTrainer(model=model, args=args, train_dataset=dataset, processing_class=processor,
                         peft_config=peft_config, callbacks=list(callbacks) or None)
    if callbacks:  # the given callbacks show progress; no raw log dicts on stdout
        trainer.remove_callback(PrinterCallback)
    return trainer


def load_base(base: Path, cfg: FinetuneConfig) -> tuple[Any, Any]:
    import torch
    from transformers import AutoModelForImageTextToText, AutoProcessor

    if not (base / "config.json").is_file():
        raise BadInput("not a model folder (no config.json)", file=str(base))
    cuda = _use_cuda(cfg)
    dtype = torch.bfloat16 if cuda and torch.cuda.is_bf16_supported() else torch.float32
    processor = AutoProcessor.from_pretrained(base, local_files_only=True)
    model = AutoModelForImageTextToText.from_pretrained(base, dtype=dtype, local_files_only=True)
    return model, processor


def _log(trainer: Any) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if isinstance(v, int | float)} for e in trainer.state.log_history]


def finetune(base: Path | str, bench_root: Path | str, out: Path | str,
             cfg: FinetuneConfig | None = None, *, callbacks: Sequence[Any] = ()) -> dict[str, Any]:
    """Fine-tune ``base`` on the bench's train split; return (and write) the report. ``callbacks``
    (transformers ``TrainerCallback`` objects, e.g. a progress display) go to every training stage."""
    import torch
    from peft import LoraConfig
    from transformers import set_seed

    from medr2.bench.format import load_bench

    cfg = cfg or FinetuneConfig()
    base, out = Path(base), Path(out)
    t_start = time.perf_counter()
    bench = load_bench(bench_root)
    set_seed(cfg.seed)
    model, processor = load_base(base, cfg)
    if cfg.preset:  # target boxes in the family's own space (0-1, 0-1000, or the preset's resize rule)
        from medr2.models.presets import get_preset

        conv = get_preset(cfg.preset).box
    else:  # target boxes in the model's own input pixels
        conv = box_convention_for(processor.image_processor)
    try:
        plan = plan_examples(bench.items, bench.cases, strategy=cfg.strategy, with_variants=cfg.with_variants,
                             seed=cfg.seed, conv=conv)
    except ValueError as e:
        raise BadInput(str(e), field="strategy") from e
    if not plan.examples:
        raise BadInput(f"no train-split examples (skipped: {dict(plan.skipped)})", file=str(bench_root))
    dataset = build_dataset(plan.examples, bench.root)
    out.mkdir(parents=True, exist_ok=True)
    stages: list[dict[str, Any]] = []
    if cfg.full_steps > 0:
        t0 = time.perf_counter()
        trainer = build_trainer(model, processor, dataset,
                                sft_config(cfg, out / "full", max_steps=cfg.full_steps, lr=cfg.full_lr),
                                callbacks=callbacks)
        result = trainer.train()
        model = trainer.model
        stages.append({"stage": "full", "steps": result.global_step, "train_loss": result.training_loss,
                       "seconds": round(time.perf_counter() - t0, 2), "log": _log(trainer)})
    targets = list(cfg.target_modules) or default_target_modules(model)
    lora = LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha, lora_dropout=cfg.lora_dropout,
                      target_modules=targets, bias="none")
    t0 = time.perf_counter()
    trainer = build_trainer(model, processor, dataset, sft_config(cfg, out / "lora"), peft_config=lora,
                            callbacks=callbacks)
    result = trainer.train()
    stages.append({"stage": "lora", "steps": result.global_step, "train_loss": result.training_loss,
                   "seconds": round(time.perf_counter() - t0, 2), "target_modules": targets, "log": _log(trainer)})
    peft_model = trainer.model
    peft_model.save_pretrained(out / "adapter")
    processor.save_pretrained(out / "adapter")
    merged = peft_model.merge_and_unload()
    merged.config.use_cache = True
    merged.save_pretrained(out / "merged")
    processor.save_pretrained(out / "merged")
    report = {"base": str(base.resolve()), "bench": bench.name, "bench_checksum": bench.checksum,
              "config": {**asdict(cfg), "target_modules": targets}, "device": "cuda" if _use_cuda(cfg) else "cpu",
              "torch": torch.__version__, "n_examples": len(plan.examples), **{"export": plan.summary()},
              "stages": stages, "adapter": str((out / "adapter").resolve()), "merged": str((out / "merged").resolve()),
              "seconds": round(time.perf_counter() - t_start, 2)}
    (out / "finetune.json").write_text(json.dumps(report, indent=1, sort_keys=True, default=str) + "\n", "utf-8")
    return report
