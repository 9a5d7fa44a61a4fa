"""Load what a report needs from a run folder: manifest, metrics, scores, raw responses, bench items.

A run folder (docs/architecture.md) holds ``manifest.json`` (written by ``medr2 eval``), ``store.sqlite`` (raw
responses), and after ``medr2 score`` ``scores.parquet`` and ``metrics.json``. The bench is found
through the run manifest, or given explicitly.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medr2 import jsonsafe
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
    confidence: dict[str, Any] | None = None  # the stored per-answer probabilities (records.Confidence), if any


@dataclass
class RunData:
    """One scored run, ready to report."""

    run_dir: Path
    label: str
    model_key: str
    manifest: dict[str, Any]
    metrics: dict[str, Any]
    scores: Scores  # a :class:`ScoreTable` (``load_run``) or rows in memory
    # by (item_id, mode); ``load_run`` gives a :class:`StoredResponses` that reads the store per row asked
    responses: Mapping[tuple[str, str], RawResponse] = field(default_factory=dict)
    bench_root: Path | None = None
    # per (item_id, mode): the rationale's claims as stored in ``claims.parquet`` (empty for a run without one);
    # ``load_run`` gives a :class:`StoredClaims` that reads the file when asked
    claims: Claims = field(default_factory=dict)
    # ``harm`` / ``slices``: the run's harm.json and slices.json (``medr2 score --harm/--slice``), where present
    analysis: dict[str, Any] = field(default_factory=dict)

    @property
    def modes(self) -> list[str]:
        return list(self.metrics.get("modes", {}))


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        hint = " (run `medr2 score` first)" if path.name == "metrics.json" else ""
        raise BadInput(f"missing file{hint}", file=str(path))
    return jsonsafe.load_object(path)


SCORE_BATCH_ROWS = 8_192  # score rows per batch read (a batch is held as Python lists)


class ScoreTable:
    """A run's ``scores.parquet``, read by columns and in batches when asked (never all rows at once): the
    columns the report uses (:data:`SCORE_COLUMNS`, and :data:`OPTIONAL_SCORE_COLUMNS` where present)."""

    def __init__(self, path: Path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.path = path
        if not path.is_file():
            raise BadInput("missing file (run `medr2 score` first)", file=str(path))
        try:
            md = pq.read_metadata(str(path))
            names = md.schema.to_arrow_schema().names
        except (OSError, pa.ArrowException) as e:
            raise BadInput(f"cannot read parquet: {e}", file=str(path)) from e
        missing = [c for c in SCORE_COLUMNS if c not in names]
        if missing:
            raise BadInput("missing column(s)", file=str(path), field=",".join(missing))
        self.columns = tuple(c for c in (*SCORE_COLUMNS, *OPTIONAL_SCORE_COLUMNS) if c in names)
        self.num_rows = int(md.num_rows)

    def __len__(self) -> int:
        return self.num_rows

    def batches(self, columns: Sequence[str] | None = None) -> Iterator[dict[str, list[Any]]]:
        """``columns`` (None: every report column; one not in the file is left out) as Python lists, one dict per
        batch of :data:`SCORE_BATCH_ROWS` rows, in file order."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        cols = [c for c in (columns if columns is not None else self.columns) if c in self.columns]
        try:
            with pq.ParquetFile(str(self.path)) as f:
                for batch in f.iter_batches(SCORE_BATCH_ROWS, columns=cols, use_threads=False):
                    yield batch.to_pydict()
        except (OSError, pa.ArrowException) as e:
            raise BadInput(f"cannot read parquet: {e}", file=str(self.path)) from e

    def __iter__(self) -> Iterator[dict[str, Any]]:
        """Every row as a dict, one batch in memory at a time."""
        for cols in self.batches():
            names = list(cols)
            yield from (dict(zip(names, row, strict=True)) for row in zip(*cols.values(), strict=True))


Scores = ScoreTable | Sequence[dict[str, Any]]


def score_batches(scores: Scores, columns: Sequence[str]) -> Iterator[dict[str, list[Any]]]:
    """``columns`` of a run's score rows, one dict of lists per batch: read from the file for a
    :class:`ScoreTable`; for rows in memory, one batch (a column absent from every row is left out)."""
    if isinstance(scores, ScoreTable):
        yield from scores.batches(columns)
        return
    if scores:
        present = [c for c in columns if any(c in s for s in scores)]
        yield {c: [s.get(c) for s in scores] for c in present}


class StoredResponses(Mapping[tuple[str, str], RawResponse]):
    """The raw responses of a run by (item_id, mode), read from its store when asked (the report shows a sample
    of items: it never holds every response and rendered request of a large run)."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir

    def __getitem__(self, key: tuple[str, str]) -> RawResponse:
        from medr2.run.store import Store

        with Store.open(self.run_dir) as store:
            sp = store.get_item(*key)  # the answer budget (the default): the browser shows a part of it
        if sp is None:
            raise KeyError(key)
        p = sp.prediction
        request = sp.request if isinstance(sp.request, list) else None
        return RawResponse(p.raw, p.status, p.error, request, p.reasoning,
                           p.confidence.model_dump() if p.confidence is not None else None)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        from medr2.run.store import Store

        with Store.open(self.run_dir) as store:
            for batch in store.counted_rows():
                yield from zip(batch.item_id, batch.mode, strict=True)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _read_responses(run_dir: Path) -> Mapping[tuple[str, str], RawResponse]:
    from medr2.run.store import Store

    Store.open(run_dir).close()  # a run folder without a readable store is refused now, not when a row is shown
    return StoredResponses(run_dir)


Claims = Mapping[tuple[str, str], list[dict[str, Any]]]


class StoredClaims(Mapping[tuple[str, str], list[dict[str, Any]]]):
    """The per-claim verdicts of a run's ``claims.parquet`` by (item_id, mode), read from the file when asked
    (:meth:`select` reads the rows of many keys in one pass): the report shows the claims of the rows its browser
    shows and never holds every claim of a large run. The file was checked against ``metrics.json`` when opened
    (:func:`read_claims`); a file changed since is refused."""

    def __init__(self, path: Path, stamp: tuple[int, int, int]) -> None:
        self.path = path
        self.stamp = stamp  # (inode, size, mtime_ns) when its checksum was verified

    def _batches(self, columns: list[str] | None = None) -> Iterator[Any]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if _stamp(self.path) != self.stamp:
            raise BadInput("the file changed after the report checked it; rerun `medr2 report`", file=str(self.path))
        try:
            with pq.ParquetFile(str(self.path)) as f:
                yield from f.iter_batches(SCORE_BATCH_ROWS, columns=columns, use_threads=False)
        except (OSError, pa.ArrowException) as e:
            raise BadInput(f"cannot read parquet: {e}", file=str(self.path)) from e

    def select(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
        """The claims of ``keys`` (keys without claims left out), each key's in file order."""
        import pyarrow as pa
        import pyarrow.compute as pc

        wanted = set(keys)
        out: dict[tuple[str, str], list[dict[str, Any]]] = {}
        if not wanted:
            return out
        ids = pa.array(sorted({k[0] for k in wanted}), type=pa.string())
        for batch in self._batches():
            mask = pc.fill_null(pc.is_in(batch.column("item_id").cast(pa.string()), value_set=ids), False)
            for row in batch.filter(mask).to_pylist():
                key = (str(row["item_id"]), str(row["mode"]))
                if key in wanted:
                    out.setdefault(key, []).append(row)
        return out

    def __getitem__(self, key: tuple[str, str]) -> list[dict[str, Any]]:
        got = self.select([key]).get(key)
        if got is None:
            raise KeyError(key)
        return got

    def __iter__(self) -> Iterator[tuple[str, str]]:
        seen: set[tuple[str, str]] = set()
        for batch in self._batches(["item_id", "mode"]):
            for item_id, mode in zip(batch.column(0).to_pylist(), batch.column(1).to_pylist(), strict=True):
                key = (str(item_id), str(mode))
                if key not in seen:
                    seen.add(key)
                    yield key

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _stamp(path: Path) -> tuple[int, int, int]:
    st = path.stat()
    return st.st_ino, st.st_size, st.st_mtime_ns


def claims_of(claims: Claims, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """The claims of ``keys`` (one pass over the file for :class:`StoredClaims`)."""
    if isinstance(claims, StoredClaims):
        return claims.select(keys)
    return {k: claims[k] for k in keys if k in claims}


def read_claims(run_dir: Path, metrics: dict[str, Any]) -> Claims:
    """The per-claim verdicts of a scored run (``claims.parquet``, named with its sha256 in ``metrics.json``
    ``claims``), by (item_id, mode), read when asked (:class:`StoredClaims`); a run scored without rationales (no
    ``claims`` entry) has none. A file that is missing, unreadable, or whose bytes differ from the recorded
    checksum is refused now."""
    import hashlib

    import pyarrow as pa
    import pyarrow.parquet as pq

    info = metrics.get("claims")
    if not isinstance(info, dict):
        return {}
    path = run_dir / str(info.get("file") or "claims.parquet")
    if not path.is_file():
        raise BadInput("missing file named by metrics.json (claims); rerun `medr2 score`", file=str(path))
    stamp = _stamp(path)
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    if digest.hexdigest() != info.get("sha256"):
        raise BadInput("the file does not match the checksum metrics.json records (claims.sha256); rerun "
                       "`medr2 score`", file=str(path), field="claims.sha256")
    try:
        names = pq.read_schema(str(path)).names
    except (OSError, pa.ArrowException) as e:
        raise BadInput(f"cannot read parquet: {e}", file=str(path)) from e
    missing = [c for c in ("item_id", "mode") if c not in names]
    if missing:
        raise BadInput("missing column(s)", file=str(path), field=",".join(missing))
    return StoredClaims(path, stamp)


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
    attach_calibration(metrics, run_dir)
    scores = ScoreTable(run_dir / "scores.parquet")
    key = metrics.get("model_key") or _model_keys(scores) or run_dir.name
    model_key = ", ".join(key) if isinstance(key, list) else str(key)  # a merged run may hold several models
    bench_root: Path | None = None
    if with_bench:
        bench_root = Path(bench) if bench is not None else bench_path_of(manifest, run_dir)
    return RunData(run_dir=run_dir, label=run_dir.name, model_key=model_key, manifest=manifest,
                   metrics=metrics, scores=scores, responses=_read_responses(run_dir), bench_root=bench_root,
                   claims=read_claims(run_dir, metrics), analysis=_read_analysis(run_dir))


def _read_analysis(run_dir: Path) -> dict[str, Any]:
    """The run's ``harm.json`` and ``slices.json`` where ``medr2 score --harm/--slice`` wrote them."""
    from medr2.scoring.files import HARM_FILE, SLICES_FILE

    return {key: _read_json(run_dir / name) for key, name in (("harm", HARM_FILE), ("slices", SLICES_FILE))
            if (run_dir / name).is_file()}


CALIBRATION_FILE = "calibration.json"  # medr2.scoring.calibration.CALIBRATION_FILE


def attach_calibration(metrics: dict[str, Any], run_dir: Path) -> None:
    """Put a run's ``calibration.json`` (where ``medr2 score`` wrote one) beside its metrics, per mode under
    ``modes[MODE]["calibration"]`` (in memory only: the leaderboard and plots read both from one place)."""
    path = run_dir / CALIBRATION_FILE
    if not path.is_file():
        return
    cal = _read_json(path)
    if not isinstance(cal.get("modes"), dict):
        raise BadInput("calibration.json has no 'modes' object", file=str(path), field="modes")
    for mode, block in cal["modes"].items():
        if isinstance(block, dict) and isinstance(metrics["modes"].get(mode), dict):
            metrics["modes"][mode]["calibration"] = block


def _model_keys(scores: ScoreTable) -> list[str]:
    keys: set[str] = set()
    for cols in scores.batches(["model_key"]):
        keys.update(str(k) for k in set(cols["model_key"]))
    return sorted(keys)


def unique_labels(runs: list[RunData]) -> None:
    """Make run labels unique (``run``, ``run#2``) when folders share a name."""
    seen: dict[str, int] = {}
    for r in runs:
        n = seen.get(r.label, 0) + 1
        seen[r.label] = n
        if n > 1:
            r.label = f"{r.label}#{n}"
