"""The persist-first SQLite store."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from medr2 import BadInput, Prediction, WorkFailed
from medr2.run.store import SCHEMA_VERSION, Row, Store


def _pred(h: str, item: str = "i1", mode: str = "independent", status: str = "ok", raw: str | None = "A") -> Prediction:
    return Prediction(model_key="m", item_id=item, mode=mode, request_hash=h, raw=raw, status=status,  # type: ignore[arg-type]
                      error=None if status == "ok" else "boom", latency_s=0.1, prompt_tokens=3, completion_tokens=1)


def test_round_trip_and_wal(tmp_path: Path) -> None:
    with Store.open(tmp_path, write=True) as st:
        st.put(_pred("h1"), step=2, chain_id="c", meta={"variant": "clean"}, request=[{"role": "user"}])
        st.put_many([Row(_pred("h2", item="i2")), Row(_pred("h3", item="i3", status="error", raw=None))])
        assert st.count() == 3 and st.count(status="error") == 1
        got = st.get("h1")
        assert got is not None and got.prediction == _pred("h1") and got.step == 2 and got.chain_id == "c"
        assert got.meta == {"variant": "clean"} and got.request == [{"role": "user"}]
        assert st.get_item("i2", "independent").prediction.request_hash == "h2"  # type: ignore[union-attr]
        assert st.statuses(["h1", "h3", "nope"]) == {"h1": "ok", "h3": "error"}
    con = sqlite3.connect(tmp_path / "store.sqlite")
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with Store.open(tmp_path) as ro:
        assert [r.prediction.request_hash for r in ro.iter_predictions()] == ["h1", "h2", "h3"]
        assert [r.prediction.request_hash for r in ro.iter_predictions(mode="independent")] == ["h1", "h2", "h3"]
        assert ro.counts_by_mode() == {"independent": {"ok": 2, "error": 1}}


def test_ok_is_final_error_is_replaced(tmp_path: Path) -> None:
    with Store.open(tmp_path, write=True) as st:
        st.put(_pred("h1", raw="A"))
        st.put(_pred("h1", raw="B"))
        assert st.get("h1").prediction.raw == "A"  # type: ignore[union-attr]
        st.put(_pred("h2", item="i2", status="error", raw=None))
        st.put(_pred("h2", item="i2", raw="C"))
        assert st.get("h2").prediction.status == "ok" and st.count() == 2  # type: ignore[union-attr]


def test_one_row_per_item_and_mode(tmp_path: Path) -> None:
    with Store.open(tmp_path, write=True) as st:
        # a stale error under another hash gives way (e.g. a chain step whose context changed)
        st.put(_pred("old", status="error", raw=None))
        st.put(_pred("new"))
        assert st.count() == 1 and st.get("old") is None
        # but a stored ok answer is never shadowed by a second request for the same item and mode
        with pytest.raises(BadInput, match="another request") as e:  # the folder's store is another run's (exit 2)
            st.put(_pred("other"))
        assert e.value.file == str(tmp_path / "store.sqlite")
        assert st.count() == 1


def test_single_writer_and_missing_store(tmp_path: Path) -> None:
    with Store.open(tmp_path, write=True), pytest.raises(BadInput, match="another process"):
        Store.open(tmp_path, write=True)
    with pytest.raises(BadInput, match="not a run folder"):
        Store.open(tmp_path / "nothing")


def test_copy_from_refuses_overlap(tmp_path: Path) -> None:
    with Store.open(tmp_path / "a", write=True) as a:
        a.put(_pred("h1"))
    with Store.open(tmp_path / "m", write=True) as m:
        assert m.copy_from(tmp_path / "a" / "store.sqlite") == 1
        with pytest.raises(WorkFailed):
            m.copy_from(tmp_path / "a" / "store.sqlite")
        assert m.count() == 1


def test_wal_is_checkpointed_by_the_background_thread(tmp_path: Path) -> None:
    """The writer never checkpoints on commit (``wal_autocheckpoint = 0``); the checkpointer thread copies
    committed pages into the database file while the writer goes on, and closing leaves no WAL."""
    import time

    db = tmp_path / "store.sqlite"
    st = Store.open(tmp_path, write=True)
    try:
        assert st._conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
        size0 = db.stat().st_size
        st.put_many([Row(_pred(f"h{i}", item=f"i{i}", raw="x" * 500)) for i in range(400)])  # ~200 KB of rows
        deadline = time.monotonic() + 10
        while db.stat().st_size <= size0 + 100_000 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert db.stat().st_size > size0 + 100_000  # the rows reached the database file without a commit doing it
        st.put(_pred("late", item="late"))  # the writer still commits after a checkpoint
    finally:
        st.close()
    assert not (tmp_path / "store.sqlite-wal").exists()
    with Store.open(tmp_path) as ro:
        assert ro.count() == 401


# the schema of a version-1 store (before finish_reason / reasoning), as medr2 wrote it
_V1_SCHEMA = """
CREATE TABLE predictions (
  request_hash TEXT PRIMARY KEY, item_id TEXT NOT NULL, mode TEXT NOT NULL, model_key TEXT NOT NULL,
  step INTEGER, chain_id TEXT, raw TEXT, status TEXT NOT NULL CHECK (status IN ('ok', 'error')), error TEXT,
  latency_s REAL, prompt_tokens INTEGER, completion_tokens INTEGER, attempts INTEGER NOT NULL DEFAULT 1,
  created_at REAL NOT NULL, meta TEXT NOT NULL DEFAULT '{}', request TEXT);
CREATE UNIQUE INDEX predictions_item_mode ON predictions (item_id, mode);
CREATE TABLE store_info (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO store_info VALUES ('schema_version', '1');
INSERT INTO predictions (request_hash, item_id, mode, model_key, raw, status, created_at)
  VALUES ('h-old', 'i-old', 'independent', 'm', 'B', 'ok', 1.0);
"""


def _v1_store(run: Path) -> None:
    run.mkdir(parents=True)
    con = sqlite3.connect(run / "store.sqlite")
    con.executescript(_V1_SCHEMA)
    con.commit()
    con.close()


def test_version1_store_reads_and_migrates(tmp_path: Path) -> None:
    """A store written before finish_reason/reasoning existed opens read-only as it is (the new fields read as
    None) and gains the columns when opened to write; its rows are kept."""
    run = tmp_path / "run"
    _v1_store(run)
    with Store.open(run) as st:
        (old,) = list(st.iter_predictions())
        assert (old.prediction.raw, old.prediction.finish_reason, old.prediction.reasoning) == ("B", None, None)
        (batch,) = list(st.counted_rows())
        assert (batch.item_id, batch.mode, batch.status, batch.raw, batch.finish_reason, batch.reasoning) == (
            ("i-old",), ("independent",), ("ok",), ("B",), (None,), (None,))
        assert st.get("h-old") is not None
    con = sqlite3.connect(run / "store.sqlite")
    # reading changed nothing
    assert "finish_reason" not in {r[1] for r in con.execute("PRAGMA table_info(predictions)")}
    con.close()
    with Store.open(run, write=True) as st:
        st.put(Prediction(model_key="m", item_id="i-new", mode="independent", request_hash="h-new", raw="",
                          status="ok", finish_reason="length", reasoning="thinking..."))
    con = sqlite3.connect(run / "store.sqlite")
    cols = {r[1] for r in con.execute("PRAGMA table_info(predictions)")}
    version = con.execute("SELECT value FROM store_info WHERE key = 'schema_version'").fetchone()[0]
    rows = con.execute("SELECT request_hash, finish_reason, reasoning FROM predictions ORDER BY rowid").fetchall()
    con.close()
    assert {"finish_reason", "reasoning", "confidence"} <= cols and version == SCHEMA_VERSION == "3"
    assert rows == [("h-old", None, None), ("h-new", "length", "thinking...")]
    # a merge from an old shard into a new store reads the missing columns as NULL
    old2 = tmp_path / "old2"
    _v1_store(old2)
    with Store.open(tmp_path / "merged", write=True) as st:
        assert st.copy_from(old2 / "store.sqlite") == 1
        assert st.get("h-old").prediction.finish_reason is None  # type: ignore[union-attr]


def test_out_of_range_token_counts_are_stored_as_null_with_a_note(tmp_path: Path) -> None:
    """A hostile 10**20 from any adapter must not raise OverflowError (which would fail every resume)."""
    with Store.open(tmp_path, write=True) as st:
        st.put(Prediction(model_key="m", item_id="i", mode="independent", request_hash="h", raw="A", status="ok",
                          prompt_tokens=10**20, completion_tokens=7))
        row = st.get("h")
    assert row is not None
    assert (row.prediction.prompt_tokens, row.prediction.completion_tokens) == (None, 7)
    assert any("21-digit number" in n for n in row.meta["notes"])


def test_huge_answer_is_stored_whole(tmp_path: Path) -> None:
    raw = "A " + "x" * (50 << 20)
    with Store.open(tmp_path, write=True) as st:
        st.put(Prediction(model_key="m", item_id="i", mode="independent", request_hash="h", raw=raw, status="ok"))
        row = st.get("h")
    assert row is not None and row.prediction.raw == raw


def test_confidence_round_trips_and_old_rows_have_none(tmp_path: Path) -> None:
    """Schema 3 (issue 45): a prediction's confidence is stored as JSON and read back equal; a version-1 store
    opened to write gains the column and its old rows read as no confidence."""
    from medr2.records import Confidence

    run = tmp_path / "run"
    _v1_store(run)
    conf = Confidence(source="logprobs", probs={"A": 0.75, "B": 0.25})
    pred = Prediction(model_key="m", item_id="i-new", mode="independent", request_hash="h-new", raw="A",
                      status="ok", confidence=conf)
    with Store.open(run, write=True) as st:
        st.put(pred)
    with Store.open(run) as st:
        got = {p.prediction.request_hash: p.prediction.confidence for p in st.iter_predictions()}
    assert got == {"h-old": None, "h-new": conf}


def _annotation_types(hint: object) -> list[object]:
    """Every type named in an annotation (``Iterator[CountedBatch]`` -> Iterator, CountedBatch), and the types of
    the fields of each row type defined next to the store (its batches and rows), recursively."""
    import dataclasses
    import typing

    from medr2.run import store as store_module

    out: list[object] = []
    todo, seen = [hint], set()
    while todo:
        t = todo.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        origin = typing.get_origin(t)
        out.append(origin if origin is not None else t)
        todo.extend(typing.get_args(t))
        if dataclasses.is_dataclass(t) and getattr(t, "__module__", None) == store_module.__name__:
            todo.extend(typing.get_type_hints(t).values())
    return out


def test_store_reads_return_named_values_never_positional_tuples() -> None:
    """Issue 38: nothing leaves the store as a positional tuple (read by ``r[0]`` ... ``r[7]`` in another package).
    Every public method of ``Store`` is enumerated (a new one too): its return annotation names no ``tuple`` and
    no ``Any``, and the row types it returns (defined in ``medr2.run.store``) are frozen dataclasses whose fields
    name no tuple either (a batch by column: ``CountedBatch``, ``ModeCounts``, ``RowKeys``)."""
    import dataclasses
    import typing

    from medr2.run import store as store_module

    methods = {n: getattr(v, "__func__", v) for n, v in vars(Store).items() if not n.startswith("_")
               and callable(getattr(v, "__func__", v))}
    assert {"counted_rows", "modes_per_item", "item_rows", "iter_predictions", "get_item", "open"} <= set(methods)
    for name, fn in methods.items():
        hint = typing.get_type_hints(fn, localns=vars(store_module))["return"]
        types = _annotation_types(hint)
        assert tuple not in types and typing.Any not in typing.get_args(hint) and hint is not typing.Any, (name, hint)
        for t in types:
            if dataclasses.is_dataclass(t) and getattr(t, "__module__", None) == store_module.__name__:
                assert t.__dataclass_params__.frozen, (name, t)  # type: ignore[union-attr]


def test_a_counted_batch_keeps_the_rows_asked_for(tmp_path: Path) -> None:
    """``CountedBatch.where``: the kept rows, every column aligned (what scoring does with rows of unknown items)."""
    with Store.open(tmp_path, write=True) as st:
        st.put_many([Row(_pred(f"h{k}", item=f"i{k}", raw=f"A{k}")) for k in range(5)])
        (batch,) = list(st.counted_rows())
    assert batch.where([True] * 5) is batch
    kept = batch.where([k % 2 == 0 for k in range(5)])
    assert (list(kept.item_id), list(kept.raw), len(kept)) == (["i0", "i2", "i4"], ["A0", "A2", "A4"], 3)
    assert list(kept.first) == [batch.first[0], batch.first[2], batch.first[4]]
