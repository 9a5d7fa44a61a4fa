"""Clinician review (``medr2 review``, docs/review.md) without a browser: the reviews file (append-only, committed
per review, refused values named), what reviews come to (generated sequences of reviews and adjudications: a
reviewer's later review replaces the earlier, an adjudication decides, a selection read through recorded row ids
is the selection of that moment), agreement (Cohen's κ as scikit-learn computes it, with its interval), fixed
items (new ids, the parent recorded), ``--reviewed accepted`` through ``eval``, ``score`` and ``export``, the
review block of ``info`` and of the dataset card, the review routes' security over real HTTP, and a server killed
mid-review losing no saved review."""

from __future__ import annotations

import http.client
import json
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import medr2
from medr2 import BadInput, Item, Request, Response
from medr2.bench.reviews import (
    REASONS,
    REVIEWS_FILE,
    ReviewStore,
    Through,
    check_fix,
    fixed_item,
    read_reviews,
    reviewed_selection,
    reviews_path,
)
from medr2.records import item_content_id
from medr2.viewer.review import REVIEW_ROUTES
from medr2.viewer.server import APP_STATE, SECURITY_HEADERS
from tests.run_fixtures import make_bench

REVIEWERS = ("ana", "ben", "chi")


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("review") / "bench"
    make_bench(root, n_cases=4)
    return root


@pytest.fixture(scope="module")
def items(bench: Path) -> list[Item]:
    return list(medr2.load_bench(bench).items)


def _copy(bench: Path, tmp: Path) -> Path:
    import shutil

    out = tmp / "bench"
    shutil.copytree(bench, out)
    return out


# -- the store -------------------------------------------------------------------------------------------------


def test_rows_are_append_only_and_committed(bench: Path, items: list[Item], tmp_path: Path) -> None:
    root = _copy(bench, tmp_path)
    tables = {p.name: p.read_bytes() for p in root.glob("*.parquet")}
    store = ReviewStore(root)
    first = store.add("reviews", "ana", items[0].item_id, "accept", "", {})
    store.add("reviews", "ana", items[0].item_id, "reject", "wrong answer", {}, "second thoughts")
    # another connection sees both rows at once (committed before add returned)
    conn = sqlite3.connect(root / "reviews.sqlite")
    try:
        rows = conn.execute("SELECT id, reviewer, verdict, reason, note FROM reviews ORDER BY id").fetchall()
        assert rows == [(first, "ana", "accept", "", ""), (first + 1, "ana", "reject", "wrong answer",
                                                               "second thoughts")]
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        for sql in ("UPDATE reviews SET verdict = 'accept'", "DELETE FROM reviews"):
            with pytest.raises(sqlite3.DatabaseError, match="append-only"):
                conn.execute(sql)
    finally:
        conn.close()
    # the latest row of a reviewer counts; both stay
    got = read_reviews(root)
    assert len(got.reviews) == 2 and got.outcomes()[items[0].item_id].status == "reject"
    assert {p.name: p.read_bytes() for p in root.glob("*.parquet")} == tables  # items.parquet never rewritten


@pytest.mark.parametrize(("args", "field"), [
    (("reviews", " ", "x", "accept", "", {}), "reviewer"),
    (("reviews", "a\x1b[31m", "x", "accept", "", {}), "reviewer"),
    (("reviews", "a" * 65, "x", "accept", "", {}), "reviewer"),
    (("adjudications", "", "x", "accept", "", {}), "adjudicator"),
    (("reviews", "ana", "x", "maybe", "", {}), "verdict"),
    (("reviews", "ana", "x", "reject", "", {}), "reason"),
    (("reviews", "ana", "x", "fix", "made up", {"question": "q"}), "reason"),
    (("reviews", "ana", "x", "fix", "other", {}), "edits"),
    (("reviews", "ana", "x", "accept", "", {"question": "q"}), "edits"),
])
def test_a_bad_value_is_refused_naming_its_field(tmp_path: Path, args: tuple[Any, ...], field: str) -> None:
    with pytest.raises(BadInput) as e:
        ReviewStore(tmp_path).add(*args)
    assert e.value.field == field
    assert not (tmp_path / "reviews.sqlite").exists() or not read_reviews(tmp_path).reviews


# -- what reviews come to, over generated sequences -------------------------------------------------------------

_ACTION = st.tuples(st.sampled_from(("review", "review", "review", "adjudicate")), st.sampled_from(REVIEWERS),
                    st.integers(0, 3), st.sampled_from(("accept", "fix", "reject")), st.sampled_from(("Q1", "Q2")))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(actions=st.lists(_ACTION, min_size=1, max_size=14))
def test_outcomes_follow_the_rules_and_a_recorded_snapshot_reads_again(items: list[Item], actions: list[Any]) -> None:
    mcq = [it for it in items if it.form == "mcq"][:4]
    by_id = {it.item_id: it for it in mcq}

    def parents(ids: set[str]) -> dict[str, Item]:
        return {i: by_id[i] for i in ids if i in by_id}

    with tempfile.TemporaryDirectory() as tmp:
        store = ReviewStore(tmp)
        snapshots: list[tuple[Through, Any]] = []
        latest: dict[str, dict[str, tuple[str, str]]] = {}
        decided: dict[str, str] = {}
        for kind, who, k, verdict, q in actions:
            it = mcq[k]
            edits = check_fix(it, {"question": q}) if verdict == "fix" else {}
            reason = "" if verdict == "accept" else REASONS[0]
            if kind == "review":
                store.add("reviews", who, it.item_id, verdict, reason, edits)
                latest.setdefault(it.item_id, {})[who] = (verdict, q if verdict == "fix" else "")
            else:
                store.add("adjudications", who, it.item_id, verdict, reason, edits)
                decided[it.item_id] = verdict
            sel = reviewed_selection(tmp, "accepted", parents=parents)
            snapshots.append((sel.through, sel))
        outcomes = read_reviews(tmp).outcomes()
        for item_id, o in outcomes.items():
            if item_id in decided:
                assert o.status == decided[item_id]
            else:
                views = set(latest[item_id].values())
                assert o.status == (next(iter(views))[0] if len(views) == 1 else "disputed")
        assert set(outcomes) == set(latest) | set(decided)
        # the selection: the accepted items, and an item per settled fix (its parent left out) with the fix's text
        sel = snapshots[-1][1]
        assert sel.accepted == {i for i, o in outcomes.items() if o.status == "accept"}
        assert {it.parent_id for it in sel.fixed} == {i for i, o in outcomes.items() if o.status == "fix"}
        assert not sel.skipped and all(it.parent_id not in sel.item_ids for it in sel.fixed)
        for it in sel.fixed:
            assert it.question == outcomes[it.parent_id].edits["question"]
            assert it.item_id == fixed_item(by_id[it.parent_id], {"question": it.question}).item_id
        # the selection recorded at each step is computed again, exactly, from its row ids
        for through, recorded in snapshots:
            assert reviewed_selection(tmp, "accepted", through, parents=parents) == recorded


@settings(max_examples=60, deadline=None)
@given(pairs=st.lists(st.tuples(st.sampled_from(("accept", "fix", "reject")),
                                 st.sampled_from(("accept", "fix", "reject"))), min_size=2, max_size=40))
def test_kappa_is_cohens_and_its_interval_holds_it(pairs: list[tuple[str, str]]) -> None:
    from sklearn.metrics import cohen_kappa_score

    from medr2.scoring.judge import agreement_cells

    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    cells = agreement_cells(a, b, n_resamples=200, seed=1)
    k = cells["kappa"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = cohen_kappa_score(a, b)
    if k["value"] is None:
        assert len(set(a) | set(b)) == 1  # chance agreement 1: κ undefined
    else:
        assert k["value"] == pytest.approx(expected, abs=1e-12)
        assert k["lo"] is not None and k["hi"] is not None and -1 <= k["lo"] <= k["hi"] <= 1
    assert k["n"] == len(pairs) and cells["agreement"]["value"] == pytest.approx(
        sum(x == y for x, y in pairs) / len(pairs))


def test_agreement_is_per_task_and_pair(bench: Path, items: list[Item], tmp_path: Path) -> None:
    from medr2.scoring.reviews import review_summary

    root = _copy(bench, tmp_path)
    store = ReviewStore(root)
    for k, it in enumerate(items):
        store.add("reviews", "ana", it.item_id, "accept", "", {})
        verdict = "reject" if k % 3 == 0 else "accept"
        store.add("reviews", "ben", it.item_id, verdict, "" if verdict == "accept" else "other", {})
    s = review_summary(root, resamples=100)
    assert s is not None and s["reviewed"] == len(items) and s["reviewed_share"] == 1.0
    by_task: dict[str, int] = {}
    for it in items:
        by_task[it.task] = by_task.get(it.task, 0) + 1
    assert {r["task"]: r["kappa"]["n"] for r in s["agreement"]} == by_task
    assert {(r["a"], r["b"]) for r in s["agreement"]} == {("ana", "ben")}
    assert s["queue"] == s["outcomes"]["disputed"] == sum(1 for k in range(len(items)) if k % 3 == 0)


# -- fixes ----------------------------------------------------------------------------------------------------


def test_a_fix_is_a_new_item_with_its_parent(items: list[Item]) -> None:
    by_form = {it.form: it for it in items}
    mcq, box, yesno = by_form["mcq"], by_form["box"], by_form["yesno"]
    other = "b" if mcq.answer != "B" else "a"
    edits = check_fix(mcq, {"question": " Which modality? ", "options": [*mcq.options, "PET"], "answer": other})
    assert edits["question"] == "Which modality?" and edits["answer"] == other.upper()
    assert "answer" not in check_fix(mcq, {"question": "Q?", "answer": mcq.answer.lower()})  # unchanged: dropped
    new = fixed_item(mcq, edits)
    assert new.parent_id == mcq.item_id and new.item_id != mcq.item_id and new.options[-1] == "PET"
    assert new.item_id == item_content_id(new.model_dump(mode="json"))  # the content id of what it is
    assert fixed_item(mcq, edits).item_id == new.item_id  # the same fix, the same id
    assert fixed_item(mcq, {"question": "Another?"}).item_id != new.item_id
    assert box.answer_box is not None and box.image_width is not None
    moved = check_fix(box, {"answer_box": [1, 1, 5, 5]})
    assert fixed_item(box, moved).answer_box == (1.0, 1.0, 5.0, 5.0)
    for it, bad, field in ((mcq, {"answer": "Z"}, "answer"), (mcq, {"options": ["only"]}, "options"),
                           (yesno, {"answer": "maybe"}, "answer"), (mcq, {"question": mcq.question}, "edits"),
                           (box, {"answer_box": [5, 5, 1, 1]}, "answer_box"),
                           (box, {"answer_box": [0, 0, box.image_width + 10, 5]}, "answer_box"),
                           (mcq, {"answer_box": [0, 0, 1, 1]}, "answer_box"), (mcq, {"split": "train"}, "split")):
        with pytest.raises(BadInput) as e:
            check_fix(it, bad)
        assert e.value.field == field


# -- --reviewed accepted: eval, score, export; info and the dataset card ------------------------------------------


def _oracle(bench: Path) -> Any:
    by_id = {it.item_id: it for it in medr2.load_bench(bench).items}

    def model(request: Request) -> str | Response:
        it = by_id[request.item_id]
        if it.form == "box":
            return Response(status="ok", text=json.dumps(list(it.answer_box or [])))
        return it.answer

    return model


def _review_half(root: Path, items: list[Item]) -> tuple[set[str], set[str]]:
    """ana and ben review every other item: agree on accept, agree on reject, or disagree (disputed)."""
    store = ReviewStore(root)
    accepted, disputed = set(), set()
    for k, it in enumerate(items[::2]):
        kind = k % 3
        store.add("reviews", "ana", it.item_id, "reject" if kind == 1 else "accept", "other" if kind == 1 else "", {})
        store.add("reviews", "ben", it.item_id, "accept" if kind != 1 else "reject", "" if kind != 1 else "other", {})
        if kind == 2:
            store.add("reviews", "ben", it.item_id, "fix", "wrong answer", _some_fix(it))
            disputed.add(it.item_id)
        elif kind == 0:
            accepted.add(it.item_id)
    return accepted, disputed


def _some_fix(it: Item) -> dict[str, Any]:
    return check_fix(it, {"question": it.question + " (edited)"})


def test_eval_and_score_use_only_accepted_items(bench: Path, items: list[Item], tmp_path: Path) -> None:
    root = _copy(bench, tmp_path)
    with pytest.raises(BadInput) as e:
        medr2.evaluate(root, _oracle(root), tmp_path / "none", split="all", reviewed="accepted", command=["t"])
    assert e.value.field == "--reviewed"  # no reviews yet
    accepted, disputed = _review_half(root, items)
    run = tmp_path / "run"
    medr2.evaluate(root, _oracle(root), run, split="all", reviewed="accepted", command=["t"])
    manifest = json.loads((run / "manifest.json").read_text("utf-8"))
    assert manifest["invocations"][0]["reviewed"]["status"] == "accepted"
    # reviews added after the eval do not change its recorded plan
    store = ReviewStore(root)
    for it in items[1::2][:3]:
        store.add("reviews", "ana", it.item_id, "accept", "", {})
    store.add("adjudications", "chi", next(iter(disputed)), "accept", "", {})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an incomplete run would warn
        metrics = medr2.score(run, mixed_splits=True, resamples=0)
    scored = set(pq.read_table(run / "scores.parquet", columns=["item_id"]).column(0).to_pylist())
    assert scored == accepted and metrics["complete"] is True
    with pytest.raises(BadInput) as e:
        medr2.evaluate(root, _oracle(root), tmp_path / "r2", split="all", reviewed="everything", command=["t"])
    assert e.value.field == "--reviewed"


def test_export_uses_only_accepted_train_items(bench: Path, items: list[Item], tmp_path: Path) -> None:
    from medr2.train.dataset import IDS_FILE
    from medr2.train.source import NOT_ACCEPTED

    root = _copy(bench, tmp_path)
    accepted, _ = _review_half(root, items)
    m = medr2.export(root, "llamafactory", tmp_path / "out", reviewed="accepted")
    exported = {i for line in (tmp_path / "out" / IDS_FILE).read_text("utf-8").splitlines()
                for i in json.loads(line)["item_ids"]}
    train_clean = {it.item_id for it in items if it.split == "train" and it.variant == "clean"}
    assert exported and exported <= accepted & train_clean
    assert m["reviewed"]["status"] == "accepted"
    assert m["skipped"][NOT_ACCEPTED] == sum(1 for it in items if it.split == "train" and it.item_id not in accepted)


_SELECTION = st.fixed_dictionaries({}, optional={
    "split": st.sampled_from(("all", "train", "test")), "variants": st.sampled_from((("clean",), ("V8",), ("all",))),
    "tasks": st.sampled_from((("s1.modality",), ("s3.lesion_box", "s4.diagnosis"))),
    "limit": st.integers(1, 30), "shard": st.sampled_from(((0, 2), (1, 2), (2, 3)))})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(picks=st.lists(st.tuples(st.integers(0, 10_000), st.sampled_from(("Q1?", "Q2?"))), max_size=6),
       sel=_SELECTION, keep=st.integers(0, 3))
def test_every_read_of_the_table_gives_the_added_items(bench: Path, items: list[Item], picks: list[Any],
                                                        sel: dict[str, Any], keep: int) -> None:
    """``BenchTable.add_items`` (the fixed items under ``--reviewed accepted``): every read of the table, over
    generated fixes and selections, gives what the same read of the records plus the added ones gives (read in
    memory, or through the same API over them held as one table)."""
    from medr2.bench.select import select_items
    from medr2.bench.table import BenchTable, ItemFilter

    added = list({f.item_id: f for f in (fixed_item(items[k % len(items)], {"question": q})
                                          for k, q in picks)}.values())
    every = [*items, *added]
    ids = frozenset(it.item_id for k, it in enumerate(every) if k % 4 != keep)  # an item-id filter, as --reviewed
    table = BenchTable.open(bench, image_hashes=False)
    table.add_items(added)
    held = BenchTable.held(bench, table.manifest, every)
    try:
        for item_ids in (None, ids):
            want = list(select_items(held, item_ids=item_ids, **sel))
            got = select_items(table, item_ids=item_ids, **sel)
            assert len(got) == len(want) and list(got) == want
        flt = ItemFilter(split=None if sel.get("split", "all") == "all" else sel["split"], item_ids=ids,
                         tasks=frozenset(sel["tasks"]) if "tasks" in sel else None)
        want_items = [it for it in every if flt.matches(it)]
        assert list(table.iter_items(flt)) == want_items
        assert list(table.iter_items_held(flt, hold_rows=3, record_rows=2)) == want_items
        assert table.count(flt) == len(want_items) and table.count() == len(every)
        assert table.value_counts("task", flt) == dict(Counter(it.task for it in want_items))
        assert [i for cols in table.column_values(["item_id"], flt) for i in cols["item_id"]] == \
            [it.item_id for it in want_items]
        assert table.items_by_id(ids) == {it.item_id: it for it in every if it.item_id in ids}
        scanned = list(table.column_batches(["item_id", "question"], read_dictionary=["question"], batch_rows=3))
        assert all(pa.types.is_dictionary(b.schema.field("question").type) and b.num_rows <= 3 for b in scanned)
        assert [(i, q) for b in scanned for i, q in zip(b.column(0).to_pylist(), b.column(1).to_pylist(),
                                                        strict=True)] == [(it.item_id, it.question) for it in every]
    finally:
        table.close()


@pytest.mark.parametrize("fix_id", ["0" * 16, "f" * 16])
def test_a_fixed_chain_step_stands_for_its_parent(items: list[Item], fix_id: str) -> None:
    """Whatever the order of the ids, a chain's earlier step is the fix of that step where one is read."""
    from medr2.run.runner import ChainIndex

    last = max((it for it in items if it.chain_id and it.variant == "clean"), key=lambda it: it.step or 0)
    chain = [it for it in items if it.chain_id == last.chain_id]
    first = next(it for it in chain if it.step == 1 and it.variant == "clean")
    fix = fixed_item(first, {"question": "Which modality is this?"}).model_copy(update={"item_id": fix_id})
    earlier = ChainIndex([*chain, fix]).earlier(last)
    assert earlier[0].item_id == fix_id and first.item_id not in {e.item_id for e in earlier}
    assert [e.item_id for e in ChainIndex(chain).earlier(last)][0] == first.item_id


def _review_with_fixes(root: Path, items: list[Item]) -> tuple[set[str], dict[str, Item]]:
    """Accepts, an agreed fix of a train mcq item's answer key (and its question), an adjudicated fix of a box,
    and an agreed fix of an item no longer in the bench. Returns the accepted ids and the fixed items (by id)
    as :func:`fixed_item` makes them from their parents."""
    store = ReviewStore(root)
    mcq = next(it for it in items if it.form == "mcq" and it.split == "train" and it.variant == "clean")
    box = next(it for it in items if it.form == "box" and it.case_id != mcq.case_id)
    accepted = {it.item_id for it in items if it.variant == "clean" and it.form in ("yesno", "multi")}
    for iid in sorted(accepted):
        for who in ("ana", "ben"):
            store.add("reviews", who, iid, "accept", "", {})
    key = check_fix(mcq, {"answer": "ABCD"[("ABCD".index(mcq.answer) + 1) % len(mcq.options)],
                          "question": mcq.question + " (fixed)"})
    for who in ("ana", "ben"):
        store.add("reviews", who, mcq.item_id, "fix", "wrong answer", key)
    assert box.answer_box is not None
    x1, y1, x2, y2 = box.answer_box
    moved = check_fix(box, {"answer_box": [x1 + 2, y1 + 1, x2 - 3, y2 - 2]})
    store.add("reviews", "ana", box.item_id, "accept", "", {})
    store.add("reviews", "ben", box.item_id, "fix", "wrong or missing box", moved)
    store.add("adjudications", "chi", box.item_id, "fix", "wrong or missing box", moved)
    for who in ("ana", "ben"):  # a fix of an item this bench does not hold (a rebuilt bench)
        store.add("reviews", who, "gone-" + mcq.item_id, "fix", "other", {"question": "Which?"})
    fixed = {f.item_id: f for f in (fixed_item(mcq, key), fixed_item(box, moved))}
    return accepted, fixed


def _answers_the_fixed_key(root: Path, fixed: dict[str, Item]) -> Any:
    """A scripted model that gives each item's key: a fixed item's edited key (its parent's key is wrong)."""
    by_id = {it.item_id: it for it in medr2.load_bench(root).items} | fixed

    def model(request: Request) -> str | Response:
        it = by_id[request.item_id]
        if it.form == "box":
            return Response(status="ok", text=json.dumps(list(it.answer_box or [])))
        return it.answer

    return model


def test_settled_fixes_are_evaluated_exported_scored_and_reported(bench: Path, items: list[Item],
                                                                   tmp_path: Path) -> None:
    from medr2.bench.reviews import PARENT_MISSING
    from medr2.train.dataset import IDS_FILE

    root = _copy(bench, tmp_path)
    accepted, fixed = _review_with_fixes(root, items)
    parents = {f.parent_id for f in fixed.values()}
    run = tmp_path / "run"
    medr2.evaluate(root, _answers_the_fixed_key(root, fixed), run, split="all", reviewed="accepted", command=["t"])
    rec = json.loads((run / "manifest.json").read_text("utf-8"))["invocations"][0]["reviewed"]
    assert rec["fixed"] == 2 and rec["fixes_skipped"] == {PARENT_MISSING: 1}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an incomplete run would warn
        metrics = medr2.score(run, mixed_splits=True, resamples=0)
    assert metrics["complete"] is True
    scores = pq.read_table(run / "scores.parquet", columns=["item_id", "verdict", "iou"]).to_pylist()
    by_item = {r["item_id"]: r for r in scores}
    assert set(by_item) == accepted | set(fixed)  # the fixed items asked, their parents not
    assert not parents & set(by_item)
    for iid in fixed:
        assert by_item[iid]["verdict"] == "correct"  # scored against the fixed key and box
    box_id = next(i for i, f in fixed.items() if f.form == "box")
    assert by_item[box_id]["iou"] == pytest.approx(1.0)
    # the same run scored against the parents' keys would be wrong: the fix's key differs from its parent's
    mcq_fix = next(f for f in fixed.values() if f.form == "mcq")
    assert mcq_fix.answer != next(it for it in items if it.item_id == mcq_fix.parent_id).answer
    # a bench already loaded (its records in memory) asks the same items
    run2 = tmp_path / "run-loaded"
    medr2.evaluate(root, _answers_the_fixed_key(root, fixed), run2, split="all", reviewed="accepted", command=["t"],
                   loaded=medr2.load_bench(root))
    assert medr2.score(run2, mixed_splits=True, resamples=0)["complete"] is True
    assert sorted(r["item_id"] for r in pq.read_table(run2 / "scores.parquet", columns=["item_id"]).to_pylist()) \
        == sorted(by_item)
    # in a chain, a fixed step stands for its parent: the earlier steps asked (and counted complete) are the fixes
    run3 = tmp_path / "run-chain"
    medr2.evaluate(root, _answers_the_fixed_key(root, fixed), run3, split="all", reviewed="accepted", command=["t"],
                   mode="chain-gold")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert medr2.score(run3, mixed_splits=True, resamples=0)["complete"] is True
    chain_ids = {r["item_id"] for r in pq.read_table(run3 / "scores.parquet", columns=["item_id"]).to_pylist()}
    assert set(fixed) <= chain_ids and not parents & chain_ids
    # the scored table (the items held in memory, not spilled) joins them too
    from medr2.scoring.scorer import load_table

    tidy = load_table(run)
    assert set(fixed) <= set(tidy["item_id"]) and not parents & set(tidy["item_id"])
    # the report and the viewer find the fixed items (the run's recorded selection, read after the bench's rows)
    from medr2.reporting.inputs import load_run
    from medr2.reporting.write import load_benches

    bench_items, _, _ = load_benches([load_run(run)])
    assert set(bench_items.fetch(fixed)) == set(fixed)
    index = medr2.report(run, tmp_path / "report").read_text("utf-8")
    assert all(iid in index for iid in fixed)  # the browser's rows name them
    # export: the fixed train item is written, its parent is not
    m = medr2.export(root, "llamafactory", tmp_path / "out", reviewed="accepted")
    exported = {i for line in (tmp_path / "out" / IDS_FILE).read_text("utf-8").splitlines()
                for i in json.loads(line)["item_ids"]}
    assert mcq_fix.item_id in exported and mcq_fix.parent_id not in exported
    assert exported <= accepted | set(fixed) and m["reviewed"]["fixed"] == 2
    # info counts the fixes, and the one whose parent the bench no longer holds, with its reason
    info = medr2.info(root)["reviews"]
    assert info["fixes"] == {"items": 2, "skipped": {PARENT_MISSING: 1}}
    out = subprocess.run([sys.executable, "-m", "medr2", "info", str(root)], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert f"1 left out: {PARENT_MISSING}" in out
    # the review's start page lists the fixed items (as --reviewed accepted asks them) and the fix left out
    server = medr2.review(root, port=0, block=False)
    try:
        parts = urlsplit(server.url)
        conn = http.client.HTTPConnection(str(parts.hostname), parts.port, timeout=30)
        conn.request("GET", "/", headers={"Host": parts.netloc})
        page = conn.getresponse().read().decode("utf-8")
        conn.close()
    finally:
        server.stop()
    assert all(iid in page for iid in fixed) and f"1 ({PARENT_MISSING})" in page


def test_info_and_the_dataset_card_show_the_review(bench: Path, items: list[Item], tmp_path: Path) -> None:
    root = _copy(bench, tmp_path)
    assert "reviews" not in medr2.info(root)
    _review_half(root, items)
    info = medr2.info(root)["reviews"]
    n = len(items[::2])
    assert info["reviewed"] == n and info["reviewed_share"] == pytest.approx(n / len(items))
    assert info["acceptance_rate"] == pytest.approx(info["outcomes"]["accept"] /
                                                    (info["reviewed"] - info["outcomes"]["disputed"]))
    out = subprocess.run([sys.executable, "-m", "medr2", "info", str(root)], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert f"review: reviewed {n} of {len(items)} items" in out and "Cohen's κ" in out
    medr2.convert(root, "hf", tmp_path / "hf")
    card = (tmp_path / "hf" / "README.md").read_text("utf-8")
    assert "## Clinician review" in card and f"reviewed {n} of {len(items)} items" in card
    assert "acceptance rate" in card and "Cohen's κ" in card


# -- the review routes over real HTTP ---------------------------------------------------------------------------


class Served:
    def __init__(self, url: str, token: str, bench: Path) -> None:
        parts = urlsplit(url)
        assert parts.hostname == "127.0.0.1" and parts.port
        self.host, self.port, self.token, self.bench = parts.hostname, parts.port, token, bench

    def request(self, method: str, path: str, *, headers: dict[str, str] | None = None,
                form: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            body = urlencode(form).encode() if form is not None else None
            sent = {"Host": f"{self.host}:{self.port}", **(headers or {})}
            if body is not None:
                sent["Content-Type"] = "application/x-www-form-urlencoded"
            conn.request(method, path, body=body, headers=sent)
            r = conn.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read().decode("utf-8", "replace")
        finally:
            conn.close()


@pytest.fixture(scope="module")
def served(bench: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = _copy(bench, tmp_path_factory.mktemp("served"))
    server = medr2.review(root, port=0, block=False)
    try:
        from medr2.viewer.review import REVIEW

        app = server.runner.app
        assert app[REVIEW] is not None
        yield Served(server.url, app[APP_STATE]["token"], root)
    finally:
        server.stop()


def test_every_review_route_answers_with_the_security_headers(served: Served, items: list[Item]) -> None:
    sha = next(it.image_sha256 for it in items if it.image_sha256)
    for method, path, _ in REVIEW_ROUTES:
        concrete = (path.replace("{bench}", "0").replace("{name}", "review.css" if "static" in path else f"{sha}.png")
                    + ("?reviewer=ana" if path == "/review/item" else f"?id={items[0].item_id}"
                       if path == "/review/adjudicate" else ""))
        status, headers, _ = served.request(method, concrete)
        for k, v in SECURITY_HEADERS.items():
            assert headers.get(k.lower()) == v, (path, k)
        assert status == (403 if method == "POST" else 204 if path == "/favicon.ico" else 200), (method, path)


def test_a_write_needs_the_token_and_the_same_origin(served: Served, items: list[Item]) -> None:
    form = {"reviewer": "mallory", "item_id": items[0].item_id, "verdict": "accept", "reason": ""}
    before = len(read_reviews(served.bench).reviews)
    for headers, sent in (({}, form), ({}, {**form, "csrf": "wrong"}),
                          ({"Origin": "http://evil.example"}, {**form, "csrf": served.token})):
        status, _, _ = served.request("POST", "/review/item", headers=headers, form=sent)
        assert status == 403
    assert status == 403 and len(read_reviews(served.bench).reviews) == before
    status, headers, _ = served.request("POST", "/review/item", form={**form, "csrf": served.token})
    assert status == 303 and headers["location"] == "/review/item?reviewer=mallory"
    assert read_reviews(served.bench).reviews[-1].by == "mallory"
    status, _, _ = served.request("GET", "/", headers={"Host": "evil.example:80"})
    assert status == 403


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.text(st.characters(min_codepoint=0x20, max_codepoint=0x2FF, blacklist_characters="\x7f"),
                    min_size=1, max_size=20).filter(lambda s: s.strip()),
       note=st.sampled_from(['<script>alert(1)</script>', '"><img src=x onerror=alert(2)>', "a & b"]))
def test_a_typed_value_is_escaped_where_a_page_shows_it(served: Served, items: list[Item], name: str,
                                                        note: str) -> None:
    it = items[1]
    status, _, _ = served.request("POST", "/review/item", form={
        "csrf": served.token, "reviewer": name, "item_id": it.item_id, "verdict": "reject", "reason": "other",
        "note": note})
    assert status == 303
    for path in ("/", f"/review/adjudicate?{urlencode({'id': it.item_id})}",
                 f"/review/item?{urlencode({'reviewer': name, 'id': it.item_id})}"):
        status, _, html = served.request("GET", path)
        assert status == 200
        assert "<script>alert" not in html and "<img src=x" not in html
        if path == "/":
            from markupsafe import escape

            assert str(escape(name.strip())) in html


@pytest.mark.parametrize("path", ["/img/0/..%2Fmanifest.json", "/img/0/reviews.sqlite", "/img/1/x.png",
                                  "/img/0/" + "0" * 64 + ".png", "/static/..%2F..%2Fapi.py", "/review/item",
                                  "/review/adjudicate?id=nope"])
def test_no_route_reads_a_file_outside_the_bench_images(served: Served, path: str) -> None:
    status, _, body = served.request("GET", path)
    assert status in (400, 404) and "SQLite" not in body and "format_version" not in body


# -- a kill mid-review -------------------------------------------------------------------------------------------


def test_a_killed_server_loses_no_saved_review(bench: Path, items: list[Item], tmp_path: Path) -> None:
    root = _copy(bench, tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "medr2", "review", str(root), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    acked: list[tuple[str, str]] = []
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert url is not None, line
        parts = urlsplit(url.group())
        page = http.client.HTTPConnection(str(parts.hostname), parts.port, timeout=30)
        page.request("GET", "/")
        token = re.search(r'name="csrf-token" content="([^"]+)"', page.getresponse().read().decode())
        page.close()
        assert token is not None
        srv = Served(url.group(), token.group(1), root)
        stop = threading.Event()

        def post() -> None:  # reviews as fast as the server takes them, until the kill
            k = 0
            while not stop.is_set():
                it = items[k % len(items)]
                who = REVIEWERS[k % 2]
                try:
                    status, _, _ = srv.request("POST", "/review/item", form={
                        "csrf": srv.token, "reviewer": who, "item_id": it.item_id, "verdict": "accept",
                        "reason": "", "note": f"n{k}"})
                except (OSError, http.client.HTTPException):
                    return
                if status == 303:
                    acked.append((who, f"n{k}"))
                k += 1

        poster = threading.Thread(target=post)
        poster.start()
        deadline = time.monotonic() + 60
        while len(acked) < 20 and time.monotonic() < deadline:
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)  # mid-review: a request may be in flight
        proc.wait(timeout=30)
        stop.set()
        poster.join(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)
    assert len(acked) >= 20
    saved = {(r.by, r.note) for r in read_reviews(root).reviews}
    assert set(acked) <= saved  # every review the server answered for is on disk
    assert len(saved) - len(acked) <= 1  # at most the one in flight, committed before its answer was sent


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(junk=st.one_of(st.binary(min_size=1, max_size=4096), st.just(b"SQLite format 3\x00" + b"\x00" * 200)))
def test_a_damaged_reviews_file_is_bad_input_naming_it(bench: Path, items: list[Item], tmp_path: Path,
                                                         junk: bytes) -> None:
    """A reviews file that is not (or no longer) a database: every read and write of it is BadInput naming
    reviews.sqlite, never a traceback (the reviews store is one of the package's SQLite users, each gated)."""
    root = _copy(bench, Path(tempfile.mkdtemp(dir=tmp_path)))
    reviews_path(root).write_bytes(junk)
    with pytest.raises(BadInput) as e:
        read_reviews(root)
    assert REVIEWS_FILE in str(e.value)
    with pytest.raises(BadInput) as e:
        ReviewStore(root).add("reviews", "ana", items[0].item_id, "accept", "", {})
    assert REVIEWS_FILE in str(e.value)
