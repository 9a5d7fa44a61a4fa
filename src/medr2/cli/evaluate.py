"""``medr2 eval``: run a model over a bench (docs/running.md)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from medr2.catalog import BASELINES, DEFAULT_SPLIT, MODES, ORDERS, PRESETS, SPLITS, TEXT_CODES, VISUAL_CODES, listing
from medr2.cli._signals import sigterm_as_interrupt
from medr2.run.order import DEFAULT_ORDER


def eval_command(
    bench: Annotated[Path, typer.Option("--bench", help="Bench folder.")],
    model: Annotated[str, typer.Option("--model", help="openai:MODEL, hf:PATH, vllm:PATH, baseline:NAME "
                                                  f"({listing(BASELINES)}) or human:NAME (a person answers in the "
                                                  "browser, docs/human.md).")],
    out: Annotated[Path, typer.Option("--out", help="Run folder (created; rerun to resume).")],
    mode: Annotated[list[str] | None, typer.Option("--mode", show_default="independent",
                                                   help=f"{listing(MODES)} (repeatable or comma list).")] = None,
    variants: Annotated[str | None, typer.Option("--variants", show_default="all",
                                                  help="Comma list of variant ids/codes "
                                                  f"({TEXT_CODES[0]}..{TEXT_CODES[-1]}, {VISUAL_CODES[0]}.."
                                                  f"{VISUAL_CODES[-1]}, clean), or all.")] = None,
    split: Annotated[str, typer.Option("--split", help=f"Only items of this split ({listing(SPLITS)}; 'all': every "
                                       "split, scored only with --mixed-splits).")] = DEFAULT_SPLIT,
    allow_empty: Annotated[bool, typer.Option("--allow-empty", metavar="", help="Run an empty selection instead "
                                              "of refusing it (exit 2).")] = False,
    limit: Annotated[int | None, typer.Option("--limit", min=1, show_default="no limit",
                                              help="At most N items of the selection (whole cases in bench order, "
                                              "at least one case): N requests per mode, each resent at most "
                                              "--retries times.")] = None,
    stratify: Annotated[str | None, typer.Option("--stratify", show_default="none: whole cases in bench order",
                                                 help="With --limit: sample the N items evenly over these item "
                                                 "columns (comma list of task, variant, stage, form), "
                                                 "seeded by --seed; a variant item comes with its clean item.")
                        ] = None,
    task: Annotated[str | None, typer.Option("--task", show_default="all", help="Only items of these tasks (comma "
                                             "list, e.g. s1.modality,s3.lesion_box).")] = None,
    stage: Annotated[str | None, typer.Option("--stage", show_default="all",
                                              help="Only items of these stages (comma list, e.g. 1,2).")] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="Requests in flight (openai).")] = 8,
    shard: Annotated[str | None, typer.Option("--shard", show_default="the whole bench",
                                              help="I/N: this process runs shard I of N (from 0).")] = None,
    base_url: Annotated[list[str] | None, typer.Option("--base-url", show_default="none; openai: needs one",
                                                         help="Endpoint base URL (repeatable).")] = None,
    api_key_env: Annotated[str | None, typer.Option("--api-key-env", show_default="no key",
                                                    help="Env variable holding the API key.")] = None,
    preset: Annotated[str | None, typer.Option("--preset", show_default="none",
                                                  help="Model preset (box convention, prompts): "
                                                  f"{listing(PRESETS)}.")] = None,
    max_new_tokens: Annotated[int | None, typer.Option("--max-new-tokens", min=1, help="Token limit of each answer "
                              "(default: the preset's, 16384 for reasoning presets; else 256).")] = None,
    batch_size: Annotated[int, typer.Option("--batch-size", min=1, help="Batch size (hf/vllm/baselines).")] = 8,
    timeout: Annotated[float, typer.Option("--timeout", min=0.001, help="Per-request timeout, seconds.")] = 120.0,
    retries: Annotated[int, typer.Option("--retries", min=0, help="Retries after the first attempt.")] = 5,
    backoff: Annotated[float | None, typer.Option("--backoff", min=0.0, help="openai: first retry wait in seconds, "
                                                  "doubled per retry, with jitter (default 0.5).")] = None,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    retry_errors: Annotated[bool, typer.Option("--retry-errors", metavar="",
                                               help="Resend requests stored as errors.")] = False,
    model_option: Annotated[list[str] | None, typer.Option(
        "--model-option", show_default="none", help="KEY=VALUE adapter setting (repeatable), e.g. dtype=float32 for "
        "hf:/vllm:, kv_cache_memory_bytes=268435456 for vllm:. See docs/local-models.md.")] = None,
    no_progress: Annotated[bool, typer.Option("--no-progress", metavar="", help="No live progress bar.")] = False,
    executor: Annotated[str, typer.Option("--executor", help="Where requests are sent from: local (this process) "
                                          "or ray (a Ray Dataset to the --base-url servers, or to vLLM engines "
                                          "Ray starts for a vllm: model; medr2[ray]).")] = "local",
    ray_address: Annotated[str | None, typer.Option("--ray-address", help="--executor ray: the Ray cluster "
                                                    "(default: RAY_ADDRESS or a running local one).")] = None,
    ray_batch_size: Annotated[int | None, typer.Option("--ray-batch-size", min=1, help="--executor ray: rows per "
                                                       "HTTP-stage or engine batch (default 4).")] = None,
    ray_engines: Annotated[int | None, typer.Option("--ray-engines", min=1, help="--executor ray with a vllm: "
                                                    "model: vLLM engine replicas Ray starts (default 1).")] = None,
    ray_engine_gpus: Annotated[float | None, typer.Option("--ray-engine-gpus", min=0, help="--executor ray, vllm: "
                                                          "GPUs per engine (default 0: vLLM's CPU build).")] = None,
    ray_engine_cpus: Annotated[float | None, typer.Option("--ray-engine-cpus", min=0.001, help="--executor ray, "
                                                          "vllm: CPUs reserved per engine (default 1).")] = None,
    serve: Annotated[str | None, typer.Option("--serve", show_default="none: the server is already running",
                                              help="Start this server command (sh -c; {port} becomes a "
                                              "free port and, without --base-url, the base URL "
                                              "http://127.0.0.1:PORT/v1), wait until healthy, evaluate, stop it; "
                                              "its output goes to RUN/serve.log.")] = None,
    serve_health: Annotated[list[str] | None, typer.Option("--serve-health", help="--serve: URL answering 2xx "
                                                           "once ready (repeatable; default BASE_URL/models).")
                            ] = None,
    serve_timeout: Annotated[float | None, typer.Option("--serve-timeout", min=0.001, help="--serve: seconds to "
                                                        "wait for health (default 900).")] = None,
    order: Annotated[str, typer.Option("--order", help=f"Dispatch order ({listing(ORDERS)}): case sends a case's "
                                       "items back to back (servers' prefix caches hit more), bench as the bench "
                                       "lists them; the stored answers are the same.")] = DEFAULT_ORDER,
    confidence: Annotated[str, typer.Option("--confidence", help="Where each answer's confidence comes from: none, "
                                            "logprobs (an openai: server's token log-probabilities, mapped onto "
                                            "the options), verbal (the model is asked to state it). Scored into "
                                            "RUN/calibration.json (docs/metrics.md).")] = "none",
    abstain_option: Annotated[bool, typer.Option("--abstain-option", help="Single-choice items also offer 'Cannot "
                                                 "be determined from the image'; choosing it is scored abstained "
                                                 "(recorded in the run manifest).")] = False,
    structured_answers: Annotated[bool, typer.Option(
        "--structured-answers", help="Constrain closed answers where the model can: an openai: server's structured "
        "output as its preset declares (JSON schema, vLLM/SGLang guided choice), an hf: model's log-likelihood "
        "choice. Off by default: constraining can change accuracy; recorded in the manifest and marked in the "
        "report.")] = False,
    reviewed: Annotated[str | None, typer.Option("--reviewed", show_default="every item",
                                                 help="accepted: only the items the bench's clinician review "
                                                 "accepted (medr2 review; docs/review.md).")] = None,
) -> None:
    """Run a model over a bench; every answer is stored as it arrives (rerun the command to resume)."""
    from medr2.api import evaluate
    from medr2.arrowmem import use_lean_pool
    from medr2.console import say
    from medr2.errors import WorkFailed
    from medr2.progress import RichProgress

    use_lean_pool()  # less of what a long columnar pass frees kept by the allocator (medr2.arrowmem)
    progress = None if no_progress else RichProgress(model)
    with sigterm_as_interrupt():
        summary = evaluate(bench, model, out, mode=mode, variants=variants, split=split, limit=limit, task=task,
                           stage=stage,
                           concurrency=concurrency, shard=shard, base_url=base_url, api_key_env=api_key_env,
                           preset=preset, max_new_tokens=max_new_tokens, batch_size=batch_size, timeout=timeout,
                           retries=retries, backoff=backoff, seed=seed, retry_errors=retry_errors,
                           model_option=model_option, progress=progress, command=sys.argv, executor=executor,
                           ray_address=ray_address, ray_batch_size=ray_batch_size, ray_engines=ray_engines,
                           ray_engine_gpus=ray_engine_gpus, ray_engine_cpus=ray_engine_cpus, serve=serve,
                           serve_health=serve_health, serve_timeout=serve_timeout, order=order,
                           confidence=confidence, abstain_option=abstain_option,
                           allow_empty=allow_empty, structured_answers=structured_answers,
                           stratify=stratify, reviewed=reviewed)
    for name, c in summary.modes.items():
        say(f"{name}: {c.planned} items, {c.stored_before} already stored, {c.ok} ok, {c.error} errors",
            *((", ", (f"{c.truncated} cut off by the token limit", "yellow")) if c.truncated else ()), err=True)
    if any(c.truncated for c in summary.modes.values()):
        from medr2.models.truncation import TRUNCATED_HINT

        say(("note", "yellow"), f": {TRUNCATED_HINT}", err=True)
    unfollowed = sum(c.unfollowed for c in summary.modes.values())
    if unfollowed:
        ok = sum(c.ok for c in summary.modes.values())
        say(("structured answers not followed", "yellow"),
            f": {unfollowed} of {ok} answers lack the shape their constraint gives (each stored with a note; read as "
            "free text). A server that ignores the constraint (transformers serve ignores response_format) answers "
            "unconstrained: see docs/serving.md, \"Structured answers\"", err=True)
    say(f"retries: {summary.retries}", err=True)
    if summary.last_error:
        say(("last error", "red"), f": {summary.last_error}", err=True)
    if summary.interrupted:
        say(("interrupted", "yellow"), f": everything answered is stored in {out}; rerun the same command "
            "to resume", err=True)
        raise typer.Exit(130)
    if summary.sent and all(c.ok == 0 for c in summary.modes.values()) and any(c.error for c in summary.modes.values()):
        raise WorkFailed(f"every request failed (last error: {summary.last_error}); every error is stored in the run")


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)
