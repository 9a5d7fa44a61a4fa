"""Scoring: predictions -> Scores (verdict, parsed answer, method, IoU, text metrics) -> metrics.

Public API: :func:`score_items` (pure), :func:`score_run` (``RUN/scores.parquet`` + ``RUN/metrics.json``),
:func:`load_table` (the tidy table of a scored run, for reports).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Set as AbstractSet
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from medr2 import jsonsafe
from medr2.atomic import publish_files, settle
from medr2.errors import BadInput, Quarantine, QuarantineEntry
from medr2.imaging.draw import iou
from medr2.models.base import BoxConvention
from medr2.models.config import ModelConfig
from medr2.models.structured import structured_answer, structured_choice
from medr2.models.truncation import LENGTH_FINISH, SCAN_CHARS, TRUNCATED_HINT, scan_text, unfinished_reasoning
from medr2.records import REPORT_TASKS, Item, Prediction, Score, canonical_json, with_abstain_option
from medr2.scoring.boxes import BoxReading, convention_from_json, format_box, read_box, read_box_pixels
from medr2.scoring.extract import EXTRACTORS, Reading, read
from medr2.scoring.files import HARM_FILE, SLICES_FILE
from medr2.scoring.itemcols import ScoringItems, open_scoring_items
from medr2.scoring.items import ItemLike
from medr2.scoring.judge import AUDIT_FORMS, AUDIT_SAMPLE, AuditSample, Judge, audit_agreement, judge_prompt
from medr2.scoring.rationaleaudit import CLAIMS_FILE, _Audit, _AuditOut
from medr2.scoring.shortanswer import short_answer_metrics
from medr2.scoring.stats import DEFAULT_RESAMPLES
from medr2.scoring.stream import BATCH_ROWS, CHUNK_ROWS, SCORES_ROW_GROUP_ROWS, CaseChunks, RowGroupWriter

if TYPE_CHECKING:
    from medr2.run.store import CountedBatch

SCORES_FILE = "scores.parquet"
METRICS_FILE = "metrics.json"
QUARANTINE_FILE = "score_quarantine.jsonl"
# subgroup slices and harm of a scored run (medr2.scoring.slices), written after the scores by `score --slice/--harm`
# (their names in medr2.scoring.files: HARM_FILE, SLICES_FILE)
ANALYSIS_FILES = (SLICES_FILE, HARM_FILE)
BOX_CORRECT_IOU = 0.5
# a report counts as right (for per-item verdicts only; never in stage/overall accuracy) at this ROUGE-L F1
TEXT_CORRECT_ROUGE_L = 0.5


_NO_TEXT_METRICS: dict[str, float] = {}  # shared by every non-report row (never mutated)


@dataclass(slots=True)
class _Scored:
    verdict: str
    parsed: str | None = None
    iou: float | None = None
    text_metrics: dict[str, float] = field(default_factory=lambda: _NO_TEXT_METRICS)
    method: str = "rule"
    reason: str | None = None  # why an answer is unparsed (a conflict, ...), or the reader's note on a parsed one


def _same_choice(item: ItemLike, parsed: str) -> bool:
    if item.form == "multi":
        return parsed == ",".join(sorted(p.strip() for p in item.answer.split(",") if p.strip()))
    return parsed.strip().lower() == item.answer.strip().lower()


# extraction is a pure function of (form, raw, options); many raw answers repeat across items and modes. Each
# scoring process keeps at most ``_MEMO_MAX`` entries per memo (then clears it), and only answers of at most
# ``_MEMO_RAW_MAX`` characters (a longer one seldom repeats): an entry holds its raw answer and options, ≈ 0.5 KB
# for a bare letter; the bound before (2**20 entries, answers up to ``SCAN_CHARS``) let a run of millions of
# distinct answers fill ≈ 0.5 GB per process with letters, several GB with sentences
_CHOICE_MEMO: dict[tuple[str, str, tuple[str, ...]], Reading] = {}
_BOX_MEMO: dict[tuple[str, str], BoxReading] = {}
_MEMO_MAX = 1 << 16
_MEMO_RAW_MAX = 256


def _memo_put(memo: dict[Any, Any], key: Any, value: Any, raw: str) -> None:
    if len(raw) > _MEMO_RAW_MAX:
        return
    if len(memo) >= _MEMO_MAX:
        memo.clear()
    memo[key] = value


def _score_choice(item: ItemLike, raw: str, conv: BoxConvention) -> _Scored:
    key = (item.form, raw, tuple(item.options))
    if key in _CHOICE_MEMO:
        got = _CHOICE_MEMO[key]
    else:
        got = read(item.form, raw, item.options)
        _memo_put(_CHOICE_MEMO, key, got, raw)
    parsed = got.value
    if parsed is None:
        return _Scored("abstained" if got.abstained else "unparsed", reason=got.reason)
    # a parsed answer keeps the reader's note ("answer changed: A -> B"): the prediction records the change
    return _Scored("correct" if _same_choice(item, parsed) else "wrong", parsed, reason=got.reason)


def _score_box(item: ItemLike, raw: str, conv: BoxConvention) -> _Scored:
    if item.answer_box is None or not item.image_width or not item.image_height:
        raise BadInput("a box item needs answer_box, image_width and image_height", record=item.item_id,
                       field="answer_box")
    from medr2.scoring.boxes import _box_2d_order

    key = (raw, _box_2d_order(conv))  # the parse depends on the convention only through box_2d's order
    reading = _BOX_MEMO.get(key)
    if reading is None:
        reading = read_box(raw, conv)
        _memo_put(_BOX_MEMO, key, reading, raw)
    pix, why = read_box_pixels(raw, conv, item.image_width, item.image_height, reading)
    if pix is None:
        if reading.box is None and (declined := read("box", raw)).abstained:
            return _Scored("abstained", iou=0.0, reason=declined.reason)
        return _Scored("unparsed", iou=0.0, reason=why)
    value = iou(pix, item.answer_box)
    return _Scored("correct" if value >= BOX_CORRECT_IOU else "wrong", format_box(pix), iou=value)


def _score_text(item: ItemLike, raw: str, conv: BoxConvention) -> _Scored:
    """A report (``REPORT_TASKS``): ROUGE/BLEU/METEOR, right at ROUGE-L F1 >= 0.5 (per-item verdict only).
    Any other text item is a short answer: right on normalised exact match (:mod:`medr2.scoring.shortanswer`)."""
    got = read("text", raw)
    parsed = got.value
    unread = "abstained" if got.abstained else "unparsed"
    if item.task not in REPORT_TASKS:
        sm = short_answer_metrics(parsed, item.answer)  # not read (None): 0 on every measure
        if parsed is None:
            return _Scored(unread, text_metrics=sm, reason=got.reason if got.abstained else None)
        return _Scored("correct" if sm["exact"] == 1.0 else "wrong", parsed, text_metrics=sm)
    from medr2.scoring.textmetrics import item_text_metrics

    if parsed is None:
        return _Scored(unread, text_metrics=item_text_metrics("", item.answer),
                       reason=got.reason if got.abstained else None)
    tm = item_text_metrics(parsed, item.answer)
    return _Scored("correct" if tm["rougeL_f"] >= TEXT_CORRECT_ROUGE_L else "wrong", parsed, text_metrics=tm)


FormScorer = Callable[[ItemLike, str, BoxConvention], _Scored]
FORM_SCORERS: dict[str, FormScorer] = {
    "mcq": _score_choice, "yesno": _score_choice, "multi": _score_choice, "box": _score_box, "text": _score_text,
}


def _apply_judge(judge: Judge, pending: list[tuple[int, Item, str]], out: list[_Scored], bench_root: Path) -> None:
    prompts = [judge_prompt(it, raw) for _, it, raw in pending]
    replies = judge.ask(prompts, bench_root)
    for (i, item, _), reply in zip(pending, replies, strict=True):
        if reply is None:
            continue
        if item.form == "text":
            word = reply.strip().upper()
            verdict = "correct" if word.startswith("CORRECT") else "wrong" if word.startswith("WRONG") else None
            if verdict is not None and out[i].verdict != "unparsed":
                out[i].verdict, out[i].method = verdict, "judge"
            continue
        parsed = EXTRACTORS[item.form](reply.strip(), item.options)
        if parsed is not None:
            out[i] = _Scored("correct" if _same_choice(item, parsed) else "wrong", parsed, method="judge")


# forms scored after the others, grouped by reference answer: a report's reference is scored once per mode,
# and its tokens and n-grams are memoised only briefly (``textmetrics``), so its rows are scored together
_GROUPED_BY_ANSWER = frozenset({"text"})


def _truncated(item: ItemLike, conv: BoxConvention) -> _Scored:
    """An answer cut off by the token limit: scored as an empty answer (IoU 0, text metrics of ""), verdict
    ``truncated``, never judged."""
    empty = FORM_SCORERS[item.form](item, "", conv)
    return _Scored("truncated", iou=empty.iou, text_metrics=empty.text_metrics, method="none")


PROGRESS_EVERY = 1000  # answers scored between progress updates (the per-row path stays lean)


def _score_rows(by_id: Mapping[str, ItemLike], item_ids: Sequence[str], statuses: Sequence[str],
                raws: Sequence[str | None], box_convention: BoxConvention, judge: Judge | None = None,
                bench_root: Path | None = None, finish_reasons: Sequence[str | None] | None = None,
                progress: Any = None, structured: bool = False) -> list[_Scored]:
    """Score rows given by their aligned columns ``item_ids``, ``statuses``, ``raws`` (the per-row work of
    :func:`score_items`, without records); ``finish_reasons``, aligned with them, marks answers cut off by the
    token limit (``truncated``);
    ``structured``: the run asked for structured answers (:func:`medr2.models.structured.structured_answer`
    gives the answer field the reader reads)."""
    results: list[_Scored | None] = []
    grouped: list[int] = []
    for k, (item_id, status, raw) in enumerate(zip(item_ids, statuses, raws, strict=True)):
        if progress is not None and k % PROGRESS_EVERY == PROGRESS_EVERY - 1:
            progress.advance(PROGRESS_EVERY)
        item = by_id.get(item_id)
        if item is None:
            raise BadInput("prediction for an item that is not in the bench", record=item_id, field="item_id")
        if status == "error" or raw is None:
            results.append(_Scored("error", iou=0.0 if item.form == "box" else None, method="none"))
        elif (finish_reasons is not None and finish_reasons[k] in LENGTH_FINISH) or (
                ("<" in raw or "◁" in raw) and unfinished_reasoning(raw)):  # is_truncated, inlined (per-row path)
            results.append(_truncated(item, box_convention))
        elif item.form in _GROUPED_BY_ANSWER:
            grouped.append(len(results))
            results.append(None)
        elif structured and (value := structured_choice(item.form, raw, item.options)) is not None:
            # --structured-answers: a closed answer the constraint allows is taken as it is (the raw is stored)
            results.append(_Scored("correct" if _same_choice(item, value) else "wrong", value))
        else:
            if structured and (field_text := structured_answer(item.form, raw)) is not None:
                raw = field_text  # any other answer field (a box, ...) is read by the reader
            results.append(FORM_SCORERS[item.form](item, raw if len(raw) <= SCAN_CHARS else scan_text(raw),
                                                   box_convention))
    grouped.sort(key=lambda i: by_id[item_ids[i]].answer or "")  # stable: row order within a reference
    for i in grouped:
        item = by_id[item_ids[i]]
        results[i] = FORM_SCORERS[item.form](item, scan_text(raws[i] or ""), box_convention)
    if progress is not None:
        progress.advance(len(item_ids) % PROGRESS_EVERY)
    out: list[_Scored] = results  # type: ignore[assignment]  # every row is scored now
    if judge is not None:
        rows = enumerate(zip(item_ids, statuses, raws, strict=True))
        pending = [(i, by_id[item_id], raw) for i, (item_id, status, raw) in rows
                   if status != "error" and raw is not None and out[i].verdict != "truncated"
                   and _ask_judge(by_id[item_id], out[i])]
        if pending:
            _apply_judge(judge, pending, out, bench_root or Path("."))  # type: ignore[arg-type]
    return out


def _ask_judge(item: ItemLike, scored: _Scored) -> bool:
    """The judge is asked about every text answer (report or short) and about unreadable choice answers."""
    return item.form == "text" or (scored.verdict == "unparsed" and item.form != "box")


def offered(items: Mapping[str, ItemLike], abstain_option: bool) -> Mapping[str, ItemLike]:
    """The items as they were asked: with ``--abstain-option`` a single-choice item's options end with
    ``records.ABSTAIN_OPTION`` (the runner adds it the same way, ``records.with_abstain_option``)."""
    if not abstain_option:
        return items
    out: dict[str, ItemLike] = {}
    for k, it in items.items():
        opts = with_abstain_option(it.form, list(it.options))
        if opts is it.options or opts == list(it.options):
            out[k] = it
        elif isinstance(it, Item):
            out[k] = it.model_copy(update={"options": opts})
        else:
            out[k] = replace(it, options=opts)
    return out


def score_items(items: Mapping[str, ItemLike] | Iterable[Item], predictions: Iterable[Prediction],
                box_convention: BoxConvention, judge: Judge | None = None,
                bench_root: Path | None = None, *, abstain_option: bool = False,
                structured: bool = False) -> list[Score]:
    """Score each prediction against its item. Errors stay ``error``; unreadable answers ``unparsed``,
    declining ones ``abstained`` (the judge, if given, is asked about unparsed ones and about report texts).
    ``abstain_option``: the items were asked with ``--abstain-option``; ``structured``: with
    ``--structured-answers`` (the answer field is read)."""
    by_id = items if isinstance(items, Mapping) else {it.item_id: it for it in items}
    by_id = offered(by_id, abstain_option)
    preds = list(predictions)
    results = _score_rows(by_id, [p.item_id for p in preds], [p.status for p in preds], [p.raw for p in preds],
                          box_convention, judge, bench_root, [p.finish_reason for p in preds], structured=structured)
    return [Score(item_id=p.item_id, model_key=p.model_key, mode=p.mode, verdict=r.verdict, parsed=r.parsed,  # type: ignore[arg-type]
                  method=r.method, iou=r.iou, text_metrics=r.text_metrics, reason=r.reason)  # type: ignore[arg-type]
            for p, r in zip(preds, results, strict=True)]


# -- run folders -------------------------------------------------------------------------------------

SCORE_COLUMNS = ("item_id", "case_id", "model_key", "mode", "task", "stage", "form", "variant", "parent_id",
                 "split", "verdict", "parsed", "method", "iou", "text_metrics", "reason")


_SCORES_SCHEMA = pa.schema([("item_id", pa.string()), ("case_id", pa.string()), ("model_key", pa.string()),
                            ("mode", pa.string()), ("task", pa.string()), ("stage", pa.int8()), ("form", pa.string()),
                            ("variant", pa.string()), ("parent_id", pa.string()), ("split", pa.string()),
                            ("verdict", pa.string()), ("parsed", pa.string()), ("method", pa.string()),
                            ("iou", pa.float64()), ("text_metrics", pa.string()), ("reason", pa.string())])


def scores_table(items: Mapping[str, ItemLike], scores: Sequence[Score]) -> pa.Table:
    """The ``scores.parquet`` table (architecture.md layout), rows sorted by (mode, item_id)."""
    return _scores_table(items, [(s.item_id, s.model_key, s.mode) for s in scores],
                         [_Scored(s.verdict, s.parsed, s.iou, s.text_metrics, s.method, s.reason) for s in scores])


def _scores_table(items: Mapping[str, ItemLike], keys: Sequence[tuple[str, str, str]], scored: Sequence[_Scored]
                  ) -> pa.Table:
    """:func:`scores_table` from ``(item_id, model_key, mode)`` keys and their results, built column-wise."""
    order = sorted(range(len(keys)), key=lambda i: (keys[i][2], keys[i][0]))
    cols: dict[str, list[Any]] = {c: [] for c in SCORE_COLUMNS}
    item_cols = ("case_id", "task", "stage", "form", "variant", "parent_id", "split")
    per_item: dict[str, tuple[Any, ...]] = {}
    for i in order:
        item_id, model_key, mode = keys[i]
        r = scored[i]
        fields = per_item.get(item_id)
        if fields is None:
            it = items[item_id]
            fields = per_item[item_id] = (it.case_id, it.task, it.stage, it.form, it.variant, it.parent_id, it.split)
        cols["item_id"].append(item_id)
        cols["model_key"].append(model_key)
        cols["mode"].append(mode)
        for c, v in zip(item_cols, fields, strict=True):
            cols[c].append(v)
        cols["verdict"].append(r.verdict)
        cols["parsed"].append(r.parsed)
        cols["method"].append(r.method)
        cols["iou"].append(r.iou)
        cols["text_metrics"].append(canonical_json(r.text_metrics) if r.text_metrics else "{}")
        cols["reason"].append(r.reason)
    return pa.table(cols, schema=_SCORES_SCHEMA)


def _scores_batch(items: Mapping[str, ItemLike], item_ids: Sequence[str], model_keys: Sequence[str],
                  modes: Sequence[str], scored: Sequence[_Scored]) -> pa.Table:
    """:func:`_scores_table` of rows already in (mode, item_id) order (a batch of ``Store.counted_rows``), built
    a column at a time (the same table)."""
    its = [items[i] for i in item_ids]
    cols: dict[str, Any] = {
        "item_id": item_ids, "case_id": [it.case_id for it in its], "model_key": model_keys, "mode": modes,
        "task": [it.task for it in its], "stage": [it.stage for it in its], "form": [it.form for it in its],
        "variant": [it.variant for it in its], "parent_id": [it.parent_id for it in its],
        "split": [it.split for it in its], "verdict": [r.verdict for r in scored],
        "parsed": [r.parsed for r in scored], "method": [r.method for r in scored], "iou": [r.iou for r in scored],
        "text_metrics": [canonical_json(r.text_metrics) if r.text_metrics else "{}" for r in scored],
        "reason": [r.reason for r in scored]}
    return pa.table(cols, schema=_SCORES_SCHEMA)


def _scores_table_from_tidy(tidy: pd.DataFrame) -> pa.Table:
    """:func:`scores_table` from the tidy table of the same rows (same bytes, built column-wise): the string
    columns are Arrow-backed, so they go to Arrow as they are; rows are sorted by (mode, item_id) with
    Arrow's stable sort (UTF-8 byte order is code-point order, as Python compares strings)."""
    cols: dict[str, Any] = {}
    for c in SCORE_COLUMNS:
        typ = _SCORES_SCHEMA.field(c).type
        if c == "text_metrics":
            cols[c] = pa.array([canonical_json(d) if d else "{}" for d in tidy[c].tolist()], type=typ)
        elif c == "iou":
            cols[c] = pa.array(tidy[c].to_numpy(dtype=float), type=typ, from_pandas=True)  # NaN -> null
        elif c == "reason" and c not in tidy.columns:
            cols[c] = pa.nulls(len(tidy), type=typ)
        elif c == "stage":
            cols[c] = pa.array(tidy[c].to_numpy(dtype=np.int64), type=typ)
        else:
            cols[c] = pa.array(tidy[c], type=typ, from_pandas=True)  # missing -> null
    table = pa.table(cols, schema=_SCORES_SCHEMA)
    order = pc.sort_indices(table, sort_keys=[("mode", "ascending"), ("item_id", "ascending")])
    return table.take(order).combine_chunks()


def _run_manifest(run_dir: Path) -> tuple[dict[str, Any], str]:
    """(run manifest, its bench's folder) of a run folder."""
    from medr2.run.manifest import MANIFEST_FILE, read_manifest

    manifest = read_manifest(run_dir)
    if manifest is None:
        raise BadInput("no run manifest: not a run folder", file=str(run_dir / MANIFEST_FILE))
    bench_path = (manifest.get("bench") or {}).get("path")
    if not bench_path:
        raise BadInput("the run manifest does not name its bench", file=str(run_dir / MANIFEST_FILE),
                       field="bench.path")
    return manifest, str(bench_path)


def run_clusters(run_dir: Path | str) -> dict[str, str]:
    """Case id -> patient group of the run's bench (:func:`medr2.bench.format.case_clusters`): what a comparison
    of runs on that bench bootstraps over."""
    from medr2.bench.format import case_clusters

    return case_clusters(_run_manifest(Path(run_dir))[1])


def _run_inputs(run_dir: Path, folder: Path | None = None) -> tuple[dict[str, Any], Path, ScoringItems]:
    """(run manifest, bench folder, the bench's items, held by columns: in memory, or in the engine in
    ``folder``) of a run folder."""
    from medr2.bench.reviews import recorded_fixes
    from medr2.run.manifest import MANIFEST_FILE

    manifest, bench_path = _run_manifest(run_dir)
    bench_info = manifest.get("bench") or {}
    # the items the run's ``--reviewed`` selections asked that review fixes made: read after the bench's rows
    added = recorded_fixes(bench_path, [i for i in manifest.get("invocations") or [] if isinstance(i, dict)])
    bench_manifest, items = open_scoring_items(bench_path, folder, added=added)
    try:
        refuse_unknown_answers(bench_manifest, bench_path)
        checksum = str(bench_manifest["checksums"]["bench"])
        if bench_info.get("checksum") and checksum != bench_info["checksum"]:
            raise BadInput(f"the bench at {bench_path} changed since the run (checksum {checksum} != "
                           f"{bench_info['checksum']})", file=str(run_dir / MANIFEST_FILE), field="bench.checksum")
    except BaseException:
        items.close()
        raise
    return manifest, Path(bench_path), items


def refuse_unknown_answers(bench_manifest: Mapping[str, Any], bench_path: str | Path) -> None:
    """A bench imported from a file whose answers are withheld (GMAI-MMBench TEST; items with
    ``meta.answer_unknown``) has nothing to score against: refuse, rather than count every answer wrong."""
    n = int((bench_manifest.get("imported") or {}).get("answers_unknown") or 0)
    if n:
        raise BadInput(f"{n} item(s) of this bench have no reference answer (imported from a file whose answers "
                       "are withheld, meta.answer_unknown): nothing to score them against; submit the predictions "
                       "to the benchmark's own evaluation instead", file=str(bench_path),
                       field="imported.answers_unknown")


def _quarantine_unknown(run_dir: Path, items: ScoringItems, quarantine: Quarantine) -> int:
    """Quarantine every stored row whose item is not in the bench (in insertion order); returns how many answers
    count (one per (item, mode) of a known item). The answers per item are counted along the store's index; only
    a store that holds an unknown item is read row by row for the rows to quarantine."""
    from medr2.run.store import Store

    store = Store.open(run_dir)
    try:
        n = 0
        unknown = False
        for counts in store.modes_per_item(BATCH_ROWS):
            known = items.positions(counts.item_id) >= 0
            n += sum(c for c, ok in zip(counts.modes, known.tolist(), strict=True) if ok)
            unknown = unknown or not bool(known.all())
        if unknown:
            for part in store.item_rows(BATCH_ROWS):
                known = items.positions(part.item_id) >= 0
                for request_hash, item_id, ok in zip(part.request_hash, part.item_id, known.tolist(), strict=True):
                    if not ok:
                        quarantine.add(QuarantineEntry(str(run_dir / "store.sqlite"), request_hash, "item_id",
                                                       f"item {item_id} is not in the bench", stage="score"))
        return n
    finally:
        store.close()


@dataclass
class _BatchOut:
    """What one batch of counted rows gives (:class:`_BatchScorer`): its ``scores.parquet`` rows, the rows the
    metrics read (:meth:`CaseChunks.rows`), its rationale audit's claims (:meth:`_Audit.compute`), its severity
    floors (:class:`SeverityFloors`) and how many answers were cut off. Picklable: a worker process returns it."""

    scores: pa.Table
    spilled: pa.Table
    claims: _AuditOut | None
    floors: dict[str, dict[str, float]]
    n_truncated: int
    audit_sample: AuditSample | None = None  # with a judge: this batch's share of the judge's audit sample
    n_judged: int = 0  # answers read by the judge (method ``judge``)


class _BatchScorer:
    """Scores one batch of counted rows (``Store.counted_rows``, items known) into a :class:`_BatchOut`: a pure
    function of the batch (the memos it fills are caches), so a batch gives the same result in any process
    (``medr2 score --workers N``, :mod:`medr2.scoring.workers`)."""

    def __init__(self, items: ScoringItems, conv: BoxConvention, judge: Judge | None, bench_root: Path,
                 audit: _Audit, progress: Any = None, abstain_option: bool = False, structured: bool = False,
                 judge_sample: tuple[int, int] = (0, 0)) -> None:
        self.items, self.conv, self.judge, self.bench_root = items, conv, judge, bench_root
        self.audit, self.progress, self.abstain_option = audit, progress, abstain_option
        self.structured, self.judge_sample = structured, judge_sample  # (k, seed) of the judge's audit sample

    def __call__(self, rows: CountedBatch, codes: np.ndarray) -> _BatchOut:
        from medr2.scoring.table import SeverityFloors

        window = self.items.load(codes)  # this batch's records (what the lookups below read)
        asked = offered(window, self.abstain_option)
        scored = _score_rows(asked, rows.item_id, rows.status, rows.raw, self.conv, judge=self.judge,
                             bench_root=self.bench_root, finish_reasons=rows.finish_reason, progress=self.progress,
                             structured=self.structured)
        item_ids = [window[i].item_id for i in rows.item_id]  # the records' own strings: no copy per row
        scores = _scores_batch(window, item_ids, rows.model_key, rows.mode, scored)
        audit_cols, claims = self.audit.compute(rows, item_ids)
        spilled = CaseChunks.rows(codes, rows.model_key, rows.mode, rows.first, scored, audit_cols)
        floors = SeverityFloors(window)
        floors.add(item_ids, rows.mode)
        out = _BatchOut(scores, spilled, claims, floors.floors, sum(1 for r in scored if r.verdict == "truncated"))
        if self.judge is not None:
            out.audit_sample = self._sample(asked, rows, scored)
            out.n_judged = sum(1 for r in scored if r.method == "judge")
        return out

    def _sample(self, asked: Mapping[str, ItemLike], rows: CountedBatch, scored: Sequence[_Scored]
                ) -> AuditSample:
        """This batch's share of the judge's audit sample: closed answers the reader parsed."""
        sample = AuditSample(*self.judge_sample)
        for item_id, mode, raw, sc in zip(rows.item_id, rows.mode, rows.raw, scored, strict=True):
            item = asked[item_id]
            if sc.method == "rule" and sc.parsed is not None and raw is not None and item.form in AUDIT_FORMS and (
                    sc.verdict in ("correct", "wrong")):
                sample.offer(item.item_id, mode, item, raw, sc.parsed)
        return sample


def _load_before_fork(items: ScoringItems) -> None:
    """What every worker would load for itself, loaded once before they are forked (they share it): the rationale
    audit's module (its term patterns) and, when the bench has reports, the text-metric models
    (:func:`medr2.scoring.textmetrics.load_models`; the metrics load them anyway)."""
    import medr2.scoring.claims  # noqa: F401

    task = items.column("task")
    tasks = task.dictionary.to_pylist() if pa.types.is_dictionary(task.type) else pc.unique(task).to_pylist()
    if REPORT_TASKS.intersection(t for t in tasks if t is not None):
        from medr2.scoring.textmetrics import load_models

        load_models()


def _known_rows(batches: Iterable[CountedBatch], items: ScoringItems) -> Iterator[tuple[CountedBatch, np.ndarray]]:
    """Each batch's rows whose item is in the bench, with their items' positions (batches left empty skipped)."""
    for batch in batches:
        pos = items.positions(batch.item_id)
        known = pos >= 0
        rows = batch.where(known.tolist())
        if len(rows):
            yield rows, pos[known]


def score_run(run_dir: Path | str, judge: ModelConfig | Judge | None = None, *, seed: int = 0,
              n_resamples: int = DEFAULT_RESAMPLES, progress: Any = None, judge_claims: bool = False,
              batch_rows: int = BATCH_ROWS, chunk_rows: int = CHUNK_ROWS, workers: int = 1,
              harm: Mapping[str, Any] | None = None, conformal_coverage: float = 0.9,
              mixed_splits: bool = False, judge_sample: int = AUDIT_SAMPLE) -> dict[str, Any]:
    """Score a run folder: writes ``RUN/scores.parquet`` and ``RUN/metrics.json`` (and ``RUN/claims.parquet``,
    the per-claim verdicts, when some answer carries a rationale); returns the metrics.
    ``judge_claims`` (off by default) asks ``judge`` about the claims the rules leave unverifiable.
    ``progress`` (``medr2.progress``, e.g. ``for_console``) is told each step and the answers scored.
    The answers that count are read from the store ``batch_rows`` at a time, in ``scores.parquet``'s order
    (mode, item id), scored, written and dropped; what the metrics read is spilled to disk by chunk of whole
    cases (:class:`medr2.scoring.stream.CaseChunks`, about ``chunk_rows`` rows each) and the metrics are computed
    a chunk at a time (:class:`medr2.scoring.aggregate.MetricsAccumulator`), rows in the order of the store's
    first answer per key. The bench's items are read through the bench layer and loaded into the columnar engine
    in the run's spill folder (a DuckDB table in item id order), and the items a batch or a chunk needs are read
    back by a join (:mod:`medr2.scoring.itemengine`). ``workers`` > 1 scores the batches
    in that many worker processes (:mod:`medr2.scoring.workers`) and writes their results in batch order: the
    same bytes as one process.
    ``harm``: a user's harm override (:meth:`medr2.scoring.harm.HarmSpec.record`), recorded as ``run.harm`` (only
    when given: without it ``metrics.json`` is as before). The slices and harm files of an earlier scoring
    (``slices.json``, ``harm.json``: :mod:`medr2.scoring.slices`) are removed with the new scores published.
    A run with no answer is refused (:class:`~medr2.errors.WorkFailed`), and so is one whose answers come from
    more than one split (train, val, test) unless ``mixed_splits``: its metrics would mix held-out items with
    those a model may have been fit on. ``metrics["run"]["splits"]`` counts the items answered per split.
    With a ``judge``, ``metrics["judge"]`` counts the answers it read and its agreement with the reader on a
    seeded sample of ``judge_sample`` closed answers the reader parsed (:func:`medr2.scoring.judge.audit_agreement`)."""
    from medr2.progress import Quiet
    from medr2.run.manifest import eval_option
    from medr2.run.store import Store
    from medr2.scoring.completeness import AnsweredIds
    from medr2.scoring.judge import make_judge
    from medr2.scoring.spill import SpillFolder
    from medr2.scoring.table import SeverityFloors
    from medr2.scoring.workers import OrderedPool

    run_dir = Path(run_dir)
    if judge_claims and judge is None:
        raise BadInput("judging claims needs a judge (--judge SPEC)", field="--judge-claims")
    if workers < 1:
        raise BadInput("workers must be at least 1", field="--workers")
    if not 0 < conformal_coverage < 1:
        raise BadInput(f"--conformal-coverage must be between 0 and 1 (exclusive), not {conformal_coverage}",
                       field="--conformal-coverage")
    if workers > 1 and judge is not None:
        raise BadInput("scoring with a judge runs in one process (--workers 1)", field="--workers")
    if batch_rows < 1 or chunk_rows < 1:
        raise BadInput("batch_rows and chunk_rows must be at least 1",
                       field="batch_rows" if batch_rows < 1 else "chunk_rows")
    from medr2.vocab import vocabulary

    vocabulary()  # a bad user or plugin vocabulary line is BadInput (exit 2) before any answer is read
    progress = progress or Quiet()
    progress.step("reading the run and its bench")
    _run_manifest(run_dir)  # a folder that is no run is refused before a spill folder is made in it
    qpath = run_dir / f".{QUARANTINE_FILE}.scoring"  # published with the scores (below)
    qpath.unlink(missing_ok=True)  # the first write to the run folder (a read-only one is named here)
    spill_folder = SpillFolder(run_dir)  # locked while in use; a killed scorer's folder is removed next time
    spill = spill_folder.__enter__()
    items: ScoringItems | None = None
    try:
        # the bench's items are loaded into the engine in the spill folder and joined as batches and chunks need them
        manifest, bench_root, items = _run_inputs(run_dir, spill)
        conv = convention_from_json((manifest.get("model") or {}).get("box_convention")
                                    or (manifest.get("identity") or {}).get("box_convention"))
        quarantine = Quarantine(qpath)
        n_counted = _quarantine_unknown(run_dir, items, quarantine)
        judge_obj = make_judge(judge, run_dir) if isinstance(judge, ModelConfig) else judge
        structured = eval_option(manifest, "structured_answers")  # the mechanism, where the run used one
        progress.step("scoring answers", n_counted)
        # written as the batches come, in the spill folder, and moved into place when published
        scores_out = RowGroupWriter(_SCORES_SCHEMA, SCORES_ROW_GROUP_ROWS, path=spill / SCORES_FILE)
        audit = _Audit(bench_root, items, judge=judge_obj if judge_claims else None, folder=spill)
        chunks = CaseChunks(spill, items, n_counted, chunk_rows)
        floors = SeverityFloors(items)
        answered: dict[str, AnsweredIds] = {}
        n_predictions = n_truncated = 0
        if workers > 1:
            _load_before_fork(items)
        batches = OrderedPool(_BatchScorer(items, conv, judge_obj, bench_root, audit,
                                           progress=progress if workers == 1 else None,
                                           abstain_option=bool(eval_option(manifest, "abstain_option")),
                                           structured=bool(structured), judge_sample=(judge_sample, seed)), workers)
        sample, n_judged, judge_block = AuditSample(judge_sample, seed), 0, None
        store = Store.open(run_dir)
        try:
            for (rows, codes), out in batches.map(_known_rows(store.counted_rows(batch_rows), items)):
                if workers > 1:
                    progress.advance(len(rows))
                scores_out.write(out.scores)
                chunks.write(codes, out.spilled)
                audit.commit(out.claims)
                floors.merge(out.floors)
                modes = rows.mode
                mode_arr = np.asarray(modes, dtype=object)
                for mode in set(modes):
                    answered_mode = answered.setdefault(mode, AnsweredIds(items))
                    answered_mode.add_positions(codes[mode_arr == mode])
                n_predictions += len(rows)
                n_truncated += out.n_truncated
                if out.audit_sample is not None:
                    sample.merge(out.audit_sample)
                n_judged += out.n_judged
                del rows, codes, out, modes, mode_arr
            if judge_obj is not None:
                progress.step(f"the judge's agreement with the reader ({min(judge_sample, sample.offered):,} answers)")
                judge_block = {"model": judge_obj.key, "judged": n_judged, "audit": audit_agreement(
                    judge_obj, sample, bench_root, n_resamples=n_resamples, seed=seed)}
        finally:
            batches.close()
            store.close()
            if isinstance(judge, ModelConfig) and judge_obj is not None:
                judge_obj.close()
        scores_out.close()
        splits = _answered_splits(run_dir, items, answered, mixed_splits=mixed_splits)
        claims_out = audit.close()
        plan = _plan(manifest, items, answered)
        del answered
        chunk_word = "chunk" if chunks.n_chunks == 1 else "chunks"
        progress.step(f"metrics ({chunks.n_chunks:,} {chunk_word} of cases, {n_resamples:,} bootstrap resamples)")
        from medr2.bench.format import case_clusters

        metrics = _chunk_metrics(chunks, items, floors.floors, audited=claims_out is not None, seed=seed,
                                 n_resamples=n_resamples, workers=workers, clusters=case_clusters(bench_root))
        model = manifest.get("model") or {}
        metrics["run"] = {
            "run_dir": str(run_dir), "bench": {k: (manifest.get("bench") or {}).get(k) for k in ("name", "checksum")},
            "model": {"spec": model.get("spec"), "key": model.get("key")}, "box_convention": {
                "space": conv.space, "resize": conv.resize, "params": dict(conv.params)},
            "medr2_version": manifest.get("medr2_version"), "git_commit": manifest.get("git_commit"),
            "modes": manifest.get("modes"), "n_predictions": n_predictions, "quarantined": quarantine.count,
            "judge": None if judge_obj is None else judge_obj.key, "splits": splits,
        }
        if judge_block is not None:
            metrics["judge"] = judge_block
        if structured:  # recorded where used (a run without keeps the metrics.json it had)
            metrics["run"]["structured_answers"] = structured
        if harm is not None:
            metrics["run"]["harm"] = dict(harm)
        metrics["complete"], metrics["plan"] = plan["complete"], plan
        if claims_out is not None:
            metrics["claims"] = claims_out.summary
        if n_truncated:
            metrics["run"].update(truncated=n_truncated, hint=TRUNCATED_HINT)
        data = json.dumps(metrics, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
        outputs: dict[str, bytes | Path] = {SCORES_FILE: spill / SCORES_FILE, METRICS_FILE: data.encode("utf-8")}
        if quarantine.count:
            outputs[QUARANTINE_FILE] = qpath.read_bytes()
        if claims_out is not None:
            outputs[CLAIMS_FILE] = claims_out.data
        # one set: a kill never leaves new scores beside old metrics or old claims (readers settle() first)
        progress.step("writing scores.parquet and metrics.json")
        publish_files(run_dir, outputs, remove=(() if quarantine.count else (QUARANTINE_FILE,))
                      + (() if claims_out is not None else (CLAIMS_FILE,)) + ANALYSIS_FILES,
                      command=f"medr2 score {run_dir}")
    finally:
        if items is not None:
            items.close()
        spill_folder.__exit__(None, None, None)
    qpath.unlink(missing_ok=True)
    from medr2.scoring.calibration import write_calibration

    # RUN/calibration.json where answers carry confidences or abstain
    write_calibration(run_dir, metrics, coverage=conformal_coverage)
    return metrics


class IncompleteRunWarning(UserWarning):
    """Scoring a run that lacks answers its plan asked for (interrupted, killed, still running)."""


def _answered_splits(run_dir: Path, items: ScoringItems, answered: Mapping[str, Any], *, mixed_splits: bool
                     ) -> dict[str, int]:
    """The items answered (in any mode) per split; refuses an empty run, and a run mixing splits unless
    ``mixed_splits``."""
    from medr2.errors import WorkFailed

    mask = np.zeros(len(items), dtype=bool)
    for ids in answered.values():
        mask |= ids.mask
    if not mask.any():
        raise WorkFailed(f"{run_dir}: the run holds no answer to score (its selection was empty, or no "
                         "`medr2 eval` stored anything yet)")
    idx, values = items.codes("split")
    counts = np.bincount(idx[mask], minlength=len(values) + 1)
    splits = {str(v if v is not None else "none"): int(counts[i]) for i, v in enumerate([*values, None])
              if counts[i]}
    if len(splits) > 1 and not mixed_splits:
        listed = ", ".join(f"{k} ({n:,} items)" for k, n in sorted(splits.items()))
        raise BadInput(f"the run's answers come from several splits: {listed}; metrics over them would mix "
                       "held-out items with training ones. Evaluate one split (`medr2 eval --split test`, the "
                       "default) into its own run folder, or pass --mixed-splits to score the mix on purpose",
                       file=str(run_dir), field="split")
    return dict(sorted(splits.items()))


def _plan(manifest: dict[str, Any], items: ScoringItems, answered: Mapping[str, AbstractSet[str]]
          ) -> dict[str, Any]:
    """The run's completeness against its recorded plan (:mod:`medr2.scoring.completeness`; ``answered``: per
    mode the item ids scored); warns when incomplete."""
    import warnings

    from medr2.scoring.completeness import completeness, describe

    plan = completeness(manifest, items, answered)
    if (message := describe(plan)) is not None:
        warnings.warn(message, IncompleteRunWarning, stacklevel=3)
    return plan


@dataclass
class _ChunkOut:
    """One chunk's metrics from :class:`_ChunkMetrics`: the :class:`medr2.scoring.aggregate.ChunkMetrics` (pickled
    by a worker process), or, when a metric group's combine function does not pickle (a plugin's lambda), the
    chunk's tidy table, whose metrics the scorer then computes itself."""

    metrics: Any = None  # ChunkMetrics, or its pickle (bytes) from a worker
    table: pd.DataFrame | None = None


class _ChunkMetrics:
    """The metrics of one chunk of cases (:meth:`CaseChunks.read`): its tidy table (records loaded,
    ``build_table_columns``) and every metric group run on it (:func:`medr2.scoring.aggregate.chunk_metrics`),
    what :meth:`MetricsAccumulator.absorb` takes. A pure function of the chunk, run in a worker process with
    ``--workers N`` (``pickled``: the result is pickled there, so that only numbers cross to the scorer)."""

    def __init__(self, items: ScoringItems, audited: bool, floors: Mapping[str, Mapping[str, float]],
                 pickled: bool = False) -> None:
        self.items, self.audited, self.floors, self.pickled = items, audited, floors, pickled

    def table(self, path: Path) -> pd.DataFrame:
        """The chunk's tidy table, rows in stored order (``_order``: where each row's first answer was stored)."""
        from medr2.scoring.claims import AUDIT_COLUMNS
        from medr2.scoring.table import build_table_columns

        t = CaseChunks.read(path)
        codes = t["item"].to_numpy()
        self.items.load(codes)  # the chunk's records (build_table_columns looks them up)
        table = build_table_columns(self.items, self.items.ids(codes), t["model_key"].to_pylist(),
                                    t["mode"].to_pylist(), t["verdict"].to_pylist(), t["parsed"].to_pylist(),
                                    t["method"].to_pylist(), t["iou"].to_pylist(),
                                    CaseChunks.text_metrics(t["text_metrics"].to_pylist()))
        table["reason"] = pd.Series(t["reason"].to_pylist(), dtype=object)
        if self.audited:
            for c in AUDIT_COLUMNS:
                table[c] = t[c].to_numpy().astype(np.int64)
        table["_order"] = t["first"].to_numpy().astype(np.int64)
        self.items.load(np.zeros(0, dtype=np.int64))
        return table

    def __call__(self, path: Path) -> _ChunkOut:
        import pickle

        from medr2.scoring.aggregate import chunk_metrics

        table = self.table(path)
        got = chunk_metrics(table, self.floors)
        if not self.pickled:
            return _ChunkOut(got)
        try:
            return _ChunkOut(pickle.dumps(got, protocol=pickle.HIGHEST_PROTOCOL))
        except (pickle.PicklingError, AttributeError, TypeError):  # a closure or lambda: the scorer computes it
            return _ChunkOut(table=table)


def _chunk_metrics(chunks: CaseChunks, items: ScoringItems, floors: Mapping[str, Mapping[str, float]],
                   *, audited: bool, seed: int, n_resamples: int, workers: int = 1,
                   clusters: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The metrics of the spilled rows, one chunk of cases at a time (each chunk's tidy table is built, its
    metric groups run, their per-case sums kept and the table dropped before the next is read; with ``workers``
    > 1 that is done in worker processes, one chunk ahead per worker, and the sums are added here in chunk
    order)."""
    import pickle

    from medr2.scoring.aggregate import MetricsAccumulator, chunk_metrics
    from medr2.scoring.workers import OrderedPool

    acc = MetricsAccumulator()
    with OrderedPool(_ChunkMetrics(items, audited, floors, pickled=workers > 1), workers, in_flight=1) as pool:
        for (path,), out in pool.map((p,) for p in chunks.paths()):
            path.unlink()
            if out.table is not None:
                got = chunk_metrics(out.table, floors)
            else:
                got = pickle.loads(out.metrics) if isinstance(out.metrics, bytes) else out.metrics
            del out
            acc.absorb(got)
            del got
    return acc.finish(seed=seed, n_resamples=n_resamples, clusters=clusters)


def load_table(run_dir: Path | str) -> pd.DataFrame:
    """The tidy scored table of a scored run (scores.parquet joined with its bench's items)."""
    from medr2.scoring.table import build_table

    run_dir = Path(run_dir)
    settle(run_dir)  # complete a publish a killed `medr2 score` left half done
    path = run_dir / SCORES_FILE
    if not path.is_file():
        raise BadInput("the run is not scored yet (run `medr2 score RUN`)", file=str(path))
    _, _, items = _run_inputs(run_dir)
    t = pq.read_table(path).to_pylist()
    items.load(items.positions([r["item_id"] for r in t]))
    scores = [Score(item_id=r["item_id"], model_key=r["model_key"], mode=r["mode"], verdict=r["verdict"],
                    parsed=r["parsed"], method=r["method"], iou=r["iou"],
                    text_metrics=jsonsafe.loads(r["text_metrics"] or "{}", file=str(path), record=r["item_id"],
                                                field="text_metrics"), reason=r.get("reason")) for r in t]
    return build_table(items, scores)
