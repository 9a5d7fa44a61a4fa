"""The public Python API of medr2: one function per command, with the command's option names.

``medr2 build --source sample --out B --cases 40`` is ``medr2.build("sample", "B", cases=40)``; every
command of ``medr2 --help`` has its function here, and the command line calls nothing else (docs/architecture.md).
The functions write what the command writes and return what it prints as data; they show no progress
unless given a ``progress`` object (``medr2.progress``). Bad input raises :class:`~medr2.errors.BadInput`
(the command's exit 2), failed work :class:`~medr2.errors.WorkFailed` (exit 1).

The records (``Case``, ``Item``, ``Prediction``, ``Score``), the model contract (``Request``, ``Response``,
``Adapter``, ...) and the extension decorators (``register_task``, ``register_adapter``, ...) are re-exported
here too, loaded on first use: ``import medr2`` stays light.

A model may be a spec string (``openai:MODEL``, ``hf:PATH``, ``vllm:PATH``, ``baseline:NAME``), an
:class:`~medr2.models.base.Adapter` object, or your own function ``fn(request) -> str | Response``
(:class:`~medr2.models.callable.CallableAdapter`)::

    def my_model(request):
        return "A"

    medr2.evaluate("bench", my_model, "runs/mine")
    medr2.score("runs/mine")
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medr2.catalog import DEFAULT_SPLIT
from medr2.outdir import SCORE_LOCK, writes, writes_file

if TYPE_CHECKING:
    # the lazy names below (``_LAZY``), imported for type checkers only (``import medr2`` stays light): each is
    # re-exported explicitly (``X as X``), so ``medr2.api.Item`` is the class to mypy and pyright, not ``Any``
    from medr2.bench.format import Bench as Bench
    from medr2.builder.pipeline import BuildResult
    from medr2.demokit.run import DemoResult
    from medr2.errors import BadInput as BadInput, Medr2Error as Medr2Error, Skip as Skip, WorkFailed as WorkFailed
    from medr2.interop.common import ImportResult
    from medr2.models.base import (
        Adapter as Adapter,
        BoxConvention as BoxConvention,
        GenSettings as GenSettings,
        Message as Message,
        Part as Part,
        Request as Request,
        Response as Response,
    )
    from medr2.models.callable import CallableAdapter as CallableAdapter
    from medr2.models.config import ModelConfig as ModelConfig
    from medr2.models.registry import AdapterLoader
    from medr2.perturb.registry import (
        Perturbation as Perturbation,
        answer_changed_meta as answer_changed_meta,
        derive_item as derive_item,
    )
    from medr2.records import Case as Case, Item as Item, Prediction as Prediction, Score as Score
    from medr2.registry import (
        Registry as Registry,
        load_plugins as load_plugins,
        register_adapter as register_adapter,
        register_background as register_background,
        register_baseline as register_baseline,
        register_degradation as register_degradation,
        register_exporter as register_exporter,
        register_extractor as register_extractor,
        register_family as register_family,
        register_format as register_format,
        register_importer as register_importer,
        register_metric as register_metric,
        register_plot as register_plot,
        register_preset as register_preset,
        register_resize as register_resize,
        register_source as register_source,
        register_task as register_task,
        register_variant as register_variant,
        task as task,
    )
    from medr2.reporting.plots import Plot as Plot, PlotContext as PlotContext
    from medr2.run.runner import RunSummary
    from medr2.scoring.metrics import Ctx

    MetricContext = Ctx  # the metric group's context, under its public name
    from medr2.tasks.spec import Draft as Draft, TaskContext as TaskContext, TaskSpec as TaskSpec
    from medr2.variant_id import VariantId as VariantId, VariantRole as VariantRole

PathLike = Path | str

# name -> "module:attribute", imported on first access (module __getattr__)
_LAZY: dict[str, str] = {
    # records
    "Case": "medr2.records:Case",
    "Item": "medr2.records:Item",
    "Prediction": "medr2.records:Prediction",
    "Score": "medr2.records:Score",
    "Bench": "medr2.bench.format:Bench",
    # the model contract (docs/models.md)
    "Adapter": "medr2.models.base:Adapter",
    "Request": "medr2.models.base:Request",
    "Response": "medr2.models.base:Response",
    "Message": "medr2.models.base:Message",
    "Part": "medr2.models.base:Part",
    "GenSettings": "medr2.models.base:GenSettings",
    "BoxConvention": "medr2.models.base:BoxConvention",
    "ModelConfig": "medr2.models.config:ModelConfig",
    "CallableAdapter": "medr2.models.callable:CallableAdapter",
    # errors (exit codes 2 and 1)
    "Medr2Error": "medr2.errors:Medr2Error",
    "BadInput": "medr2.errors:BadInput",
    "WorkFailed": "medr2.errors:WorkFailed",
    "Skip": "medr2.errors:Skip",
    "VariantId": "medr2.variant_id:VariantId",
    # extension decorators (docs/extending.md): medr2.registry's, each importing its extension point on use
    **{name: f"medr2.registry:{name}" for name in (
        "register_task", "task", "register_variant", "register_source", "register_importer", "register_exporter",
        "register_adapter", "register_metric", "register_plot", "register_extractor", "register_format",
        "register_family", "register_preset", "register_resize", "register_baseline", "register_background",
        "register_degradation")},
    "Registry": "medr2.registry:Registry",
    "load_plugins": "medr2.registry:load_plugins",
    # the base types a plugin builds on (docs/extending.md)
    "Perturbation": "medr2.perturb.registry:Perturbation",
    "derive_item": "medr2.perturb.registry:derive_item",
    "answer_changed_meta": "medr2.perturb.registry:answer_changed_meta",
    "VariantRole": "medr2.variant_id:VariantRole",
    "Draft": "medr2.tasks.spec:Draft",
    "TaskContext": "medr2.tasks.spec:TaskContext",
    "TaskSpec": "medr2.tasks.spec:TaskSpec",
    "MetricContext": "medr2.scoring.metrics:Ctx",
    "Plot": "medr2.reporting.plots:Plot",
    "PlotContext": "medr2.reporting.plots:PlotContext",
}

VERBS = ("build", "info", "materialise", "load_bench", "evaluate", "merge", "score", "report", "export", "finetune",
         "import_dataset", "convert", "add_variants", "variants_sheet", "contact_sheet", "tiny_vlm", "vllm_export",
         "demo", "view", "review")

__all__ = [*VERBS, *_LAZY]


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, _, attr = target.partition(":")
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


def _paths(values: PathLike | Sequence[PathLike]) -> list[Path]:
    return [Path(values)] if isinstance(values, str | Path) else [Path(v) for v in values]


def _strs(values: str | Sequence[str] | None) -> list[str]:
    if values is None:
        return []
    return [values] if isinstance(values, str) else list(values)


# ---------------------------------------------------------------------------------------------------------
# build and look


@writes("out")
def build(source: str | Sequence[str], out: PathLike, *, quota: Sequence[str] = (), seed: int = 0,
          cases: int | None = None, variants: str | Sequence[str] | None = None, workers: int | None = None,
          name: str | None = None, progress: Any = None, executor: str = "local",
          ray_address: str | None = None, renders: str = "deferred", split_unit: str = "patient") -> BuildResult:
    """``medr2 build``: build a bench folder ``out`` from one source (``NAME`` or ``NAME:PATH``) or several
    (with ``quota`` ``LABEL=N`` entries); ``variants``: codes (``"T1,V2"``, a list, or ``"all"``);
    ``executor``: ``local`` processes or ``ray`` tasks (on ``ray_address``), the same bench either way.
    ``progress``: a ``medr2.progress`` tracker (e.g. ``medr2.progress.for_console("medr2 build")``);
    ``renders``: ``deferred`` (V2/V3/V8–V12 images made on first use, ``renders.parquet``) or ``stored``;
    ``split_unit``: ``patient`` (default) or ``case`` (:mod:`medr2.tasks.splits`)."""
    from medr2.builder.pipeline import build_bench
    from medr2.models.options import split_list
    from medr2.sources.multi import source_for

    return build_bench(source_for(_strs(source), list(quota)), out, seed=seed, n_cases=cases,
                       variants=split_list(variants), workers=workers, name=name, tracker=progress,
                       executor=executor, ray_address=ray_address, renders=renders, split_unit=split_unit)


@writes("bench", field="BENCH")
def materialise(bench: PathLike) -> int:
    """``medr2 materialise``: render and store every deferred image of the bench (``medr2 build --renders
    deferred``), each checked against its pinned sha256; returns how many were rendered."""
    from medr2.bench.format import read_manifest, verify_checksums
    from medr2.renders import materialise as render_all

    verify_checksums(bench, read_manifest(bench))
    return render_all(Path(bench))


def info(bench: PathLike, *, check: bool = False, quality: bool = False) -> dict[str, Any]:
    """``medr2 info --json``: counts per stage / task / variant / split, chains, skipped tasks, licences.
    ``check``: first make the bench's one validation on every record (``BenchTable.validate(every_item=True)``:
    images hashed, the tables by columns, every item built; BadInput naming file, record and field on the first
    bad one); the result then has ``checked``.
    ``quality`` (``medr2 info --quality --json``): only the per-task quality summary instead (clean items
    generated, cases skipped and why, the answerability contract applied), after the check when ``check``.
    Where the bench has clinician reviews (``medr2 review``), ``reviews``: reviewed share, outcomes, acceptance
    rate and agreement per task (``medr2.scoring.reviews.review_summary``)."""
    from medr2.bench.info import bench_info
    from medr2.scoring.reviews import review_summary

    checked: dict[str, Any] = {}
    if check:
        from medr2.bench.table import BenchTable

        table = BenchTable.open(bench, every_item=True)
        checked = {"checked": {"cases": table.n_cases, "items": table.n_items}}
        table.close()
    out = {**bench_info(bench), **checked}
    if quality:
        return dict(out["quality"])
    reviews = review_summary(bench)
    if reviews is not None:
        out["reviews"] = reviews
    return out


def load_bench(bench: PathLike, *, validate: bool = True, image_hashes: bool = True) -> Bench:
    """Load the bench folder ``bench`` (cases, items, manifest), checked unless ``validate=False``."""
    from medr2.bench.format import load_bench as _load

    return _load(bench, validate, image_hashes=image_hashes)


@writes("bench", field="BENCH")
def add_variants(bench: PathLike, variants: str | Sequence[str], *, seed: int | None = None,
                 workers: int | None = None) -> tuple[dict[str, Any], dict[str, int], dict[str, dict[str, int]]]:
    """``medr2 perturb``: add variants to a built bench. Returns (manifest, new items per code, skips per code)."""
    from medr2.perturb.add import add_variants as _add

    return _add(bench, variants, seed, workers)


@writes_file("out")
def variants_sheet(bench: PathLike, out: PathLike, *, case: str | None = None,
                   pairs: int = 0) -> tuple[Item, list[Item]]:
    """``medr2 variants-sheet``: one question across its visual variants as a PNG; returns (parent, variants).
    ``pairs`` > 0: the ``pairs`` most alike look-alike pairs (V12) instead, each clean image beside its look-alike;
    returns (the first pair's parent, the pairs' variants)."""
    from medr2.perturb.sheet import contact_sheet as _sheet, pairs_sheet

    if pairs > 0:
        got = pairs_sheet(load_bench(bench), Path(out), pairs)
        return got[0][0], [kid for _, kid in got]
    return _sheet(load_bench(bench), Path(out), case)


@writes_file("out")
def contact_sheet(bench: PathLike, out: PathLike, *, n: int = 24, case: str | None = None) -> Path:
    """``medr2 contact-sheet``: ``n`` cases (or one ``case`` across its variants) with their boxes, as a PNG."""
    from medr2.bench.contact import contact_sheet as _sheet

    return _sheet(bench, out, n=n, case_id=case)


# ---------------------------------------------------------------------------------------------------------
# models


@writes("out")
def tiny_vlm(out: PathLike, *, seed: int = 0, image_size: int = 32, family: str | None = None) -> Path:
    """``medr2 tiny-vlm``: build the tiny offline VLM (or a tiny checkpoint of ``family``) into ``out``."""
    if family is not None:
        from medr2.models.families import build_family

        return build_family(family, out, seed=seed)
    from medr2.models.tiny import build_tiny_vlm

    return build_tiny_vlm(out, seed=seed, image_size=image_size)


@writes("out")
def vllm_export(src: PathLike, out: PathLike) -> Path:
    """``medr2 vllm-export``: a copy of a LLaVA / LLaVA-OneVision / Gemma 3 checkpoint, weights renamed for vLLM."""
    from medr2.models.vllm_export import export_for_vllm

    return export_for_vllm(src, out)


def _model_factory(model: Any, name: str | None) -> tuple[str, AdapterLoader | None]:
    """(spec recorded in the run, loader) for a spec string, a ModelConfig, an Adapter object or a plain function."""
    from medr2.models.config import ModelConfig

    if isinstance(model, str | ModelConfig):
        return model if isinstance(model, str) else model.spec, None
    from medr2.models.base import Adapter
    from medr2.models.callable import CallableAdapter

    adapter: Adapter = model if isinstance(model, Adapter) else CallableAdapter(model, name=name)
    return adapter.key, lambda _config: adapter


def _model_config(model: Any, spec: str, **options: Any) -> ModelConfig:
    """The one model-settings record of :func:`evaluate`: ``model`` itself where it is a ``ModelConfig`` (the
    model keywords then left at their defaults), else the record of the keywords (``ModelConfig.from_cli``)."""
    from dataclasses import fields

    from medr2.errors import BadInput
    from medr2.models.config import ModelConfig

    built = ModelConfig.from_cli(spec, **options)
    if not isinstance(model, ModelConfig):
        return built
    plain = ModelConfig(spec)
    given = [f.name for f in fields(ModelConfig) if getattr(built, f.name) != getattr(plain, f.name)]
    if given:
        raise BadInput(f"model settings given twice (in the ModelConfig and as keywords: {', '.join(given)})",
                       field="model")
    return model


@writes("out", lock=False)  # the run folder is created and locked by its store, after --out is checked
def evaluate(bench: PathLike, model: str | ModelConfig | Adapter | Callable[[Request], str | Response],
             out: PathLike, *, mode: str | Sequence[str] | None = None, variants: str | Sequence[str] | None = None,
             split: str | None = DEFAULT_SPLIT, limit: int | None = None, concurrency: int = 8,
             shard: str | tuple[int, int] | None = None, task: str | Sequence[str] | None = None,
             stage: str | Sequence[int] | None = None, base_url: str | Sequence[str] | None = None,
             api_key_env: str | None = None, preset: str | None = None, max_new_tokens: int | None = None,
             batch_size: int = 8, timeout: float = 120.0, retries: int = 5, backoff: float | None = None,
             seed: int = 0, retry_errors: bool = False,
             model_option: Sequence[str] | Mapping[str, Any] | None = None, progress: Any = None,
             name: str | None = None, command: Sequence[str] | None = None,
             loaded: Bench | None = None, executor: str = "local", ray_address: str | None = None,
             ray_batch_size: int | None = None, ray_engines: int | None = None,
             ray_engine_gpus: float | None = None, ray_engine_cpus: float | None = None, order: str | None = None,
             serve: str | None = None, serve_health: str | Sequence[str] | None = None,
             serve_timeout: float | None = None, confidence: str = "none", abstain_option: bool = False,
             allow_empty: bool = False, structured_answers: bool = False,
             stratify: str | Sequence[str] | None = None, reviewed: str | None = None) -> RunSummary:
    """``medr2 eval``: run ``model`` over the bench into the run folder ``out`` (resumable: every answer is
    stored as it arrives). ``model``: a spec string, a :class:`~medr2.models.config.ModelConfig` (the spec and
    every model setting in one record; the model keywords below are then left out), an Adapter, or a function
    ``fn(request) -> str | Response`` (``name``: its model key, default its ``module.qualname``). The model
    keywords (``base_url``, ``api_key_env``, ``preset``, ``max_new_tokens``, ``batch_size``, ``timeout``,
    ``retries``, ``backoff``, ``seed``, ``concurrency``, ``model_option``) make that record
    (``ModelConfig.from_cli``), which reaches the adapter unchanged. ``split``: ``train``, ``val``, ``test`` (the
    default: the held-out split) or ``all``; ``mode``/``variants``/``task``: names or comma
    lists; ``stage``: stage numbers (or a comma list of them); a value no item of the bench has is refused
    (:class:`~medr2.errors.BadInput`, listing the valid ones), and so is an empty selection unless ``allow_empty``;
    ``model_option``: ``KEY=VALUE`` strings or a mapping; ``command``: recorded in the run manifest
    (default ``sys.argv``); ``loaded``: the bench already loaded (many evals of one bench); ``progress``: an
    object with the methods of :class:`medr2.run.runner.Progress` (e.g. ``medr2.progress.RichProgress``);
    ``executor``: where requests are sent from (``local``, ``ray``: :mod:`medr2.run.executors`); ``ray_address``,
    ``ray_batch_size``: the ray executor's cluster and rows per HTTP-stage (or engine) batch; ``ray_engines``,
    ``ray_engine_gpus``, ``ray_engine_cpus``: for a ``vllm:`` model, the vLLM engines Ray starts (replicas, and
    GPUs and CPUs per engine; 0 GPUs: vLLM's CPU build; :mod:`medr2.run.ray_vllm`); ``order``: the dispatch order
    (``bench``, ``case``: :mod:`medr2.run.order`; None: its default; the stored answers do not depend on it);
    ``serve``: a server command started for the run (``{port}`` becomes a free port), healthy (``serve_health``:
    URL(s) answering 2xx, default each base URL's ``/models``; within ``serve_timeout`` s, default 900) before the
    first request, stopped
    after it (:mod:`medr2.run.serve`); ``confidence``: where each answer's confidence comes from (``none``,
    ``logprobs``: an openai: server's token log-probabilities, ``verbal``: the model is asked to state it;
    docs/metrics.md, "Calibration"); ``abstain_option``: single-choice items also offer "Cannot be determined from
    the image" (choosing it is scored ``abstained``; recorded in the manifest); ``structured_answers``: closed
    answers constrained where the model can (an openai: server's structured output as its preset declares,
    ``medr2.models.structured``; an hf: model's log-likelihood choice; recorded in the manifest, marked in the
    report); ``stratify``: item columns (``task``, ``variant``, ...; names or a comma list) over which ``limit``
    samples its items evenly, seeded by ``seed`` (a variant item with its clean item), instead of whole cases in
    bench order; ``reviewed``: ``accepted`` asks only the items the bench's clinician review accepted
    (docs/review.md; the review rows read are recorded)."""
    from medr2.bench.select import parse_shard, parse_stages
    from medr2.errors import BadInput
    from medr2.models.options import split_list
    from medr2.run.order import DEFAULT_ORDER
    from medr2.run.runner import EvalConfig, run_eval

    executor_options = {k: v for k, v in (("address", ray_address), ("batch_size", ray_batch_size),
                                          ("engines", ray_engines), ("engine_gpus", ray_engine_gpus),
                                          ("engine_cpus", ray_engine_cpus)) if v is not None}
    if executor_options and executor != "ray":
        raise BadInput("--ray-address, --ray-batch-size and --ray-engine* go with --executor ray",
                       field="--executor")
    spec, loader = _model_factory(model, name)
    model_cfg = _model_config(model, spec, base_url=base_url, model_option=model_option, backoff=backoff,
                              preset=preset, api_key_env=api_key_env, concurrency=concurrency, timeout_s=timeout,
                              retries=retries, batch_size=batch_size, seed=seed, max_new_tokens=max_new_tokens)
    serve_spec = None
    if serve is not None:
        from medr2.run.serve import DEFAULT_STARTUP_S, plan_serve

        serve_spec, urls = plan_serve(serve, model_cfg.base_urls, health=serve_health,
                                      startup_s=DEFAULT_STARTUP_S if serve_timeout is None else serve_timeout)
        model_cfg = replace(model_cfg, base_urls=urls)  # what only the started server knows: its port
    elif serve_health or serve_timeout is not None:
        raise BadInput("--serve-health and --serve-timeout go with --serve", field="--serve")
    cfg = EvalConfig(bench=Path(bench), model=model_cfg, out=Path(out),
                     modes=split_list(mode) or ("independent",), variants=split_list(variants) or None, split=split,
                     limit=limit, stratify=split_list(stratify) or None,
                     shard=parse_shard(shard) if isinstance(shard, str) else shard,
                     tasks=split_list(task) or None, stages=parse_stages(stage),
                     retry_errors=retry_errors, command=tuple(sys.argv if command is None else command),
                     executor=executor, executor_options=executor_options, order=order or DEFAULT_ORDER,
                     serve=serve_spec, confidence=confidence, abstain_option=abstain_option,
                     allow_empty=allow_empty, structured_answers=structured_answers, reviewed=reviewed)
    return run_eval(cfg, progress=progress, adapter_factory=loader, bench=loaded)


@writes("out")
def merge(shards: Sequence[PathLike], out: PathLike, *, command: Sequence[str] | None = None) -> dict[str, Any]:
    """``medr2 merge``: combine shard runs of one bench and one model setting into the run ``out``; returns
    its manifest (``shards_missing``, ``shards_incomplete`` say what is not there)."""
    from medr2.run.merge import merge_runs

    return merge_runs(_paths(shards), out, command=list(sys.argv if command is None else command))


# ---------------------------------------------------------------------------------------------------------
# score and report


@writes("run", name=SCORE_LOCK, field="RUN", create=False)
def score(run: PathLike, *, judge: str | None = None, judge_base_url: str | Sequence[str] = (),
          judge_api_key_env: str | None = None, judge_claims: bool = False, seed: int = 0, resamples: int = 1000,
          progress: Any = None, workers: int = 1, slice: str | Sequence[str] | None = None,
          bins: Sequence[str] | Mapping[str, Sequence[float]] | None = None, harm: PathLike | None = None,
          slice_min_cases: int = 20, conformal_coverage: float = 0.9,
          mixed_splits: bool = False, judge_sample: int = 200) -> dict[str, Any]:
    """``medr2 score``: write ``RUN/scores.parquet`` and ``RUN/metrics.json``; returns the metrics.
    ``judge_claims``: also ask the judge about rationale claims the rules leave unverifiable (needs ``judge``).
    ``workers``: processes scoring the answers (the same outputs for any number; one with a judge).
    ``slice``: slicings (``"sex"``, ``["sex,modality", "age"]``: fields of :data:`medr2.scoring.slices.SLICE_FIELDS`),
    ``bins``: bin edges (``["age=18,50"]``), ``slice_min_cases``: the smallest ranked slice, ``harm``: a risk-tier
    override file (recorded in ``metrics.json`` ``run.harm``). With ``slice`` or ``harm``, ``RUN/harm.json`` (and
    with ``slice`` ``RUN/slices.json``) are written too, and the returned dict carries them as ``"harm"`` and
    ``"slices"`` (``metrics.json`` does not). ``conformal_coverage``: the target coverage of the conformal
    prediction sets in ``calibration.json``. A run whose answers span several splits is refused unless
    ``mixed_splits``; an empty run is refused. ``judge``: a model name served OpenAI-compatibly at
    ``judge_base_url`` (key from the variable ``judge_api_key_env`` names), or an adapter spec; it reads the answers
    the reader leaves unparsed (counted apart, ``rates.judged``), and ``metrics["judge"]`` gives its agreement
    with the reader (Cohen's κ, interval, n) on ``judge_sample`` parsed answers drawn with ``seed``."""
    from medr2.bench.slicefields import parse_bins
    from medr2.errors import BadInput
    from medr2.models.config import ModelConfig
    from medr2.scoring.harm import load_harm
    from medr2.scoring.judge import judge_spec
    from medr2.scoring.scorer import score_run
    from medr2.scoring.slices import analyse_run, parse_slicings

    slicings = parse_slicings(slice)  # bad options and a bad harm file are refused before scoring
    edges = parse_bins(bins)
    if slice_min_cases < 1:
        raise BadInput("slice_min_cases must be at least 1", field="--slice-min-cases")
    spec = load_harm(harm) if harm is not None else None
    judge_cfg = ModelConfig.from_cli(judge_spec(judge), base_url=judge_base_url,
                                     api_key_env=judge_api_key_env) if judge else None
    metrics = score_run(run, judge=judge_cfg, seed=seed, n_resamples=resamples, progress=progress,
                        judge_claims=judge_claims, workers=workers, harm=None if spec is None else spec.record(),
                        conformal_coverage=conformal_coverage, mixed_splits=mixed_splits, judge_sample=judge_sample)
    if slicings or spec is not None:
        if progress is not None:
            progress.step("slices and harm")
        got = analyse_run(run, slicings, harm=spec or load_harm(None), bins=edges, seed=seed, n_resamples=resamples,
                          min_cases=slice_min_cases)
        metrics = {**metrics, "harm": got["harm"], "slices": got["slices"]}
    return metrics


@writes("out")
def report(runs: PathLike | Sequence[PathLike], out: PathLike, *, bench: PathLike | None = None,
           max_items: int = 1000, title: str = "medr2 report", progress: Any = None) -> Path:
    """``medr2 report``: leaderboard, plots and ``index.html`` for scored runs into ``out``; returns the index."""
    from medr2.reporting.write import write_report

    return write_report(_paths(runs), out, bench=bench, max_items=max_items, title=title, progress=progress)


def view(runs: PathLike | Sequence[PathLike], *, bench: PathLike | None = None, host: str = "127.0.0.1",
         port: int = 8765, block: bool = True, on_ready: Callable[[str], None] | None = None) -> Any:
    """``medr2 view``: a local web app over scored runs (leaderboard, the items behind each number, one item's
    answers side by side), on ``host:port`` (loopback unless told; port 0: a free one). ``on_ready(url)`` is
    called once it listens. ``block``: serve until interrupted (Ctrl-C), then stop; else return at once. Returns
    the :class:`medr2.viewer.server.ViewServer` (``.url``, ``.stop()``)."""
    from medr2.viewer.server import open_view

    return open_view(_paths(runs), bench=bench, host=host, port=port, block=block, on_ready=on_ready)


def review(bench: PathLike, *, host: str = "127.0.0.1", port: int = 8765, block: bool = True,
           on_ready: Callable[[str], None] | None = None) -> Any:
    """``medr2 review``: the viewer's app in review mode over the bench (docs/review.md): reviewers accept, fix or
    reject items, each review saved to ``BENCH/reviews.sqlite`` as it is made; agreement per task and the
    adjudication queue. ``host``/``port``/``block``/``on_ready`` as :func:`view`. Returns the
    :class:`medr2.viewer.server.ViewServer`."""
    from medr2.viewer.review import open_review

    return open_review(bench, host=host, port=port, block=block, on_ready=on_ready)


# ---------------------------------------------------------------------------------------------------------
# data in and out, training


@writes("out")
def export(bench: PathLike, format: str, out: PathLike, *, strategy: str = "flat", with_variants: bool = False,
           seed: int = 0, replay: float = 0.25, reviewed: str | None = None) -> dict[str, Any]:
    """``medr2 export``: the bench's train split as SFT or DPO data in ``format``; returns the export manifest.
    ``reviewed``: ``accepted`` exports only the items the bench's clinician review accepted (docs/review.md)."""
    from medr2.train.dataset import export_dataset

    opts: dict[str, Any] = {"replay": replay} if strategy == "curriculum" else {}
    return export_dataset(bench, format, out, strategy=strategy, with_variants=with_variants, seed=seed,
                          reviewed=reviewed, **opts)


@writes("out")
def finetune(base: PathLike, bench: PathLike, out: PathLike, *, strategy: str = "flat", with_variants: bool = False,
             epochs: float = 3.0, lr: float = 2e-4, lora_r: int = 16, lora_alpha: int = 32,
             target_modules: Sequence[str] = (), batch_size: int = 8, grad_accum: int = 1, full_steps: int = 0,
             full_lr: float = 1e-3, max_length: int = 2048, seed: int = 0, device: str = "auto",
             preset: str | None = None, answer_style: str = "letter", pretrain_steps: int = 0,
             vision_lr_scale: float = 1.0, freeze: Sequence[str] = (),
             callbacks: Sequence[Any] = ()) -> dict[str, Any]:
    """``medr2 finetune``: TRL + PEFT LoRA on the bench's train split; returns (and writes) the report.
    ``preset``: the box convention of the target boxes (as ``medr2 eval --preset``); ``answer_style``: how the
    targets write a multiple-choice answer (``letter``: "B. X-ray", ``option-text``: "X-ray"); ``pretrain_steps``:
    full fine-tuning steps on one caption per train image (the same prompt for every image) before anything else;
    ``vision_lr_scale``: the image path's learning rate relative to ``full_lr`` in those full-tuning stages;
    ``freeze``: modules (by name, e.g. ``vision_tower``) that no stage trains."""
    from medr2.train.finetune import FinetuneConfig, finetune as _finetune

    cfg = FinetuneConfig(strategy=strategy, with_variants=with_variants, epochs=epochs, lr=lr, lora_r=lora_r,
                         lora_alpha=lora_alpha, target_modules=tuple(target_modules), batch_size=batch_size,
                         grad_accum=grad_accum, full_steps=full_steps, full_lr=full_lr, max_length=max_length,
                         seed=seed, device=device, preset=preset, answer_style=answer_style,
                         pretrain_steps=pretrain_steps, vision_lr_scale=vision_lr_scale, freeze=tuple(freeze))
    return _finetune(base, bench, out, cfg, callbacks=callbacks)


@writes("out")
def import_dataset(format: str, path: PathLike, out: PathLike, *, license: str | None = None,
                   access: str | None = None, source_name: str | None = None,
                   option: Sequence[str] | Mapping[str, str] | None = None) -> ImportResult:
    """``medr2 import``: import a medical VQA set as the bench folder ``out`` (written); returns what was
    imported, with the written manifest in ``.manifest``."""
    from medr2.interop.common import write_import
    from medr2.interop.importers import run_import
    from medr2.models.options import parse_format_options

    res = run_import(format, Path(path), Path(out), license=license, access=access, source=source_name,
                     options=parse_format_options(option))
    res.manifest = write_import(res, Path(out), data=Path(path))
    return res


@writes("out")
def convert(bench: PathLike, to: str, out: PathLike) -> dict[str, Any]:
    """``medr2 convert``: export the bench folder to another harness's format (``to``); returns the summary. The
    Hugging Face dataset card shows the bench's clinician review where it has one (docs/review.md)."""
    from medr2.interop.exporters import run_export
    from medr2.scoring.reviews import review_summary

    return run_export(to, load_bench(bench), Path(out), reviews=review_summary(bench))


@writes("out")
def demo(out: PathLike = "medr2-demo", *, cases: int | None = None, seed: int = 0, quick: bool = False,
         workers: int | None = None, threads: int = 1, strategies: str | Sequence[str] = (),
         lanes: int | None = None, choice: str | None = None, display: Any = None) -> DemoResult:
    """``medr2 demo``: the whole loop on the bundled sample, offline, into ``out`` (rerun to resume).
    ``strategies``: more fine-tuning strategies (names or a comma list), each compared with ``flat``.
    ``lanes``: 1 or 2 processes running the fine-tunings and evaluations side by side (default: 2 with
    2+ cores); the same things are computed either way. ``choice``: how the tiny VLMs answer closed
    questions, ``loglik`` (default) or ``generate``."""
    from medr2.demokit.run import demo_config, run_demo
    from medr2.models.options import split_list

    cfg = demo_config(quick=quick, cases=cases, seed=seed, workers=workers, threads=threads,
                      strategies=split_list(strategies), lanes=lanes, choice=choice)
    return run_demo(out, cfg, display=display)
