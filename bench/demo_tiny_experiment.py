"""One configuration of the demo's tiny VLM against the text prior (issue #18 item 2; docs/finetuning.md).

Builds the tiny VLM as ``medr2 demo`` does (tokenizer on the train split's text), fine-tunes it on BENCH's
train split, evaluates it and ``baseline:prior`` on the test split (``independent``, clean + V2), scores
both and prints the paired differences (case bootstrap) overall, per stage and per task, with VRS and IS.

    python bench/demo_tiny_experiment.py BENCH OUT NAME [--answer-style letter-only] [--strategy augmented]
           [--epochs 0.217] [--pretrain 200] [--full 150] [--image-size 32] [--patch-size N]
           [--patch-init pooled] [--image-position last] [--seed 0] [--resamples 200]

BENCH: the demo's bench (``medr2 demo``'s ``DIR/bench``, or ``medr2 build --source sample --cases 200 --variants
T3,T4,T6,T8,V1,V2 --split-unit case``). Prints the CPU seconds of training and of the whole run.
"""

from __future__ import annotations

import argparse
import json
import resource
from pathlib import Path
from typing import Any


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def cell(d: Any) -> str:
    return f"{d['value']:.2f} [{d['lo']:.2f}, {d['hi']:.2f}]" if isinstance(d, dict) and "value" in d else str(d)


def main() -> None:
    import torch

    from medr2.bench.format import read_items_table
    from medr2.models.tiny import build_tiny_vlm
    from medr2.train.finetune import FinetuneConfig, describe_stage, finetune

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bench", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("name")
    ap.add_argument("--image-size", type=int, default=32)
    ap.add_argument("--patch-size", type=int, default=None, help="default: the image size (one image token)")
    ap.add_argument("--patch-init", default="random", help="random or pooled (medr2.models.tiny)")
    ap.add_argument("--image-position", default="first", help="first or last (medr2.models.tiny)")
    ap.add_argument("--vision-hidden", type=int, default=None, help="the vision tower's width (default 64)")
    ap.add_argument("--freeze", nargs="*", default=[],
                    help="modules no stage trains (e.g. vision_tower multi_modal_projector)")
    ap.add_argument("--pretrain", type=int, default=200)
    ap.add_argument("--full", type=int, default=150)
    ap.add_argument("--epochs", type=float, default=1.0)
    ap.add_argument("--strategy", default="flat")
    ap.add_argument("--vision-lr-scale", type=float, default=1.0,
                    help="the image path's learning rate relative to the rest in the full-tuning stages")
    ap.add_argument("--answer-style", default="letter")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--resamples", type=int, default=200)
    ap.add_argument("--choice", default="generate",
                    help="how the fine-tuned model answers closed questions, comma list of generate, loglik "
                         "(medr2.models.choice); each is evaluated and reported")
    ap.add_argument("--reuse", action="store_true", help="evaluate the model fine-tuned by an earlier run of NAME")
    a = ap.parse_args()
    torch.set_num_threads(1)
    root = a.out / a.name
    root.mkdir(parents=True, exist_ok=True)
    t0 = cpu_seconds()
    if a.reuse:
        evaluate_all(a, root, t0, json.loads((root / "train.json").read_text())["cpu_s"])
        return
    rows = read_items_table(a.bench, ["question", "options", "split", "variant"]).to_pylist()
    train = [r for r in rows if r["split"] == "train" and r["variant"] == "clean"]
    texts = sorted({r["question"] for r in train} | {o for r in train for o in r["options"]})
    build_tiny_vlm(root / "tiny", seed=a.seed, image_size=a.image_size, extra_text=texts, patch_size=a.patch_size,
                   patch_init=a.patch_init, image_position=a.image_position, vision_hidden=a.vision_hidden)
    ft = FinetuneConfig(strategy=a.strategy, freeze=tuple(a.freeze), epochs=a.epochs, lr=2e-3, lora_r=16,
                        lora_alpha=32, batch_size=16,
                        full_steps=a.full, pretrain_steps=a.pretrain, full_lr=2e-3, seed=a.seed, device="cpu",
                        logging_steps=10, answer_style=a.answer_style,
                        vision_lr_scale=a.vision_lr_scale)
    rep = finetune(root / "tiny", a.bench, root / "ft", ft)
    train_cpu = cpu_seconds() - t0
    print("train:", "; ".join(describe_stage(s) for s in rep["stages"]), f"({train_cpu:.0f} CPU s)")
    (root / "train.json").write_text(json.dumps({"cpu_s": round(train_cpu)}) + "\n", "utf-8")
    evaluate_all(a, root, t0, train_cpu)


def evaluate_all(a: argparse.Namespace, root: Path, t0: float, train_cpu: float) -> None:
    from medr2.bench.format import load_bench
    from medr2.models.config import ModelConfig
    from medr2.run.runner import EvalConfig, run_eval
    from medr2.scoring.metrics import compare_runs
    from medr2.scoring.scorer import load_table, score_run

    bench = load_bench(a.bench)

    def evaluate(spec: str, out: Path, extra: dict[str, Any]) -> Path:
        cfg = EvalConfig(bench=a.bench, model=ModelConfig(spec, max_new_tokens=24, batch_size=32, seed=0, extra=extra),
                         out=out, split="test", command=("bench/demo_tiny_experiment.py",), modes=("independent",),
                         variants=("clean", "V2"))
        run_eval(cfg, bench=bench)
        score_run(out, seed=0, n_resamples=a.resamples)
        return out

    prior = a.out / "prior"
    if not (prior / "metrics.json").is_file():
        evaluate("baseline:prior", prior, {})
    for choice in a.choice.split(","):
        run = root / ("run" if choice == "generate" else f"run-{choice}")
        model = evaluate(f"hf:{(root / 'ft' / 'merged').resolve()}", run,
                         {"device": "cpu", "dtype": "float32", "choice": choice})
        cmp = compare_runs(load_table(model), load_table(prior), seed=0,
                           n_resamples=a.resamples)["modes"]["independent"]
        ind = json.loads((model / "metrics.json").read_text())["modes"]["independent"]
        result = {"name": a.name, "choice": choice, "args": {k: str(v) for k, v in vars(a).items()},
                  "cpu_s": {"train": round(train_cpu), "total": round(cpu_seconds() - t0)},
                  "overall": cell(cmp["overall"]),
                  **{f"S{s}": cell(cmp["stages"].get(s)) for s in "1234"},
                  "VRS": cell(ind["visual_reliance"].get("VRS")), "IS": cell(ind["visual_reliance"].get("IS")),
                  "unparsed": cell(ind["rates"].get("unparsed")),
                  "tasks": {k: cell(v) for k, v in cmp["tasks"].items()}}
        print(json.dumps(result, indent=1))
        (root / f"result-{choice}.json").write_text(json.dumps(result, indent=1) + "\n", "utf-8")


if __name__ == "__main__":
    main()
