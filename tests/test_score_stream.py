"""Streaming ``medr2 score`` (issue 16): the same bytes as the whole-table scorer, whatever the batch size.

The golden hashes (``tests/data/score_golden.json``) were written by the scorer that held every prediction in
memory; here the streaming scorer scores the same five fixture runs (every mode, lures, probes, chains, the
rationale audit) seven answers at a time (batches cut through every mode, case and chain) and in its default
batches, and must match ``metrics.json`` (its run folder, commit and version blanked), ``scores.parquet`` and
``claims.parquet`` byte for byte. Measured under load (load average 9-18 on 2 cores): 17 s for the first
(building the bench and the five runs included), 6 s for the second."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from medr2.scoring.stream import RowGroupWriter
from tests.score_golden import GOLDEN, score_fixture_runs


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("score-stream")


@pytest.mark.parametrize("batch_rows", [7, 50_000])
def test_streaming_scores_match_the_whole_table_golden(base: Path, batch_rows: int) -> None:
    golden = json.loads(GOLDEN.read_text())
    got = score_fixture_runs(base, batch_rows=batch_rows)
    assert got == golden


def test_row_group_writer_gives_write_table_bytes() -> None:
    schema = pa.schema([("k", pa.string()), ("v", pa.float64())])
    table = pa.table({"k": [f"k{i % 97}" for i in range(2500)], "v": [i / 7 for i in range(2500)]}, schema=schema)
    whole = pa.BufferOutputStream()
    pq.write_table(table, whole, compression="zstd", row_group_size=1000)
    w = RowGroupWriter(schema, row_group_rows=1000)
    for start in range(0, 2500, 300):  # batches that straddle row groups
        w.write(table.slice(start, 300))
    w.close()
    assert w.getvalue() == whole.getvalue().to_pybytes()
    empty = pa.BufferOutputStream()
    pq.write_table(schema.empty_table(), empty, compression="zstd")
    w = RowGroupWriter(schema)
    w.close()
    assert w.getvalue() == empty.getvalue().to_pybytes()


def test_row_group_writer_to_a_file_gives_the_same_bytes(tmp_path: Path) -> None:
    schema = pa.schema([("k", pa.string()), ("v", pa.float64())])
    table = pa.table({"k": [f"k{i % 97}" for i in range(2500)], "v": [i / 7 for i in range(2500)]}, schema=schema)
    whole = pa.BufferOutputStream()
    pq.write_table(table, whole, compression="zstd", row_group_size=1000)
    w = RowGroupWriter(schema, row_group_rows=1000, path=tmp_path / "t.parquet")
    for start in range(0, 2500, 700):
        w.write(table.slice(start, 700))
    w.close()
    assert (tmp_path / "t.parquet").read_bytes() == whole.getvalue().to_pybytes()
    with pytest.raises(ValueError):
        w.getvalue()


@pytest.mark.parametrize("key_index", [True, False], ids=["streamed-along-the-index", "grouped-and-sorted"])
def test_counted_rows_come_in_python_string_order_with_first_stored_position(tmp_path: Path, key_index: bool
                                                                              ) -> None:
    """``Store.counted_rows`` in byte order of UTF-8: the order Python and Arrow sort strings, also for ids whose
    order differs between Latin-1, UTF-16 and code points; batches split anywhere. Both ways of reading them:
    along the store's unique (item_id, mode) index, and grouped and sorted by SQLite (a store without it)."""
    import sqlite3

    from medr2 import Prediction
    from medr2.run.store import Row, Store

    prefixes = ("a", "Z", "é", "z", "ß", "\uffff", "𝔸", "\u00ff", "0", "~")
    rows = []
    for k, p in enumerate(prefixes * 3):
        mode = ("independent", "blind")[k % 2]
        status = "error" if k % 5 == 0 else "ok"
        rows.append(Row(Prediction(model_key="m", item_id=f"{p}{k:03d}", mode=mode, request_hash=f"h{k}",
                                   raw=None if status == "error" else f"answer {k}", status=status,
                                   error="boom" if status == "error" else None, reasoning=f"why {k}")))
    with Store.open(tmp_path, write=True) as store:
        store.put_many(rows)
        # a retried error under another request hash replaces the error row (one row per key)
        retried = rows[0].prediction.model_copy(update={"request_hash": "h-retry", "raw": "answer again",
                                                         "status": "ok", "error": None})
        store.put(retried)
        rows[0] = Row(retried)
    if not key_index:
        with sqlite3.connect(tmp_path / "store.sqlite") as conn:
            conn.execute("DROP INDEX predictions_item_mode")
    with Store.open(tmp_path) as store:
        assert store._one_row_per_key() is key_index
        batches = list(store.counted_rows(batch_rows=4))
    assert max(len(b) for b in batches) == 4
    got = [(b.item_id[k], b.mode[k], b.model_key[k], b.status[k], b.raw[k], b.reasoning[k], b.first[k])
           for b in batches for k in range(len(b))]
    want = sorted((r.prediction.mode, r.prediction.item_id) for r in rows)
    assert [(g[1], g[0]) for g in got] == want
    by_key = {(r.prediction.item_id, r.prediction.mode): (k, r.prediction) for k, r in enumerate(rows)}
    firsts = []
    for item_id, mode, model_key, status, raw, reasoning, first in got:
        k, p = by_key[(item_id, mode)]
        assert (model_key, status, raw) == (p.model_key, p.status, p.raw)
        assert reasoning == (p.reasoning if status == "ok" else None)
        firsts.append((first, k))
    # ``first`` orders rows as they were stored (the retried row last)
    assert [k for _, k in sorted(firsts)] == [*range(1, len(rows)), 0]


@pytest.mark.parametrize("chunk_rows", [1, 60])
def test_metrics_by_chunks_of_cases_match_the_whole_table_golden(base: Path, chunk_rows: int) -> None:
    """The metrics computed one chunk of cases at a time (one case per chunk; about 60 rows per chunk), merged
    from per-case sums (medr2.scoring.aggregate): the same bytes as the whole-table scorer."""
    golden = json.loads(GOLDEN.read_text())
    got = score_fixture_runs(base, batch_rows=7, chunk_rows=chunk_rows)
    assert got == golden


def test_fixture_cases_are_chunked_and_a_pair_across_cases_makes_one_chunk(tmp_path: Path) -> None:
    """The chunked golden above splits the fixture bench case by case (its pairings stay inside cases); an item
    whose parent lies in another case puts every row in one chunk (a pair is never cut)."""
    import dataclasses

    from medr2.scoring.itemcols import open_scoring_items
    from medr2.scoring.stream import CaseChunks
    from tests.run_fixtures import make_bench

    bench = make_bench(tmp_path / "bench", n_cases=6)
    _, cols = open_scoring_items(bench.root)
    items = cols.records(np.arange(len(cols)))
    n_cases = len({it.case_id for it in items.values()})
    assert n_cases == 6
    assert CaseChunks(tmp_path, items, n_rows=len(items), chunk_rows=1).n_chunks == n_cases
    assert CaseChunks(tmp_path, items, n_rows=len(items), chunk_rows=len(items)).n_chunks == 1
    variant = next(it for it in items.values() if it.parent_id)
    other = next(it for it in items.values() if it.case_id != variant.case_id and not it.parent_id)
    moved = {**items, variant.item_id: dataclasses.replace(variant, parent_id=other.item_id)}
    assert CaseChunks(tmp_path, moved, n_rows=len(items), chunk_rows=1).n_chunks == 1


def test_scores_in_small_row_groups_keep_the_table_and_the_metrics(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """``scores.parquet`` is written to disk a row group (``SCORES_ROW_GROUP_ROWS``) at a time: with row groups of
    5 rows the files hold more row groups, but the same table (written whole, it gives the golden bytes) and
    ``metrics.json`` and ``claims.parquet`` keep their golden bytes."""
    import hashlib

    import medr2.scoring.scorer as scorer

    monkeypatch.setattr(scorer, "SCORES_ROW_GROUP_ROWS", 5)
    golden = json.loads(GOLDEN.read_text())
    got = score_fixture_runs(tmp_path, batch_rows=7)
    assert set(got) == set(golden)
    for name, hashes in got.items():
        assert hashes["metrics.json"] == golden[name]["metrics.json"]
        assert hashes.get("claims.parquet") == golden[name].get("claims.parquet")
        path = tmp_path / name / "scores.parquet"
        assert pq.ParquetFile(path).num_row_groups > 1
        whole = pa.BufferOutputStream()
        pq.write_table(pq.read_table(path).combine_chunks(), whole, compression="zstd")
        assert hashlib.sha256(whole.getvalue().to_pybytes()).hexdigest() == golden[name]["scores.parquet"]


def test_scores_in_worker_processes_give_the_bytes_of_one_process(base: Path) -> None:
    """``--workers 3``: the batches (7 rows, so many per run and more than the workers' window) scored in 3
    forked processes, written in batch order: ``metrics.json``, ``scores.parquet`` and ``claims.parquet`` byte
    for byte the golden, which is one process's (the golden tests above; `--workers 2` against `--workers 1`:
    tests/test_score_run.py)."""
    assert score_fixture_runs(base, batch_rows=7, chunk_rows=60, workers=3) == json.loads(GOLDEN.read_text())


def test_workers_are_refused_with_a_judge_or_below_one(base: Path) -> None:
    from medr2 import BadInput
    from medr2.scoring.scorer import score_run

    score_fixture_runs(base, batch_rows=50_000)  # the runs exist
    run = base / "random-all-modes"
    with pytest.raises(BadInput, match="at least 1"):
        score_run(run, workers=0)
    with pytest.raises(BadInput, match="judge"):
        score_run(run, judge="openai:some-model", workers=2)


def test_an_error_in_a_worker_stops_the_score_and_publishes_nothing(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch that fails in a worker process (here every MCQ answer: a bad input) fails ``score_run`` with the
    worker's error; no scores are published and the spill folder is removed, as with one process."""
    import medr2.scoring.scorer as scorer
    from medr2 import BadInput

    score_fixture_runs(tmp_path, batch_rows=50_000)
    run = tmp_path / "random-all-modes"
    for f in ("scores.parquet", "metrics.json", "claims.parquet"):
        (run / f).unlink(missing_ok=True)

    def refuse(item: object, raw: str, conv: object) -> object:
        raise BadInput("no MCQ today", record=getattr(item, "item_id", None), field="form")

    monkeypatch.setitem(scorer.FORM_SCORERS, "mcq", refuse)  # forked workers inherit it
    with pytest.raises(BadInput, match="no MCQ today"):
        scorer.score_run(run, workers=2, batch_rows=7, mixed_splits=True)
    assert not (run / "scores.parquet").exists() and not (run / "metrics.json").exists()
    assert not [p for p in run.iterdir() if p.name.startswith(".score")]


def test_chunk_metrics_are_computed_in_the_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``--workers 2`` the metric groups run in the worker processes (the scorer only adds up their numbers:
    it never calls ``chunk_metrics``); a metric group whose combine function does not pickle (a plugin's lambda)
    sends its chunk's table instead, and the scorer computes that chunk itself: the same ``metrics.json`` as one
    process either way."""
    import os

    import medr2.scoring.aggregate as aggregate
    from medr2.scoring.metrics import METRIC_GROUPS, Ctx
    from medr2.scoring.scorer import score_run
    from tests.score_golden import build_fixture_run

    run = build_fixture_run(tmp_path, "random-all-modes")
    main, calls = os.getpid(), []
    real = aggregate.chunk_metrics

    def counted(*args: object, **kwargs: object) -> aggregate.ChunkMetrics:
        if os.getpid() == main:  # a forked worker appends to its own copy
            calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(aggregate, "chunk_metrics", counted)

    def metrics(workers: int) -> bytes:
        score_run(run, seed=3, n_resamples=50, batch_rows=7, chunk_rows=60, workers=workers, mixed_splits=True)
        return (run / "metrics.json").read_bytes().replace(str(run).encode(), b"RUN")

    one = metrics(1)
    n_chunks = len(calls)
    assert n_chunks > 1
    calls.clear()
    assert metrics(2) == one and not calls

    def halved(ctx: Ctx) -> dict[str, object]:
        acc = ctx.mean(ctx.rows, ctx.rows["verdict"].to_numpy() == "correct")
        return {"half": ctx.derived([acc], lambda a: a / 2)}

    monkeypatch.setitem(METRIC_GROUPS, "toy_halved", halved)
    calls.clear()
    one = metrics(1)
    assert b'"toy_halved"' in one and len(calls) == n_chunks
    calls.clear()
    assert metrics(2) == one and len(calls) == n_chunks  # each chunk's table came back and was computed here
