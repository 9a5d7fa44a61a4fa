#!/usr/bin/env python
"""GPU recipe: fine-tune a real checkpoint with each strategy and evaluate it before and after.

Runs, with the ``medr2`` command line a user runs (one subprocess per step, so every step can be rerun
by hand from the printed command):

1. ``medr2 eval`` of the base model on the bench's test split (``independent`` on clean items and the
   robustness variants; ``chain-own`` and ``blind`` on clean items), then ``medr2 score``;
2. per strategy: ``medr2 finetune --strategy S`` from the same base on the same budget (LoRA; merged
   weights in ``OUT/models/S/merged``), then the same ``eval`` and ``score`` of the merged model;
3. ``medr2 report`` over every run, and ``OUT/summary.md``: the before/after table and each strategy vs
   ``flat`` on clean accuracy and every robustness metric (paired case bootstrap, cluster-aware test).

Example (one GPU, Qwen2.5-VL-3B-Instruct with LoRA; download the checkpoint first)::

    huggingface-cli download Qwen/Qwen2.5-VL-3B-Instruct --local-dir ckpt/qwen2.5-vl-3b
    medr2 build --source sample --out bench --variants T3,T4,T6,T8,V1,V2
    python scripts/finetune_recipe.py --model ckpt/qwen2.5-vl-3b --preset qwen2.5-vl --bench bench \\
        --out recipe --strategies flat,chain,augmented,dpo,grpo --device cuda --epochs 1

Every stored answer and every fine-tuned model is reused when the command is rerun on the same ``--out``
(an interrupted recipe resumes). Extra ``medr2 finetune`` options go after ``--``.
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
from pathlib import Path

STRATEGIES = ("flat", "curriculum", "chain", "augmented", "dpo", "grpo")


def _medr2(*args: str) -> None:
    cmd = [sys.executable, "-c", "from medr2.cli import main; main()", *args]
    print("+ medr2 " + shlex.join(args), flush=True)
    subprocess.run(cmd, check=True)


def _eval(args: argparse.Namespace, model: str, run: Path) -> None:
    common = ["--bench", str(args.bench), "--model", model, "--out", str(run), "--split", args.split,
              "--max-new-tokens", str(args.max_new_tokens), "--batch-size", str(args.eval_batch_size),
              "--seed", str(args.seed), "--no-progress", "--model-option", f"device={args.device}"]
    if args.preset:
        common += ["--preset", args.preset]
    if args.limit:
        common += ["--limit", str(args.limit)]
    _medr2("eval", *common, "--mode", "independent", "--variants", f"clean,{args.variants}")
    _medr2("eval", *common, "--mode", "chain-own,blind", "--variants", "clean")
    _medr2("score", str(run), "--seed", str(args.seed), "--resamples", str(args.resamples))


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, extra = argv[:at], argv[at + 1:]
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", type=Path, required=True, help="base checkpoint folder (AutoModelForImageTextToText)")
    p.add_argument("--bench", type=Path, required=True, help="bench folder (medr2 build) with a train and test split")
    p.add_argument("--out", type=Path, required=True, help="output folder (rerun to resume)")
    p.add_argument("--strategies", default="flat,chain,augmented,dpo,grpo",
                   help=f"comma list of {', '.join(STRATEGIES)}; flat is always trained (the reference)")
    p.add_argument("--device", default="cuda", choices=("auto", "cpu", "cuda"))
    p.add_argument("--preset", default="", help="medr2 preset of the model family (e.g. qwen2.5-vl)")
    p.add_argument("--variants", default="T3,T4-authority,T6,T8,V1,V2",
                   help="variants asked in independent mode beside clean")
    p.add_argument("--split", default="test")
    p.add_argument("--limit", type=int, default=0, help="at most N evaluation items (whole cases); 0: all")
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--grad-accum", type=int, default=4)
    p.add_argument("--lora-r", type=int, default=16)
    p.add_argument("--max-new-tokens", type=int, default=64)
    p.add_argument("--eval-batch-size", type=int, default=8)
    p.add_argument("--resamples", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    strategies = list(dict.fromkeys(["flat", *(s.strip() for s in args.strategies.split(",") if s.strip())]))
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown:
        p.error(f"--strategies: unknown strategy {unknown[0]!r} (known: {', '.join(STRATEGIES)})")
    out: Path = args.out
    (out / "runs").mkdir(parents=True, exist_ok=True)

    runs = {"before": out / "runs" / "before"}
    _eval(args, f"hf:{args.model.resolve()}", runs["before"])
    for s in strategies:
        model_dir = out / "models" / s
        if not (model_dir / "finetune.json").is_file() or not (model_dir / "merged" / "config.json").is_file():
            _medr2("finetune", "--base", str(args.model), "--bench", str(args.bench), "--out", str(model_dir),
                   "--strategy", s, "--device", args.device, "--epochs", str(args.epochs), "--lr", str(args.lr),
                   "--batch-size", str(args.batch_size), "--grad-accum", str(args.grad_accum),
                   "--lora-r", str(args.lora_r), "--lora-alpha", str(2 * args.lora_r), "--seed", str(args.seed),
                   *extra)
        runs[s] = out / "runs" / s
        _eval(args, f"hf:{(model_dir / 'merged').resolve()}", runs[s])
    _medr2("report", *(str(r) for r in runs.values()), "--out", str(out / "report"),
           "--title", f"{args.model.name}: before and after fine-tuning")

    from medr2.demokit.summary import write_summary

    write_summary(out / "summary.md", runs, roles={"before": "base", **{s: f"fine-tuned ({s})" for s in strategies}},
                  before="before", after=strategies, also_against=(), seed=args.seed, resamples=args.resamples,
                  flat="flat")
    print(f"report: {out / 'report' / 'index.html'}\nsummary: {out / 'summary.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
