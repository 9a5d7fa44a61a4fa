"""``medr2 eval`` and ``medr2 merge`` (DESIGN §13)."""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer


def _split_list(values: list[str] | None) -> tuple[str, ...]:
    out: list[str] = []
    for v in values or []:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return tuple(out)


def parse_model_options(values: list[str] | None) -> dict[str, Any]:
    """``KEY=VALUE`` pairs for the adapter's ``extra`` (:func:`medr2.models.config.parse_model_options`)."""
    from medr2.models.config import parse_model_options as parse

    return parse(values)


class RichProgress:
    """A live bar: done/total, rate, ETA, retries, errors."""

    def __init__(self, label: str) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.console = Console(stderr=True)
        self._bar = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[rate]:>8} req/s"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
            TextColumn("retries {task.fields[retries]}  errors [red]{task.fields[errors]}"),
            console=self.console, refresh_per_second=4)
        self._label = label
        self._task: Any = None
        self._sent = 0
        self._t0 = 0.0
        self._retries = 0
        self._errors = 0

    def start(self, total: int) -> None:
        self._bar.start()
        self._t0 = time.perf_counter()
        self._task = self._bar.add_task(self._label, total=total, rate="-", retries=0, errors=0)

    def advance(self, n: int = 1, *, error: bool = False, retries: int = 0, skipped: bool = False) -> None:
        self._retries += retries
        self._errors += int(error)
        fields: dict[str, Any] = {"retries": self._retries, "errors": self._errors}
        if not skipped:
            self._sent += n
        elapsed = time.perf_counter() - self._t0
        if elapsed > 0:
            fields["rate"] = f"{self._sent / elapsed:.1f}"
        self._bar.update(self._task, advance=n, **fields)

    def stop(self) -> None:
        self._bar.stop()


def eval_command(
    bench: Annotated[Path, typer.Option("--bench", help="Bench folder.")],
    model: Annotated[str, typer.Option("--model", help="openai:MODEL, hf:PATH, vllm:PATH or baseline:NAME.")],
    out: Annotated[Path, typer.Option("--out", help="Run folder (created; rerun to resume).")],
    mode: Annotated[list[str] | None, typer.Option("--mode", help="independent, chain-own, chain-gold, "
                                                   "chain-misleading, blind, reasoning (repeatable or comma "
                                                   "list).")] = None,
    variants: Annotated[str | None, typer.Option("--variants", help="Comma list of variant ids/codes, or all.")] = None,
    split: Annotated[str | None, typer.Option("--split", help="Only items of this split.")] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="At most N items (whole cases).")] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="Requests in flight (openai).")] = 8,
    shard: Annotated[str | None, typer.Option("--shard", help="I/N: this process runs shard I of N (from 0).")] = None,
    base_url: Annotated[list[str] | None, typer.Option("--base-url", help="Endpoint base URL (repeatable).")] = None,
    api_key_env: Annotated[str | None, typer.Option("--api-key-env", help="Env variable holding the API key.")] = None,
    preset: Annotated[str | None, typer.Option("--preset", help="Model preset (box convention, prompts).")] = None,
    max_new_tokens: Annotated[int | None, typer.Option("--max-new-tokens", min=1, help="Token limit of each answer "
                              "(default: the preset's, 16384 for reasoning presets; else 256).")] = None,
    batch_size: Annotated[int, typer.Option("--batch-size", min=1, help="Batch size (hf/vllm/baselines).")] = 8,
    timeout: Annotated[float, typer.Option("--timeout", min=0.001, help="Per-request timeout, seconds.")] = 120.0,
    retries: Annotated[int, typer.Option("--retries", min=0, help="Retries after the first attempt.")] = 5,
    backoff: Annotated[float | None, typer.Option("--backoff", min=0.0, help="openai: first retry wait in seconds, "
                                                  "doubled per retry, with jitter (default 0.5).")] = None,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    retry_errors: Annotated[bool, typer.Option("--retry-errors", help="Resend requests stored as errors.")] = False,
    model_option: Annotated[list[str] | None, typer.Option(
        "--model-option", help="KEY=VALUE adapter setting (repeatable), e.g. dtype=float32 for hf:/vllm:, "
        "kv_cache_memory_bytes=268435456 for vllm:. See docs/local-models.md.")] = None,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="No live progress bar.")] = False,
) -> None:
    """Run a model over a bench; every answer is stored as it arrives (rerun the command to resume)."""
    from rich.console import Console

    from medr2.errors import WorkFailed
    from medr2.models.config import ModelConfig
    from medr2.run.runner import EvalConfig, Progress, parse_shard, run_eval

    modes = _split_list(mode) or ("independent",)
    model_cfg = ModelConfig.from_cli(model, base_url=base_url, model_option=model_option, backoff=backoff,
                                     preset=preset, api_key_env=api_key_env, concurrency=concurrency,
                                     timeout_s=timeout, retries=retries, batch_size=batch_size, seed=seed,
                                     max_new_tokens=max_new_tokens)
    cfg = EvalConfig(bench=bench, model=model_cfg, out=out, modes=modes, variants=_split_list([variants]) or None
                     if variants else None, split=split, limit=limit, shard=parse_shard(shard) if shard else None,
                     retry_errors=retry_errors, command=tuple(sys.argv))
    progress: Progress = Progress() if no_progress else RichProgress(model)  # type: ignore[assignment]
    previous = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, _sigterm_to_interrupt)
    try:
        summary = run_eval(cfg, progress=progress)
    finally:
        signal.signal(signal.SIGTERM, previous)
    console = Console(stderr=True)
    for name, c in summary.modes.items():
        console.print(f"{name}: {c.planned} items, {c.stored_before} already stored, {c.ok} ok, {c.error} errors"
                      + (f", [yellow]{c.truncated} cut off by the token limit[/]" if c.truncated else ""))
    if any(c.truncated for c in summary.modes.values()):
        from medr2.score.truncation import TRUNCATED_HINT

        console.print(f"[yellow]note[/]: {TRUNCATED_HINT}")
    console.print(f"retries: {summary.retries}")
    if summary.interrupted:
        console.print(f"[yellow]interrupted[/]: everything answered is stored in {out}; rerun the same command "
                      "to resume")
        raise typer.Exit(130)
    if summary.sent and all(c.ok == 0 for c in summary.modes.values()) and any(c.error for c in summary.modes.values()):
        raise WorkFailed("every request failed; see the errors stored in the run (e.g. the endpoint is down)")


def _sigterm_to_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def merge_command(
    shards: Annotated[list[Path], typer.Argument(help="Shard run folders.")],
    out: Annotated[Path, typer.Option("--out", help="Merged run folder (new).")],
) -> None:
    """Combine shard runs of one bench and one model setting into one run."""
    from rich.console import Console

    from medr2.run.merge import merge_runs

    manifest = merge_runs(shards, out, command=sys.argv)
    missing = manifest["shards_missing"]
    console = Console(stderr=True)
    console.print(
        f"merged {len(manifest['merged_from'])} shards into {out}: {manifest['counts']}"
        + (f" [yellow](missing shards: {', '.join(missing)})[/]" if missing else ""), highlight=False)
    for s in manifest.get("shards_incomplete", []):
        console.print(f"[bold yellow]warning:[/] shard {s['shard']} ({s['path']}) did not finish its eval "
                      f"(status {s['status']}): the merged run is incomplete; rerun that shard's eval to resume it, "
                      "then merge again", highlight=False, markup=True)


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)
    app.command("merge")(merge_command)
