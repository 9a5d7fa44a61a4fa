"""``medr2 demo``: the whole loop on the bundled sample, offline (docs/demo.md).

Build the sample bench with variants, build the tiny VLM, evaluate the baselines and the untrained
tiny VLM on the test split, fine-tune the tiny VLM with the ``flat`` and the ``chain`` strategies on
the train split (plus any ``--strategies``), evaluate each again, score every run and write one report plus
``summary.md`` (the before/after table, and each strategy vs ``flat`` on accuracy and robustness, with
95% bootstrap intervals over patients and a cluster-aware test). Every stage calls the library API.

Output folder::

    DIR/demo.json            configuration, timings per stage, paths
    DIR/bench/               the bench (medr2 build)
    DIR/models/tiny/         the untrained tiny VLM (medr2 tiny-vlm)
    DIR/models/tiny-flat/    fine-tuned with --strategy flat   (adapter/, merged/, finetune.json)
    DIR/models/tiny-chain/   fine-tuned with --strategy chain
    DIR/runs/<model>/        one scored run per model (manifest, store.sqlite, scores.parquet, metrics.json)
    DIR/report/index.html    the report (leaderboard.{md,csv,json}, plots/)
    DIR/summary.md           the before/after table
    DIR/logs/lane-2.log      what the libraries printed in the background lane (``lanes`` 2)

The fine-tunings and the evaluation of the untrained model are independent of each other: with ``lanes=2``
(the default where there are 2 cores) a second process runs some of them beside the main one
(:mod:`medr2.demokit.lanes`); the same things are computed either way.

Rerunning the same command on the same folder resumes: the bench, the models and every stored
answer are reused; scoring, the report and the summary are rewritten.
"""

from __future__ import annotations

import json
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import medr2
from medr2 import jsonsafe
from medr2.demokit.display import DemoDisplay, StageDisplay
from medr2.demokit.lanes import Group, GroupCounter, Job, SecondLane, cpu_seconds, timed
from medr2.demokit.summary import append_timings
from medr2.errors import BadInput
from medr2.interrupts import interruptible
from medr2.models.choice import CHOICE_MODES
from medr2.outdir import contents

DEMO_FILE = "demo.json"
SUMMARY_FILE = "summary.md"


@dataclass(frozen=True)
class DemoConfig:
    """What the demo builds, evaluates and trains. The defaults are the documented demo."""

    cases: int = 200
    seed: int = 0
    # each case its own split group (medr2.tasks.splits): the test split's images are other crops, lesions and
    # degradations of backgrounds that also occur in training, so it measures whether a model reads the image,
    # not generalisation to new patients (by patient, the 200-case test split holds modalities train never has)
    split_unit: str = "case"
    # variants built into the bench, and the ones asked in ``independent`` mode (besides clean); T2 (the correct
    # hint) beside T3 (the misleading premise) on the same parents gives PRI, the prompt-reliance index
    variants: tuple[str, ...] = ("T2", "T3", "T4", "T6", "T8", "V1", "V2")
    eval_variants: tuple[str, ...] = ("T2", "T3", "T4-authority", "T6", "T8", "V1", "V2")
    # modes asked on the clean test items only (independent is asked on clean + eval_variants)
    clean_modes: tuple[str, ...] = ("chain-own", "blind")
    baselines: tuple[str, ...] = ("random", "prior", "oracle")
    strategies: tuple[str, ...] = ("flat", "chain")
    split: str = "test"
    max_new_tokens: int = 24
    eval_batch_size: int = 32
    image_size: int = 32
    # fine-tuning (each strategy starts from the same untrained checkpoint): image pre-training on one caption
    # per train image (the tiny model's image features are random), then full fine-tuning on the strategy's
    # data, then LoRA; multiple-choice targets as the option's text (docs/finetuning.md, "The demo's tiny VLM").
    # 800 caption steps with the frozen tower (run P800F there): the models' answers follow the image (VRS 0.02
    # [0.01, 0.04], IS 0.09 in the experiment; 200 steps gave VRS 0.01 [-0.00, 0.02], run FRZT); the demo then takes
    # 13 min on 2 idle cores with 2 lanes (docs/demo.md, "Time budget")
    pretrain_steps: int = 800
    # the tiny VLM's image path: a vision tower 256 wide that no stage trains, as LLaVA freezes its vision encoder
    # (its random features keep part of what a linear probe reads within a modality; trained, the 64-wide tower's
    # features collapsed to little more than the modality), and a trained projector (docs/finetuning.md, run FRZT)
    vision_hidden: int = 256
    freeze: tuple[str, ...] = ("vision_tower",)
    full_steps: int = 300
    full_lr: float = 2e-3
    epochs: float = 2.0
    answer_style: str = "option-text"
    # how the tiny VLMs answer closed questions (multiple choice, yes/no) in evaluation: "loglik", the option whose
    # answer (written in the answer style the fine-tuning trained) is the most likely (medr2.models.choice), or
    # "generate" (greedy generation, parsed as any answer); docs/finetuning.md, "The demo's tiny VLM"
    choice: str = "loglik"
    lr: float = 2e-3
    train_batch_size: int = 16
    lora_r: int = 16
    lora_alpha: int = 32
    resamples: int = 1000
    workers: int | None = None
    threads: int | None = 1  # the tiny model's matrices gain nothing from more; a busy machine loses a lot
    lanes: int = 1  # processes running independent stages side by side (demokit.lanes); demo_config: min(2, cores)

    def identity(self) -> dict[str, Any]:
        """What must match for a rerun on the same folder to resume (not workers/threads/lanes, which do not
        change what is computed), as it reads back from ``demo.json`` (lists, not tuples)."""
        d = asdict(self)
        for how in ("workers", "threads", "lanes"):
            d.pop(how)
        return jsonsafe.loads(json.dumps(d))


# --quick: a smoke test of the loop. Its 30 + 30 steps are too few for option-text targets (the model writes a train
# label that is not among the options: 0.52-0.60 of its answers unparsed, measured), so it trains letter-only targets
QUICK = DemoConfig(cases=40, variants=("T2", "T3", "T6", "V2"), eval_variants=("T2", "T3", "T6", "V2"),
                   pretrain_steps=30, full_steps=30, epochs=1.0, resamples=200, answer_style="letter-only")


def demo_config(*, quick: bool = False, cases: int | None = None, seed: int = 0, workers: int | None = None,
                threads: int | None = 1, strategies: Sequence[str] = (), lanes: int | None = None,
                choice: str | None = None) -> DemoConfig:
    """The demo's configuration: the default, or the much smaller ``--quick`` one. ``strategies`` are
    fine-tuned and evaluated in addition to the default ones (``flat``, ``chain``), each from the same
    untrained model on the same budget, and compared with ``flat`` in the summary. ``lanes``: processes
    running independent stages side by side (default: 2 where there are 2 cores or more, else 1)."""
    if lanes is not None and lanes not in (1, 2):
        raise BadInput(f"must be 1 or 2, not {lanes}", field="--lanes")
    if choice is not None and choice not in CHOICE_MODES:
        raise BadInput(f"must be one of {', '.join(CHOICE_MODES)}, not {choice!r}", field="--choice")
    cfg = QUICK if quick else DemoConfig()
    if choice is not None:
        cfg = replace(cfg, choice=choice)
    if strategies:
        from medr2.train.finetune import FINETUNE_STRATEGIES

        unknown = [s for s in strategies if s not in FINETUNE_STRATEGIES]
        if unknown:
            raise BadInput(f"unknown strategy {unknown[0]!r} (known: {', '.join(FINETUNE_STRATEGIES)})",
                           field="--strategies")
        cfg = replace(cfg, strategies=tuple(dict.fromkeys((*cfg.strategies, *strategies))))
    if cases is not None:
        if cases < 10:
            raise BadInput("must be at least 10 (the test split needs several cases)", field="--cases")
        cfg = replace(cfg, cases=cases)
    return replace(cfg, seed=seed, workers=workers, threads=threads,
                   lanes=lanes if lanes is not None else min(2, _cpu_count()))


# the answers the fine-tuning trains (medr2.train.render.ANSWER_STYLES), as the loglik choice writes them
CHOICE_STYLE_OF = {"option-text": "text", "letter-only": "letter", "letter": "letter-text"}


@dataclass
class DemoPaths:
    root: Path
    _bench: Any = field(default=None, repr=False)

    def loaded_bench(self) -> Any:
        """The bench, loaded and validated once for all evaluations."""
        if self._bench is None:
            from medr2.bench.format import load_bench

            self._bench = load_bench(self.bench)
        return self._bench

    @property
    def bench(self) -> Path:
        return self.root / "bench"

    @property
    def tiny(self) -> Path:
        return self.root / "models" / "tiny"

    def finetuned(self, strategy: str) -> Path:
        return self.root / "models" / f"tiny-{strategy}"

    def run(self, name: str) -> Path:
        return self.root / "runs" / name

    @property
    def report(self) -> Path:
        return self.root / "report"


@dataclass
class DemoModel:
    """One evaluated model: its run folder name, model spec, and what it is."""

    name: str
    spec: str
    role: str
    options: dict[str, Any] = field(default_factory=dict)  # adapter options (ModelConfig.extra)


@dataclass
class DemoResult:
    root: Path
    config: DemoConfig
    stages: list[dict[str, Any]] = field(default_factory=list)
    models: list[DemoModel] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def summary(self) -> Path:
        return self.root / SUMMARY_FILE

    @property
    def report(self) -> Path:
        return self.root / "report" / "index.html"


# -------------------------------------------------------------------------------------------------
# preparation


def _check_folder(paths: DemoPaths, cfg: DemoConfig) -> None:
    """The folder must be new, empty, or an earlier demo with the same configuration (resume)."""
    root = paths.root
    if root.exists() and not root.is_dir():
        raise BadInput("exists and is not a folder", file=str(root), field="--out")
    if not root.is_dir() or not contents(root):
        return
    record = root / DEMO_FILE
    if not record.is_file():
        raise BadInput("folder is not empty and holds no earlier demo; choose another --out", file=str(root),
                       field="--out")
    try:
        before = jsonsafe.load_object(record).get("config")
    except BadInput as e:
        raise BadInput(f"unreadable demo record: {e.reason}", file=str(record)) from e
    if not isinstance(before, dict) or _same_run(before) != _same_run(cfg.identity()):
        raise BadInput("the folder holds a demo with another configuration (--cases/--seed/--quick); "
                       "choose another --out", file=str(record), field="config")


def _same_run(identity: dict[str, Any]) -> dict[str, Any]:
    """What must match to resume: everything but the strategies (each has its own model and run folder,
    so a rerun with more ``--strategies`` reuses the rest and adds them)."""
    return {k: v for k, v in identity.items() if k != "strategies"}


def _quiet_libraries() -> None:
    """The demo draws its own progress: silence library bars and warnings on the console."""
    import warnings

    import datasets
    import transformers

    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    datasets.disable_progress_bars()
    datasets.utils.logging.set_verbosity_error()
    warnings.filterwarnings("ignore", category=UserWarning)
    warnings.filterwarnings("ignore", category=FutureWarning)


def _machine() -> dict[str, Any]:
    import torch

    return {"platform": platform.platform(), "python": platform.python_version(), "cpus": _cpu_count(),
            "torch": torch.__version__}


def _threads() -> int:
    import torch

    return int(torch.get_num_threads())


def _write_record(paths: DemoPaths, cfg: DemoConfig, stages: list[dict[str, Any]], status: str,
                  models: Sequence[DemoModel], t0: float) -> None:
    record = {
        "medr2_version": medr2.__version__, "status": status, "config": cfg.identity(),
        "workers": cfg.workers, "threads": _threads(), "lanes": cfg.lanes, "machine": _machine(),
        "stages": stages, "seconds": round(time.perf_counter() - t0, 1), "cpu_s": round(cpu_seconds(), 1),
        "models": [asdict(m) for m in models],
        "paths": {"bench": "bench", "report": "report/index.html", "summary": SUMMARY_FILE,
                  "runs": {m.name: f"runs/{m.name}" for m in models}},
    }
    tmp = paths.root / f".{DEMO_FILE}.tmp"
    tmp.write_text(json.dumps(record, indent=1) + "\n", "utf-8")
    tmp.replace(paths.root / DEMO_FILE)


def _earlier_stages(paths: DemoPaths) -> dict[str, dict[str, Any]]:
    """The stages an earlier (interrupted or finished) demo in this folder recorded, by title."""
    record = paths.root / DEMO_FILE
    if not record.is_file():
        return {}
    stages = jsonsafe.load_object(record).get("stages") or []
    return {s["stage"]: s for s in stages if isinstance(s, dict) and "stage" in s}


def _keep_first_time(now: dict[str, Any], before: dict[str, Any] | None) -> dict[str, Any]:
    """A stage a resume reused keeps the time of the run that did the work (the resume's near-zero
    time would misstate what the stage costs); it is marked ``reused`` with this run's time beside it."""
    if before is None or not str(now["note"]).startswith("reused"):
        return now
    if before.get("reused"):  # reused twice: the first run's figures are already in ``before``
        return {**before, "resume_seconds": now["seconds"]}
    return {**before, "reused": True, "resume_seconds": now["seconds"], "resume_note": now["note"]}


def _recorded_stages(done: Sequence[dict[str, Any]], earlier: dict[str, dict[str, Any]],
                     titles: Sequence[str]) -> list[dict[str, Any]]:
    """The stages to record, in plan order: those this run has done, then, for the stages it has not
    reached yet (an interrupted resume), what the earlier run recorded, so that the time of work done
    before is not lost and a later resume still finds it."""
    now = {s["stage"]: s for s in done}
    return [now.get(t) or earlier[t] for t in titles if t in now or t in earlier]


def _cpu_count() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


# -------------------------------------------------------------------------------------------------
# stages


def _build_bench(paths: DemoPaths, cfg: DemoConfig, ui: DemoDisplay) -> str:
    from medr2.bench.format import MANIFEST
    from medr2.builder.pipeline import build_bench

    manifest = paths.bench / MANIFEST
    if manifest.is_file():
        return "reused the bench built earlier"
    with ui.status("building") as say:
        res = build_bench("sample", paths.bench, seed=cfg.seed, n_cases=cfg.cases, variants=cfg.variants,
                          workers=cfg.workers, name="medr2-demo", progress=say, split_unit=cfg.split_unit)
    return f"{res.n_cases} cases, {res.n_clean} clean items, {res.n_items - res.n_clean} variants"


def _build_tiny(paths: DemoPaths, cfg: DemoConfig, ui: DemoDisplay) -> str:
    from medr2.bench.table import BenchTable, ItemFilter
    from medr2.models.tiny import build_tiny_vlm, count_parameters

    if (paths.tiny / "medr2_tiny.json").is_file():  # written last
        return "reused the tiny VLM built earlier"
    with ui.status("training the tokenizer and initialising the weights"):
        # the tokenizer learns the wording of the train split only (no test text). Known (kept as the demo's
        # published figures were made): ``options`` is read as its column holds it, a JSON string, so the set
        # takes its single characters, not the options' texts (CHANGELOG, Known).
        clean_train = ItemFilter(split="train", variant_ids=frozenset({"clean"}))
        texts: set[str] = set()
        table = BenchTable(paths.bench)
        for cols in table.column_values(["question", "options"], clean_train):
            texts.update(cols["question"])
            texts.update(o for options in cols["options"] for o in options)
        table.close()
        build_tiny_vlm(paths.tiny, seed=cfg.seed, image_size=cfg.image_size, extra_text=sorted(texts),
                       vision_hidden=cfg.vision_hidden)
    return f"{count_parameters(paths.tiny):,} parameters"


def _evaluate(paths: DemoPaths, cfg: DemoConfig, ui: StageDisplay, model: DemoModel) -> str:
    from medr2.models.config import ModelConfig
    from medr2.run.runner import EvalConfig, run_eval
    from medr2.variant_id import variant_matches

    bench = paths.loaded_bench()
    ids = {it.variant for it in bench.items}  # a small --cases bench may lack a variant (eval refuses asking for it)
    have = tuple(v for v in cfg.eval_variants if any(variant_matches(i, [v]) for i in ids))
    settings = ModelConfig(model.spec, max_new_tokens=cfg.max_new_tokens, batch_size=cfg.eval_batch_size,
                           seed=cfg.seed, extra=dict(model.options))
    base = EvalConfig(bench=paths.bench, model=settings, out=paths.run(model.name), split=cfg.split,
                      command=("medr2", "demo", f"--out={paths.root}"))
    calls = [replace(base, modes=("independent",), variants=("clean", *have))]
    if cfg.clean_modes:
        calls.append(replace(base, modes=cfg.clean_modes, variants=("clean",)))
    parts = []
    sent = 0
    for call in calls:
        summary = run_eval(call, progress=ui.eval_progress(f"{model.name}: {'+'.join(call.modes)}"), bench=bench)
        if summary.interrupted:
            raise KeyboardInterrupt
        sent += summary.sent
        for mode, c in summary.modes.items():
            parts.append(f"{mode} {c.planned}" + (f" ({c.error} errors)" if c.error else ""))
    asked = ", ".join(parts)
    return f"reused the answers stored earlier ({asked})" if sent == 0 else f"asked: {asked}"


def _finetune(paths: DemoPaths, cfg: DemoConfig, ui: StageDisplay, strategy: str) -> str:
    from medr2.train.finetune import FinetuneConfig, describe_stage, finetune

    out = paths.finetuned(strategy)
    report_file = out / "finetune.json"
    if report_file.is_file() and (out / "merged" / "config.json").is_file():
        return "reused the model fine-tuned earlier"
    ft = FinetuneConfig(strategy=strategy, epochs=cfg.epochs, lr=cfg.lr, lora_r=cfg.lora_r,
                        lora_alpha=cfg.lora_alpha, batch_size=cfg.train_batch_size, full_steps=cfg.full_steps,
                        pretrain_steps=cfg.pretrain_steps, answer_style=cfg.answer_style,
                        full_lr=cfg.full_lr, freeze=cfg.freeze, seed=cfg.seed, device="cpu", logging_steps=10)
    rep = finetune(paths.tiny, paths.bench, out, ft, callbacks=[ui.train_callback(strategy)])
    stages = "; ".join(describe_stage(s) for s in rep["stages"])
    return f"{rep['n_examples']} examples; {stages}"


# the stages either lane may run, by job kind: (paths, cfg, display, argument) -> note
JOBS: dict[str, Callable[[DemoPaths, DemoConfig, StageDisplay, str], str]] = {
    "finetune": _finetune,
    "evaluate": lambda paths, cfg, ui, name: _evaluate(paths, cfg, ui,
                                                       {m.name: m for m in demo_models(paths, cfg)}[name]),
}


def stage_function(paths: DemoPaths, cfg: DemoConfig, ui: StageDisplay, job: Job) -> Callable[[], str]:
    kind, arg = job
    return partial(JOBS[kind], paths, cfg, ui, arg)


def prepare_process(cfg: DemoConfig) -> None:
    """What every process running stages sets first: torch threads, quiet libraries."""
    import torch

    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    _quiet_libraries()


def _score_all(paths: DemoPaths, cfg: DemoConfig, ui: DemoDisplay, models: Sequence[DemoModel]) -> str:
    from medr2.scoring.scorer import score_run

    bar = ui.count_bar("scoring", len(models))
    with bar:
        for m in models:
            score_run(paths.run(m.name), seed=cfg.seed, n_resamples=cfg.resamples)
            bar.advance(m.name)
    return f"{len(models)} runs scored ({cfg.resamples} bootstrap resamples)"


def _report(paths: DemoPaths, cfg: DemoConfig, ui: DemoDisplay, models: Sequence[DemoModel]) -> str:
    from medr2.demokit.summary import write_summary
    from medr2.reporting import write_report

    with ui.status("writing the report"):
        index = write_report([paths.run(m.name) for m in models], paths.report,
                             title="medr2 demo: baselines and the tiny VLM before and after fine-tuning")
    with ui.status("writing the summary"):
        write_summary(paths.root / SUMMARY_FILE, {m.name: paths.run(m.name) for m in models},
                      roles={m.name: m.role for m in models},
                      before="tiny-before", after=[f"tiny-{s}" for s in cfg.strategies], seed=cfg.seed,
                      resamples=cfg.resamples)
    return f"{index.relative_to(paths.root)} and {SUMMARY_FILE}"


# -------------------------------------------------------------------------------------------------
# the whole demo


def demo_models(paths: DemoPaths, cfg: DemoConfig) -> list[DemoModel]:
    """Every model the demo evaluates, in report order."""
    models = [DemoModel(b, f"baseline:{b}", "baseline") for b in cfg.baselines]
    cpu: dict[str, Any] = {"device": "cpu", "dtype": "float32"}  # the same numbers on any machine, GPU or not
    if cfg.choice == "loglik":
        cpu |= {"choice": "loglik", "choice_style": CHOICE_STYLE_OF[cfg.answer_style]}
    models.append(DemoModel("tiny-before", f"hf:{paths.tiny.resolve()}", "tiny VLM, untrained", cpu))
    models += [DemoModel(f"tiny-{s}", f"hf:{(paths.finetuned(s) / 'merged').resolve()}",
                         f"tiny VLM fine-tuned ({s})", cpu) for s in cfg.strategies]
    return models


def _plan(paths: DemoPaths, cfg: DemoConfig, ui: DemoDisplay, models: Sequence[DemoModel]
          ) -> tuple[list[tuple[str, Callable[[], str]]], list[Group], list[tuple[str, Callable[[], str]]]]:
    """The stages: those run first in the main process, the independent groups either lane runs (each
    strategy's fine-tuning then its evaluation; the untrained model's evaluation), those run last."""
    head: list[tuple[str, Callable[[], str]]] = [
        ("build the sample bench", lambda: _build_bench(paths, cfg, ui)),
        ("build the tiny VLM", lambda: _build_tiny(paths, cfg, ui)),
    ]
    head += [(f"evaluate {m.name}", partial(_evaluate, paths, cfg, ui, m)) for m in models if m.role == "baseline"]
    groups: list[Group] = [[(f"fine-tune ({s})", ("finetune", s)), (f"evaluate tiny-{s}", ("evaluate", f"tiny-{s}"))]
                           for s in cfg.strategies]
    before: Group = [("evaluate tiny-before", ("evaluate", "tiny-before"))]
    # one lane: the untrained model first, as a reader expects; two: the long groups first, so the lanes end together
    groups = [before, *groups] if cfg.lanes == 1 else [*groups, before]
    tail: list[tuple[str, Callable[[], str]]] = [
        ("score every run", lambda: _score_all(paths, cfg, ui, models)),
        ("write the report and the summary", lambda: _report(paths, cfg, ui, models)),
    ]
    return head, groups, tail


def run_demo(out: Path | str, cfg: DemoConfig | None = None, *, display: DemoDisplay | None = None) -> DemoResult:
    """Run (or resume) the demo into ``out``; returns what was done, with the time of each stage.
    ``cfg``: default ``demo_config()`` (the documented demo, with its lanes)."""
    import multiprocessing
    import threading

    cfg = cfg or demo_config()
    paths = DemoPaths(Path(out))
    _check_folder(paths, cfg)
    ui = display or DemoDisplay()
    t0 = time.perf_counter()
    paths.root.mkdir(parents=True, exist_ok=True)
    prepare_process(cfg)
    models = demo_models(paths, cfg)
    head, groups, tail = _plan(paths, cfg, ui, models)
    titles = [t for t, _ in head] + [t for g in groups for t, _ in g] + [t for t, _ in tail]

    result = DemoResult(paths.root, cfg, models=models)
    earlier = _earlier_stages(paths)
    lock = threading.Lock()  # the background lane's reports arrive on another thread

    def record(now: dict[str, Any]) -> None:
        ui.stage_end(now["stage"])
        with lock:
            result.stages.append(_keep_first_time(now, earlier.get(now["stage"])))

    def write(status: str) -> None:
        with lock:
            stages = _recorded_stages(result.stages, earlier, titles)
        _write_record(paths, cfg, stages, status, models, t0)

    def run_here(title: str, fn: Callable[[], str]) -> None:
        ui.stage(title)
        now = timed(title, fn, lane=1)
        record(now)
        ui.stage_done(title, now["seconds"], now["note"])
        write("running")

    ui.start(paths.root, cfg, titles)
    status = "failed"
    lane: SecondLane | None = None
    try:
        for title, fn in head:
            run_here(title, fn)
        ctx = multiprocessing.get_context("spawn")
        counter = GroupCounter(ctx, len(groups))
        # the second lane's failure interrupts this thread, also in a demo started with SIGINT ignored
        with interruptible(lambda: lane is not None and lane.error is not None):
            if cfg.lanes > 1 and len(groups) > 1:
                lane = SecondLane(paths.root, cfg, groups, counter, ctx, ui.line, record, label=ui.lane_stage)
            while (g := counter.take()) is not None:
                for title, job in groups[g]:
                    run_here(title, stage_function(paths, cfg, ui, job))
            if lane is not None:
                with ui.waiting("waiting for lane 2") as say:
                    lane.wait(lambda: say(f"waiting for lane 2: {lane.current or 'starting'}"))  # type: ignore[union-attr]
                lane.stop()
                write("running")
        for title, fn in tail:
            run_here(title, fn)
        status = "complete"
        result.seconds = time.perf_counter() - t0
        reused = any(st.get("reused") for st in result.stages)
        total = sum(float(st["seconds"]) for st in result.stages) if reused else result.seconds
        append_timings(paths.root / SUMMARY_FILE, _recorded_stages(result.stages, earlier, titles), _machine(),
                       _threads(), total, lanes=cfg.lanes, total_is_sum=reused)
    except KeyboardInterrupt:
        if lane is not None and lane.error is not None:  # the background lane failed: its error, not an interrupt
            lane.stop()
            lane.raise_error()
        status = "interrupted"
        raise
    finally:
        if lane is not None:
            lane.stop()
        result.seconds = result.seconds or time.perf_counter() - t0
        write(status)
    ui.finish(result)
    return result
