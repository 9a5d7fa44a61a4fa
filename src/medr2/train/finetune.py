"""``finetune``: TRL SFTTrainer + PEFT LoRA on a local checkpoint, with the bench's train split (docs/finetuning.md).

Loss only on what the assistant says (TRL ``assistant_only_loss``; the chat template's
``{% generation %}`` markers, or TRL's training template for known model families). An optional
short full fine-tuning "base" stage runs first: LoRA on a randomly initialised model stalls. The
default LoRA targets are every linear and convolution layer except the output head, so for LLaVA the
vision patch layer and the projector adapt too. Writes ``OUT/adapter`` (PEFT), ``OUT/merged`` (a
plain checkpoint for ``hf:OUT/merged``) and ``OUT/finetune.json``. Same code on CPU and GPU:
bf16 and gradient checkpointing only where CUDA is present.
"""

from __future__ import annotations

import functools
import json
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from medr2.errors import BadInput
from medr2.models.base import BoxConvention
from medr2.models.hf import box_convention_for
from medr2.train.export import STRATEGIES, Example
from medr2.train.formats import IMAGES_REMEMBERED, hashed, hf_dataset, hf_features, hf_rows
from medr2.train.source import TrainSource
from medr2.train.stream import stream_captions, stream_examples


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
    pretrain_steps: int = 0  # optional full fine-tuning steps on image captions (stream_captions) first
    full_steps: int = 0  # optional full fine-tuning steps before LoRA
    full_lr: float = 1e-3
    # the learning rate of the image path (vision tower and projector: VISION_MODULES) relative to the rest in the
    # full-tuning stages (pre-training and full); 1.0: one rate for every weight, TRL's default optimizer
    vision_lr_scale: float = 1.0
    # modules no stage trains, by name (a component of the parameter's path, e.g. "vision_tower"): frozen in the
    # full-tuning stages and left out of the default LoRA targets (LLaVA's recipe freezes its vision encoder)
    freeze: tuple[str, ...] = ()
    max_length: int | None = 2048
    seed: int = 0
    device: str = "auto"  # auto / cpu / cuda
    logging_steps: int = 10
    preset: str | None = None  # the box convention of the target boxes; None: pixels of the processor's input
    answer_style: str = "letter"  # how targets write MCQ answers (medr2.train.render.ANSWER_STYLES)
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


def decoded_png(path: Path) -> bytes:
    """The image as the ``hf:`` adapter shows it to a model at evaluation (``load_image(..., mode="RGB")``:
    EXIF orientation applied, 16-bit windowed to 8 bit, palette/alpha converted), as lossless PNG bytes.
    Remembered for the last :data:`IMAGES_REMEMBERED` files (by path, size and modification time), so the stages
    of one fine-tuning (captions, full, LoRA) decode and encode each image once, not once per stage."""
    st = path.stat()
    return _decoded_png(path, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=IMAGES_REMEMBERED)
def _decoded_png(path: Path, size: int, mtime_ns: int) -> bytes:
    from medr2.images import encode_png, load_image

    return encode_png(load_image(path, mode="RGB"))


class _DecodedOnce:
    """A ``datasets`` transform for the ``images`` column stored undecoded (``Image(decode=False)``): each
    distinct image's bytes are decoded to a PIL image once and the decoded image handed out again while it is
    among the last :data:`IMAGES_REMEMBERED` used. ``datasets`` decodes an image each time a row is read, so an
    image shown by many examples was decoded again in every batch of every epoch (about a fifth of the CPU of a
    short fine-tuning of the demo's tiny VLM, in a profile). The same bytes decode to the same pixels: training
    computes the same thing."""

    def __init__(self) -> None:
        self._decode = functools.lru_cache(maxsize=IMAGES_REMEMBERED)(self._open)

    @staticmethod
    def _open(data: bytes) -> Any:
        import io

        from medr2.images import open_checked

        with open_checked(io.BytesIO(data)) as img:
            img.load()
            return img.copy()

    def __call__(self, batch: dict[str, list[Any]]) -> dict[str, list[Any]]:
        out = dict(batch)
        out["images"] = [[self._decode(im["bytes"]) for im in row] for row in batch["images"]]
        return out


def streamed_dataset(rows: Callable[[Iterable[Example]], Iterable[dict[str, Any]]], examples: Iterable[Example],
                     features: Any, cache: Path | None) -> Any:
    """A dataset of ``rows(examples)`` written a row at a time to an Arrow file in a new folder under ``cache``
    (None: a temporary folder, removed with the dataset) and memory-mapped from there, so TRL reads it from
    disk; its fingerprint is a hash of the examples (its ``map`` caches go to that folder too)."""
    import hashlib
    import shutil
    import tempfile
    import weakref

    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="rows-", dir=cache))
    digest = hashlib.sha256()
    ds = hf_dataset(rows(hashed(examples, digest)), features, folder / "rows.arrow", lambda: digest.hexdigest()[:16])
    if cache is None:
        weakref.finalize(ds, shutil.rmtree, folder, True)
    return ds


def build_dataset(examples: Iterable[Example], bench_root: Path, cache: Path | None = None) -> Any:
    """The TRL conversational dataset (the ``hf`` export's rows), its images decoded exactly as evaluation
    decodes them: the collator's processor then sees the same pixels in training as the ``hf:`` adapter
    does at evaluation (raw file bytes would reach it undecoded: 16-bit images clipped, EXIF ignored).
    Streamed (:func:`streamed_dataset`): ``examples`` may be a plan being made."""
    ds = streamed_dataset(lambda exs: hf_rows(exs, bench_root, dpo=False, image_bytes=decoded_png), examples,
                          hf_features(False, decode=False), cache)
    return ds.with_transform(_DecodedOnce())


def _use_cuda(cfg: FinetuneConfig) -> bool:
    import torch

    if cfg.device == "auto":
        return torch.cuda.is_available()
    return cfg.device.startswith("cuda")


def _common_args(cfg: FinetuneConfig, out: Path, max_steps: int, lr: float | None) -> dict[str, Any]:
    """Training arguments every stage (SFT, DPO, GRPO) shares: same budget, seed, logging, CPU/GPU rule."""
    import torch

    cuda = _use_cuda(cfg)
    return {
        "output_dir": str(out), "num_train_epochs": cfg.epochs, "max_steps": max_steps,
        "learning_rate": cfg.lr if lr is None else lr, "per_device_train_batch_size": cfg.batch_size,
        "gradient_accumulation_steps": cfg.grad_accum,
        "bf16": cuda and torch.cuda.is_bf16_supported(), "fp16": False, "gradient_checkpointing": cuda,
        "use_cpu": not cuda, "seed": cfg.seed, "data_seed": cfg.seed, "logging_steps": cfg.logging_steps,
        "save_strategy": "no", "report_to": "none", "dataloader_num_workers": 0, "lr_scheduler_type": "constant",
        "warmup_steps": 0, "weight_decay": 0.0, "disable_tqdm": True,
    }


def sft_config(cfg: FinetuneConfig, out: Path, *, max_steps: int = -1, lr: float | None = None) -> Any:
    from trl import SFTConfig

    kwargs = _common_args(cfg, out, max_steps, lr) | {
        "assistant_only_loss": True, "max_length": cfg.max_length,
        "train_sampling_strategy": "sequential" if cfg.strategy == "curriculum" else "random",
    }
    kwargs.update(cfg.extra)
    return SFTConfig(**kwargs)


# modules of a VLM's image path, by attribute name (LLaVA-style, Qwen-VL, Idefics/SmolVLM, InternVL)
VISION_MODULES = ("vision_tower", "multi_modal_projector", "visual", "vision_model", "connector", "mlp1")


def under(name: str, modules: Iterable[str]) -> bool:
    """Whether the parameter or module ``name`` (a dotted path) lies under a module named in ``modules``."""
    return bool(set(name.split(".")) & set(modules))


def freeze_modules(model: Any, modules: Sequence[str]) -> int:
    """Stop training every parameter under a module named in ``modules``; return how many; refused (naming the
    field) when a name matches no parameter."""
    for name in modules:
        if not any(under(n, [name]) for n, _ in model.named_parameters()):
            raise BadInput(f"no parameter under a module named {name!r}", field="freeze")
    frozen = [p for n, p in model.named_parameters() if under(n, modules)]
    for p in frozen:
        p.requires_grad_(False)
    return len(frozen)


def lora_targets(model: Any, freeze: Sequence[str] = ()) -> list[str]:
    """The default LoRA targets: :func:`default_target_modules`, or with ``freeze`` the full names of the
    linear/convolution layers not under a frozen module (a short name like ``q_proj`` would also match the
    frozen vision tower's layers)."""
    names = default_target_modules(model)
    if not freeze:
        return names
    head = model.get_output_embeddings()
    return sorted(n for n, m in model.named_modules()
                  if n and not under(n, freeze) and (n.rsplit(".", 1)[-1] in names or n in names)
                  and hasattr(m, "weight") and m is not head)


def vision_parameter_names(model: Any) -> set[str]:
    """Names of the parameters under a module named in :data:`VISION_MODULES` (the image path)."""
    return {name for name, _ in model.named_parameters() if under(name, VISION_MODULES)}


def scaled_optimizer(model: Any, lr: float, vision_scale: float) -> Any:
    """AdamW (the Trainer's defaults: betas 0.9/0.999, eps 1e-8, no weight decay) with the image path's
    parameters at ``lr * vision_scale`` and the rest at ``lr``; refused when the model has no image path."""
    import torch

    vision = vision_parameter_names(model)
    if not vision:
        raise BadInput(f"no image path: no parameter under any of {', '.join(VISION_MODULES)}",
                       field="vision_lr_scale")
    params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    groups = [{"params": [p for n, p in params if n in vision], "lr": lr * vision_scale},
              {"params": [p for n, p in params if n not in vision], "lr": lr}]
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)


def build_trainer(model: Any, processor: Any, dataset: Any, args: Any, peft_config: Any = None,
                  callbacks: Sequence[Any] = (), optimizer: Any = None) -> Any:
    from transformers.trainer_callback import PrinterCallback
    from trl import SFTTrainer

    trainer = SFTTrainer(model=model, args=args, train_dataset=dataset, processing_class=processor,
                         peft_config=peft_config, callbacks=list(callbacks) or None, optimizers=(optimizer, None))
    if callbacks:  # the given callbacks show progress; no raw log dicts on stdout
        trainer.remove_callback(PrinterCallback)
    return trainer


# -- the objective of the LoRA stage per strategy -------------------------------------------------------

@dataclass
class Stage:
    """What a strategy's main (LoRA) stage trains on and with which TRL trainer."""

    trainer: Any
    n_examples: int
    summary: dict[str, Any]


StageBuilder = Callable[[Any, Any, Any, BoxConvention, FinetuneConfig, Path, Any, Sequence[Any]], Stage]


def _sft_stage(model: Any, processor: Any, bench: Any, conv: BoxConvention, cfg: FinetuneConfig, out: Path,
               peft_config: Any, callbacks: Sequence[Any]) -> Stage:
    plan, ds = _plan_dataset(bench, cfg.strategy, cfg, conv, out)
    return Stage(build_trainer(model, processor, ds, sft_config(cfg, out), peft_config, callbacks),
                 plan.n_examples, plan.summary())


def dpo_dataset(examples: Iterable[Example], bench_root: Path, cache: Path | None = None) -> Any:
    """TRL's DPO layout (``prompt``/``chosen``/``rejected`` + ``images``), images decoded as evaluation does."""
    return streamed_dataset(lambda exs: hf_rows(exs, bench_root, dpo=True, image_bytes=decoded_png), examples,
                            hf_features(True), cache)


def _dpo_stage(model: Any, processor: Any, bench: Any, conv: BoxConvention, cfg: FinetuneConfig, out: Path,
               peft_config: Any, callbacks: Sequence[Any]) -> Stage:
    """DPO: chosen = the correct answer, rejected = the item's lure (T3/T4/T8 variants) or the evaluation's
    fixed wrong answer, over the ``augmented`` plan (clean items + the variants with an exact answer)."""
    from transformers.trainer_callback import PrinterCallback
    from trl import DPOConfig, DPOTrainer

    try:
        plan = stream_examples(bench, strategy="augmented", seed=cfg.seed, conv=conv, dpo=True,
                               work=_work(out), answer_style=cfg.answer_style)
    except ValueError as e:
        raise BadInput(str(e), field="strategy") from e
    ds = dpo_dataset(plan, bench.root, _work(out))
    if not plan.n_examples:
        raise BadInput(f"no DPO pairs in the train split (skipped: {dict(plan.skipped)})", file=str(bench.root))
    args = DPOConfig(**(_common_args(cfg, out, -1, None) | {"max_length": cfg.max_length, "beta": 0.1,
                                                             "precompute_ref_log_probs": False} | cfg.extra))
    trainer = DPOTrainer(model=model, args=args, train_dataset=ds,
                         processing_class=processor, peft_config=peft_config, callbacks=list(callbacks) or None)
    if callbacks:
        trainer.remove_callback(PrinterCallback)
    return Stage(trainer, plan.n_examples, plan.summary())


GRPO_GENERATIONS = 4
GRPO_MAX_COMPLETION = 24
UNREAD_PENALTY = -0.5  # reward of an unparsed, truncated or failed answer (a wrong one gets 0)


def verifiable_reward(items_by_id: dict[str, Any], conv: BoxConvention,
                      eos_ids: set[int]) -> Callable[..., list[float | None]]:
    """GRPO reward from medr2's own scorer: 1 for a correct verdict (boxes: their IoU with the target),
    0 for a wrong one, ``UNREAD_PENALTY`` for an answer the scorer cannot read or that ran out of tokens."""
    from medr2.records import UNREAD_OUTCOMES, Prediction
    from medr2.scoring.scorer import score_items

    def reward(prompts: list[Any], completions: list[Any], completion_ids: list[list[int]], item_ids: list[list[str]],
               **_: Any) -> list[float | None]:
        preds = []
        for comp, ids, iids in zip(completions, completion_ids, item_ids, strict=True):
            text = comp[-1]["content"] if isinstance(comp, list) else str(comp)
            if isinstance(text, list):
                text = "".join(p.get("text") or "" for p in text)
            finish = "stop" if ids and ids[-1] in eos_ids else "length"
            preds.append(Prediction(model_key="grpo", item_id=iids[-1], mode="independent", request_hash="grpo",
                                    raw=text, status="ok", finish_reason=finish))
        out: list[float | None] = []
        for s in score_items(items_by_id, preds, conv):
            if s.verdict in UNREAD_OUTCOMES:
                out.append(UNREAD_PENALTY)
            elif s.iou is not None:
                out.append(float(s.iou))
            else:
                out.append(1.0 if s.verdict == "correct" else 0.0)
        return out

    return reward


def _grpo_stage(model: Any, processor: Any, bench: Any, conv: BoxConvention, cfg: FinetuneConfig, out: Path,
                peft_config: Any, callbacks: Sequence[Any]) -> Stage:
    """GRPO with verifiable rewards (:func:`verifiable_reward`) on the prompts of the ``flat`` plan."""
    from transformers.trainer_callback import PrinterCallback
    from trl import GRPOConfig, GRPOTrainer

    def prompts(exs: Iterable[Example]) -> Iterator[dict[str, Any]]:
        for r in hf_rows(exs, bench.root, dpo=True, image_bytes=decoded_png, rejected=False):
            yield {"prompt": r["prompt"], "images": r["images"], "item_ids": r["item_ids"]}

    plan = _stream_plan(bench, "flat", cfg, conv, out)
    feats = hf_features(True)
    ds = streamed_dataset(prompts, plan, type(feats)({k: feats[k] for k in ("prompt", "images", "item_ids")}),
                          _work(out))
    _require_examples(plan, bench)
    tok = processor.tokenizer
    eos = {tok.eos_token_id, tok.pad_token_id} - {None}
    args = GRPOConfig(**(_common_args(cfg, out, -1, None) | {
        "num_generations": GRPO_GENERATIONS, "max_completion_length": GRPO_MAX_COMPLETION,
        "per_device_train_batch_size": max(GRPO_GENERATIONS, cfg.batch_size - cfg.batch_size % GRPO_GENERATIONS),
        "remove_unused_columns": False, "beta": 0.0, "temperature": 1.0, "log_completions": False} | cfg.extra))
    # the reward looks items up by id: GRPO holds the train split's records (the one stage that does)
    reward = verifiable_reward({it.item_id: it for it in bench.items()}, conv, eos)
    reward.__name__ = "medr2_verdict"  # type: ignore[attr-defined]
    trainer = GRPOTrainer(model=model, reward_funcs=[reward], args=args, train_dataset=ds,
                          processing_class=processor, peft_config=peft_config, callbacks=list(callbacks) or None)
    if callbacks:
        trainer.remove_callback(PrinterCallback)
    return Stage(trainer, plan.n_examples, plan.summary())


# strategy -> the trainer of its LoRA stage; every strategy not named here is SFT on its export plan
OBJECTIVES: dict[str, StageBuilder] = {"dpo": _dpo_stage, "grpo": _grpo_stage}
FINETUNE_STRATEGIES = (*STRATEGIES, *OBJECTIVES)


def _full_tune(model: Any, processor: Any, dataset: Any, cfg: FinetuneConfig,
               out: Path, steps: int, callbacks: Any) -> tuple[Any, dict[str, Any]]:
    """Full fine-tuning (every weight not frozen, the image path at ``vision_lr_scale`` times the rate) for
    ``steps`` on ``dataset``: the trained model and its steps, mean train loss and log (the pre-training and
    full-tuning stages)."""
    optimizer = None if cfg.vision_lr_scale == 1.0 else scaled_optimizer(model, cfg.full_lr, cfg.vision_lr_scale)
    trainer = build_trainer(model, processor, dataset, sft_config(cfg, out, max_steps=steps, lr=cfg.full_lr),
                            callbacks=callbacks, optimizer=optimizer)
    result = trainer.train()
    return trainer.model, {"steps": result.global_step, "train_loss": result.training_loss, "log": _log(trainer)}


DATA_FOLDER = ".medr2-data"  # under OUT: the sorted runs and the Arrow files of the datasets, removed at the end


def _work(out: Path) -> Path:
    """Where a stage's plan sorts and its dataset's Arrow file goes (``OUT/.medr2-data``)."""
    work = out.parent / DATA_FOLDER
    work.mkdir(parents=True, exist_ok=True)
    return work


def _stream_plan(bench: Any, strategy: str, cfg: FinetuneConfig, conv: BoxConvention, out: Path) -> Any:
    try:
        return stream_examples(bench, strategy=strategy, with_variants=cfg.with_variants, seed=cfg.seed, conv=conv,
                               work=_work(out), answer_style=cfg.answer_style)
    except ValueError as e:
        raise BadInput(str(e), field="strategy") from e


def _require_examples(plan: Any, bench: Any) -> None:
    if not plan.n_examples:
        raise BadInput(f"no train-split examples (skipped: {dict(plan.skipped)})", file=str(bench.root))


def _plan_dataset(bench: Any, strategy: str, cfg: FinetuneConfig, conv: BoxConvention, out: Path) -> tuple[Any, Any]:
    """A strategy's streamed plan and its SFT dataset (on disk, memory-mapped); refused when it is empty."""
    plan = _stream_plan(bench, strategy, cfg, conv, out)
    ds = build_dataset(plan, bench.root, _work(out))
    _require_examples(plan, bench)
    return plan, ds


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
    (transformers ``TrainerCallback`` objects, e.g. a progress display) go to every training stage. The train
    split is streamed: each stage's examples are planned out of core and written to an Arrow file under
    ``OUT/.medr2-data`` (removed at the end) that TRL reads memory-mapped."""
    cfg = cfg or FinetuneConfig()
    base, out = Path(base), Path(out)
    with TrainSource(bench_root) as bench:  # the train split, streamed: never all its records at once
        try:
            return _finetune(base, bench, out, cfg, callbacks)
        finally:
            shutil.rmtree(out / DATA_FOLDER, ignore_errors=True)


def _finetune(base: Path, bench: TrainSource, out: Path, cfg: FinetuneConfig,
              callbacks: Sequence[Any]) -> dict[str, Any]:
    import torch
    from peft import LoraConfig
    from transformers import set_seed

    t_start = time.perf_counter()
    set_seed(cfg.seed)
    model, processor = load_base(base, cfg)
    if cfg.freeze:
        freeze_modules(model, cfg.freeze)
    if cfg.preset:  # target boxes in the family's own space (0-1, 0-1000, or the preset's resize rule)
        from medr2.models.presets import get_preset

        conv = get_preset(cfg.preset).box
    else:  # target boxes in the model's own input pixels
        conv = box_convention_for(processor.image_processor)
    if cfg.strategy not in FINETUNE_STRATEGIES:
        raise BadInput(f"unknown strategy {cfg.strategy!r} (known: {', '.join(FINETUNE_STRATEGIES)})",
                       field="strategy")
    # the full-tuning base stage is SFT (DPO and GRPO need a model that already answers in form)
    base_strategy = "flat" if cfg.strategy in OBJECTIVES else cfg.strategy
    out.mkdir(parents=True, exist_ok=True)
    stages: list[dict[str, Any]] = []
    if cfg.pretrain_steps > 0:  # image pre-training: the same prompt for every image, a caption to predict
        t0 = time.perf_counter()
        captions = stream_captions(bench, seed=cfg.seed, work=_work(out / "pretrain"))
        ds = build_dataset(captions, bench.root, _work(out / "pretrain"))
        if not captions.n_examples:
            raise BadInput(f"no train images to pre-train on (skipped: {dict(captions.skipped)})",
                           file=str(bench.root))
        model, tuned = _full_tune(model, processor, ds, cfg, out / "pretrain", cfg.pretrain_steps, callbacks)
        stages.append({"stage": "pretrain", "objective": "captions", "steps": tuned["steps"],
                       "examples": captions.n_examples, "train_loss": tuned["train_loss"],
                       "seconds": round(time.perf_counter() - t0, 2), "log": tuned["log"]})
    if cfg.full_steps > 0:
        t0 = time.perf_counter()
        _, ds = _plan_dataset(bench, base_strategy, cfg, conv, out / "full")
        model, tuned = _full_tune(model, processor, ds, cfg, out / "full", cfg.full_steps, callbacks)
        stages.append({"stage": "full", "objective": "sft", "steps": tuned["steps"],
                       "train_loss": tuned["train_loss"], "seconds": round(time.perf_counter() - t0, 2),
                       "log": tuned["log"]})
    targets = list(cfg.target_modules) or lora_targets(model, cfg.freeze)
    lora = LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha, lora_dropout=cfg.lora_dropout,
                      target_modules=targets, bias="none")
    t0 = time.perf_counter()
    objective = OBJECTIVES.get(cfg.strategy, _sft_stage)
    stage = objective(model, processor, bench, conv, cfg, out / "lora", lora, callbacks)
    trainer = stage.trainer
    result = trainer.train()
    stages.append({"stage": "lora", "objective": cfg.strategy if cfg.strategy in OBJECTIVES else "sft",
                   "steps": result.global_step, "train_loss": result.training_loss,
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
              "torch": torch.__version__, "n_examples": stage.n_examples, "export": stage.summary,
              "stages": stages, "adapter": str((out / "adapter").resolve()), "merged": str((out / "merged").resolve()),
              "seconds": round(time.perf_counter() - t_start, 2)}
    (out / "finetune.json").write_text(json.dumps(report, indent=1, sort_keys=True, default=str) + "\n", "utf-8")
    return report


def describe_stage(stage: dict[str, Any]) -> str:
    """``"lora 150 steps, mean train loss 2.324 (last logged 1.139)"``: the run's mean loss (TRL's
    ``training_loss``, what a done line reports) and the last logged step's loss (what the progress bar
    ends on), each labelled so the two are not read as one number."""
    text = f"{stage['stage']} {stage['steps']} steps, mean train loss {float(stage['train_loss']):.3f}"
    logged = [e["loss"] for e in stage.get("log") or [] if isinstance(e.get("loss"), int | float)]
    return text + (f" (last logged {float(logged[-1]):.3f})" if logged else "")
