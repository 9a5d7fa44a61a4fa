"""Load what a report needs from a run folder: manifest, metrics, scores, raw responses, bench items.

A run folder (docs/architecture.md) holds ``manifest.json`` (written by ``medr2 eval``), ``store.sqlite`` (raw
responses), and after ``medr2 score`` ``scores.parquet`` and ``metrics.json``. The bench is found
through the run manifest, or given explicitly.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medr2.atomic import settle
from medr2.errors import BadInput

SCORE_COLUMNS = ("item_id", "model_key", "mode", "task", "stage", "variant", "verdict", "parsed")
# read when present besides the required ones (the browser's IoU, the confusion matrix's form); the rest of
# ``scores.parquet`` (text metrics, reasons, ...) is never read into the report's rows
OPTIONAL_SCORE_COLUMNS = ("iou", "form")


@dataclass(frozen=True)
class RawResponse:
    raw: str | None
    status: str
    error: str | None
    request: list[Any] | None = None  # the rendered messages the model received (``messages_json``), if stored
    reasoning: str | None = None  # the server's separate reasoning text, if it returned one


@dataclass
class RunData:
    """One scored run, ready to report."""

    run_dir: Path
    label: str
    model_key: str
    manifest: dict[str, Any]
    metrics: dict[str, Any]
    scores: list[dict[str, Any]]
    # by (item_id, mode); ``load_run`` gives a :class:`StoredResponses` that reads the store per row asked
    responses: Mapping[tuple[str, str], RawResponse] = field(default_factory=dict)
    bench_root: Path | None = None
    # per (item_id, mode): the rationale's claims as stored in ``claims.parquet`` (empty for a run without one)
    claims: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def modes(self) -> list[str]:
        return list(self.metrics.get("modes", {}))


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        hint = " (run `medr2 score` first)" if path.name == "metrics.json" else ""
        raise BadInput(f"missing file{hint}", file=str(path))
    try:
        data = json.loads(path.read_text("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise BadInput(f"not valid JSON: {e}", file=str(path)) from e
    if not isinstance(data, dict):
        raise BadInput("expected a JSON object", file=str(path))
    return data


def _read_scores(path: Path) -> list[dict[str, Any]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not path.is_file():
        raise BadInput("missing file (run `medr2 score` first)", file=str(path))
    try:
        names = pq.read_schema(str(path)).names
        missing = [c for c in SCORE_COLUMNS if c not in names]
        if missing:
            raise BadInput("missing column(s)", file=str(path), field=",".join(missing))
        table = pq.read_table(str(path), columns=[c for c in (*SCORE_COLUMNS, *OPTIONAL_SCORE_COLUMNS) if c in names])
    except (OSError, pa.ArrowException) as e:
        raise BadInput(f"cannot read parquet: {e}", file=str(path)) from e
    return table.to_pylist()


class StoredResponses(Mapping[tuple[str, str], RawResponse]):
    """The raw responses of a run by (item_id, mode), read from its store when asked (the report shows a sample
    of items: it never holds every response and rendered request of a large run)."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir

    def __getitem__(self, key: tuple[str, str]) -> RawResponse:
        from medr2.run.store import Store

        with Store.open(self.run_dir) as store:
            sp = store.get_item(*key)
        if sp is None:
            raise KeyError(key)
        p = sp.prediction
        request = sp.request if isinstance(sp.request, list) else None
        return RawResponse(p.raw, p.status, p.error, request, p.reasoning)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        from medr2.run.store import Store

        with Store.open(self.run_dir) as store:
            for batch in store.counted_rows():
                for item_id, mode, *_ in batch:
                    yield item_id, mode

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _read_responses(run_dir: Path) -> Mapping[tuple[str, str], RawResponse]:
    from medr2.run.store import Store

    Store.open(run_dir).close()  # a run folder without a readable store is refused now, not when a row is shown
    return StoredResponses(run_dir)


def read_claims(run_dir: Path, metrics: dict[str, Any]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """The per-claim verdicts of a scored run (``claims.parquet``, named with its sha256 in ``metrics.json``
    ``claims``), by (item_id, mode); a run scored without rationales (no ``claims`` entry) has none. A file that
    is missing or whose bytes differ from the recorded checksum is refused."""
    import hashlib

    import pyarrow as pa
    import pyarrow.parquet as pq

    info = metrics.get("claims")
    if not isinstance(info, dict):
        return {}
    path = run_dir / str(info.get("file") or "claims.parquet")
    if not path.is_file():
        raise BadInput("missing file named by metrics.json (claims); rerun `medr2 score`", file=str(path))
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != info.get("sha256"):
        raise BadInput("the file does not match the checksum metrics.json records (claims.sha256); rerun "
                       "`medr2 score`", file=str(path), field="claims.sha256")
    try:
        table = pq.read_table(pa.BufferReader(data))
    except (OSError, pa.ArrowException) as e:
        raise BadInput(f"cannot read parquet: {e}", file=str(path)) from e
    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in table.to_pylist():
        out.setdefault((str(row["item_id"]), str(row["mode"])), []).append(row)
    return out


def bench_path_of(manifest: dict[str, Any], run_dir: Path) -> Path:
    """The bench a run was made on, from its manifest (``bench.path``, relative paths taken from the run)."""
    bench = manifest.get("bench")
    path = bench.get("path") if isinstance(bench, dict) else bench
    if not isinstance(path, str) or not path:
        raise BadInput("the run manifest names no bench path; pass the bench explicitly (--bench)",
                       file=str(run_dir / "manifest.json"), field="bench.path")
    p = Path(path)
    return p if p.is_absolute() else (run_dir / p).resolve()


def load_run(run_dir: Path | str, *, bench: Path | str | None = None, with_bench: bool = True) -> RunData:
    """Read one run folder. ``bench`` overrides the bench path recorded in the run manifest."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise BadInput("run folder does not exist", file=str(run_dir))
    settle(run_dir)  # complete a publish a killed `medr2 score` left half done: never new scores, old metrics
    manifest = _read_json(run_dir / "manifest.json")
    metrics = _read_json(run_dir / "metrics.json")
    if not isinstance(metrics.get("modes"), dict):
        raise BadInput("metrics.json has no 'modes' object", file=str(run_dir / "metrics.json"), field="modes")
    scores = _read_scores(run_dir / "scores.parquet")
    key = metrics.get("model_key") or sorted({str(s["model_key"]) for s in scores}) or run_dir.name
    model_key = ", ".join(key) if isinstance(key, list) else str(key)  # a merged run may hold several models
    bench_root: Path | None = None
    if with_bench:
        bench_root = Path(bench) if bench is not None else bench_path_of(manifest, run_dir)
    return RunData(run_dir=run_dir, label=run_dir.name, model_key=model_key, manifest=manifest,
                   metrics=metrics, scores=scores, responses=_read_responses(run_dir), bench_root=bench_root,
                   claims=read_claims(run_dir, metrics))


def unique_labels(runs: list[RunData]) -> None:
    """Make run labels unique (``run``, ``run#2``) when folders share a name."""
    seen: dict[str, int] = {}
    for r in runs:
        n = seen.get(r.label, 0) + 1
        seen[r.label] = n
        if n > 1:
            r.label = f"{r.label}#{n}"
