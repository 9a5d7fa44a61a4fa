"""``medr2 eval`` selects from the items table by columns (``BenchTable``, ``medr2.bench.select.select_items``): the
items each selection option asks for, in bench order; a loaded bench read through the same API over its records held
in memory (``Bench.table``) gives the same items, requests, store rows and manifest; on a bench written the way older
releases wrote it (unsorted, no column statistics) as on a new one."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from medr2 import BadInput, Item, ModelConfig
from medr2.bench.format import ITEMS_FILE, bench_checksum, load_bench
from medr2.bench.select import select_items, shard_index, stratified_ids
from medr2.bench.table import BenchTable, ItemFilter
from medr2.images import sha256_file
from medr2.run.order import group_by_case
from medr2.run.runner import EvalConfig, run_eval
from medr2.run.store import Store
from medr2.variant_id import variant_matches

SELECTIONS: list[dict[str, Any]] = [
    {},
    {"limit": 50},
    {"limit": 1},
    {"limit": 400, "shard": (1, 3)},
    {"shard": (0, 2)},
    {"split": "test"},
    {"variants": ("clean",)},
    {"variants": ("V8",), "split": "test"},
    {"variants": ("T1", "V9", "T2"), "limit": 120},
    {"tasks": ("s1.modality", "s3.lesion_box")},
    {"stages": (2,), "shard": (2, 3)},
    {"variants": ("nosuch",)},
    {"limit": 60, "stratify": ("task", "variant")},  # a stratified limit: the same sample by columns
    {"limit": 25, "stratify": ("variant",), "shard": (1, 2), "seed": 3},
    {"limit": 7, "stratify": ("stage", "form"), "split": "train", "tasks": ("s1.modality", "s2.organ_box")},
]


@pytest.fixture(scope="module", params=["sample", "fixture"])
def variant_bench(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample source built with text and visual variants (6 cases, all train: over 400 items under the
    answerability contracts, which drop tasks the sample cannot answer), and the run-test fixture bench
    (40 cases, train and test, chains, context turns, cues)."""
    out = tmp_path_factory.mktemp("columnar") / "bench"
    if request.param == "sample":
        from medr2.builder.pipeline import build_bench

        # every image stored: the tests below copy the bench file by file (tests/test_renders.py: deferred ones)
        build_bench("sample", out, seed=0, n_cases=6, variants="T1,T4,V8,V9", renders="stored")
    else:
        from tests.run_fixtures import make_bench

        make_bench(out, n_cases=40)
    return out


def _old_style(bench: Path, out: Path) -> Path:
    """A copy of ``bench`` whose items table is written as before sorted tables: the rows in reverse order,
    no column statistics, one row group per 64 rows (checksums updated, images hard-linked)."""
    out.mkdir()
    for name in ("cases.parquet", "manifest.json"):
        (out / name).write_bytes((bench / name).read_bytes())
    shutil.copytree(bench / "images", out / "images", copy_function=os.link)
    table = pq.read_table(bench / ITEMS_FILE)
    table = table.take(list(range(table.num_rows - 1, -1, -1)))
    pq.write_table(table, out / ITEMS_FILE, row_group_size=64, write_statistics=False, compression="zstd")
    m = json.loads((out / "manifest.json").read_text())
    m["checksums"]["items.parquet"] = sha256_file(out / ITEMS_FILE)
    m["checksums"]["bench"] = bench_checksum(m["checksums"]["items.parquet"], m["checksums"]["cases.parquet"])
    (out / "manifest.json").write_text(json.dumps(m))
    return out


def _accepted(it: Item, sel: dict[str, Any]) -> bool:
    """Whether the item passes the predicates of a selection (split, variants, tasks, stages)."""
    return (sel.get("split", "all") in ("all", it.split) and variant_matches(it.variant, sel.get("variants"))
            and it.task in sel.get("tasks", (it.task,)) and it.stage in sel.get("stages", (it.stage,)))


def _limited(pool: list[Item], sel: dict[str, Any]) -> set[str]:
    """The ids ``--limit`` keeps of ``pool`` (bench order): whole cases in order of first appearance up to the limit
    (at least one), or with ``--stratify`` the stratified sample of the pool."""
    if "limit" not in sel:
        return {it.item_id for it in pool}
    if "stratify" in sel:
        rows = [{"item_id": it.item_id, "parent_id": it.parent_id, **{k: getattr(it, k) for k in sel["stratify"]}}
                for it in pool]
        return stratified_ids(rows, sel["limit"], sel["stratify"], sel.get("seed", 0))
    per_case: dict[str, list[str]] = {}
    for it in pool:
        per_case.setdefault(it.case_id, []).append(it.item_id)
    kept: list[str] = []
    for ids in per_case.values():
        if kept and len(kept) + len(ids) > sel["limit"]:
            break
        kept += ids
    return set(kept)


def _refusal(every: list[Item], sel: dict[str, Any]) -> tuple[str, str] | None:
    """(option, message) of the refusal of a selection naming a variant, task or stage no item of ``every`` has."""
    if any(not any(variant_matches(it.variant, [w]) for it in every) for w in sel.get("variants", ())):
        return "--variants", "no variant of this bench matches"
    for option, column in (("--task", "task"), ("--stage", "stage")):
        if set(sel.get(f"{column}s", ())) - {getattr(it, column) for it in every}:
            return option, f"no {column} of this bench is"
    return None


@pytest.mark.parametrize("old", [False, True], ids=["sorted", "old-style"])
def test_each_selection_asks_what_its_options_say(variant_bench: Path, tmp_path: Path, old: bool) -> None:
    """Every selection of :data:`SELECTIONS` asks the items its predicates accept, limited (whole cases in bench order,
    or a stratified sample) and then sharded by case, in bench order (a case-limited selection case by case: cases in
    order of first appearance, each case's items in bench order), the same at each iteration; a variant the bench
    has not is refused naming ``--variants``. A loaded bench selected from through the same API over its records held
    in memory (``Bench.table``) asks the same items."""
    bench = _old_style(variant_bench, tmp_path / "old") if old else variant_bench
    loaded = load_bench(bench, image_hashes=False)
    table = BenchTable.open(bench, image_hashes=False)
    every = list(table.iter_items())  # bench order
    assert every == loaded.items and len(every) > 400 and len({it.variant for it in every}) >= 5
    for sel in SELECTIONS:
        refusal = _refusal(every, sel)
        if refusal is not None:  # a value this bench has not (e.g. T1 or stage 2 in the fixture)
            for source in (table, loaded.table()):
                with pytest.raises(BadInput, match=refusal[1]) as refused:
                    select_items(source, **sel)
                assert refused.value.field == refusal[0], sel
            continue
        got = select_items(table, **sel)
        kept = _limited([it for it in every if _accepted(it, sel)], sel)
        i, n = sel.get("shard", (0, 1))
        want = [it for it in every if it.item_id in kept and shard_index(it.case_id, n) == i]
        if "limit" in sel and "stratify" not in sel:
            want = group_by_case(want)
        assert len(got) == len(want) and list(got) == want, sel  # those records, in that order
        assert list(got) == want, sel  # and again (iterated once per mode)
        assert list(select_items(loaded.table(), **sel)) == want, sel  # the records held in memory: the same
    flt = ItemFilter(split="train", variants=("clean",))
    assert list(table.iter_items(flt)) == list(loaded.iter_items(flt))
    assert all(table.case(c.case_id) == c for c in loaded.cases)


@pytest.mark.parametrize("old", [False, True], ids=["sorted", "old-style"])
def test_held_stream_gives_the_items_of_the_streamed_one(variant_bench: Path, tmp_path: Path, old: bool) -> None:
    """``iter_items_held`` (the case order's cursors: a few rows held, no reader open between items) gives the
    items ``iter_items`` gives, in the same order, for every filter, however few rows it holds and however many row
    groups (64-row groups in the old-style copy) a filter spans."""
    bench = _old_style(variant_bench, tmp_path / "old") if old else variant_bench
    table = BenchTable.open(bench, image_hashes=False)
    filters = [None, ItemFilter(), ItemFilter(split="test"), ItemFilter(variant_ids=frozenset({"clean"})),
               ItemFilter(variants=("V8",), split="train"), ItemFilter(tasks=frozenset({"s1.modality"})),
               ItemFilter(variants=("nosuch",))]
    for flt in filters:
        want = list(table.iter_items(flt))
        for hold, per_record in ((1, 1), (7, 3), (64, 64), (1_024, 64)):
            assert list(table.iter_items_held(flt, hold_rows=hold, record_rows=per_record)) == want, (flt, hold)


def test_sorted_table_prunes_row_groups(variant_bench: Path) -> None:
    """The items table is sorted by split, variant and task with statistics on them: a filter on a variant
    code reads only the row groups that hold it (row groups of 64 rows here to see it on a small bench)."""
    from medr2.bench.format import write_bench

    loaded = load_bench(variant_bench)
    small = variant_bench.parent / "small-groups"
    write_bench(small, loaded.cases, loaded.items, {"name": "small"}, row_group_size=64)
    (small / "images").rmdir()
    shutil.copytree(variant_bench / "images", small / "images", copy_function=os.link)
    table = BenchTable.open(small)
    n_groups = table.items_file.num_row_groups
    flt = ItemFilter(variants=("V8",), split="train")
    picked = table.row_groups(flt)
    want = [it for it in loaded.items if it.split == "train" and it.variant.startswith("V8-")]
    assert want and sorted(it.item_id for it in table.iter_items(flt)) == sorted(it.item_id for it in want)
    assert len(picked) <= len(want) // 64 + 3 < n_groups  # only the groups holding the rows, give or take the ends


def _rows(run: Path) -> list[tuple[Any, ...]]:
    with Store.open(run) as st:
        rows = [(r.prediction.item_id, r.prediction.mode, r.prediction.request_hash, r.prediction.raw,
                 r.prediction.status, json.dumps(r.meta, sort_keys=True), json.dumps(r.request, sort_keys=True))
                for r in st.iter_predictions(with_request=True)]
    return sorted(rows)


def _manifest(run: Path) -> dict[str, Any]:
    m = json.loads((run / "manifest.json").read_text())
    for key in ("created_at", "updated_at"):
        m.pop(key, None)
    for inv in m["invocations"]:
        for key in ("started_at", "finished_at", "command"):
            inv.pop(key, None)
        inv["summary"].pop("seconds", None)
    return m


@pytest.mark.parametrize("sel", [{"limit": 150}, {"variants": ("clean", "V8"), "shard": (0, 2)}],
                         ids=["limit", "variants-shard"])
def test_eval_streamed_equals_loaded(variant_bench: Path, tmp_path: Path, sel: dict[str, Any]) -> None:
    """``run_eval`` reading the bench by columns stores what it stores from the loaded bench: the same
    rows (request hashes, answers, prompts, meta) and manifest, in every kind of mode; a rerun sends nothing."""
    modes = ("independent", "chain-gold", "chain-misleading", "chain-own")
    runs = {}
    for how in ("loaded", "columnar"):
        out = tmp_path / how
        bench = load_bench(variant_bench, image_hashes=False) if how == "loaded" else None
        cfg = EvalConfig(bench=variant_bench, model=ModelConfig("baseline:random"), out=out, modes=modes,
                         command=("x",), split="all", **sel)
        summary = run_eval(cfg, bench=bench)
        assert summary.sent > 0
        runs[how] = out
    assert _rows(runs["loaded"]) == _rows(runs["columnar"])
    assert _manifest(runs["loaded"]) == _manifest(runs["columnar"])
    again = run_eval(EvalConfig(bench=variant_bench, model=ModelConfig("baseline:random"), out=runs["columnar"],
                                modes=modes, command=("x",), split="all", **sel))
    assert again.sent == 0 and sum(c.stored_before for c in again.modes.values()) == sum(
        c.planned for c in again.modes.values())


def test_eval_task_and_stage_options(variant_bench: Path, tmp_path: Path) -> None:
    """``medr2 eval --task/--stage`` ask only those items (predicates on the task and stage columns); a stage
    that is not a number is refused naming the option."""
    from typer.testing import CliRunner

    from medr2.cli import app

    loaded = load_bench(variant_bench, image_hashes=False)
    task = loaded.items[0].task
    run = tmp_path / "run"
    res = CliRunner().invoke(app, ["eval", "--bench", str(variant_bench), "--model", "baseline:random", "--out",
                                   str(run), "--stage", "1,3", "--task", task, "--split", "all", "--no-progress"])
    assert res.exit_code == 0, res.output
    want = {it.item_id for it in loaded.items if it.stage in (1, 3) and it.task == task}
    with Store.open(run) as st:
        assert {r.prediction.item_id for r in st.iter_predictions()} == want
    res = CliRunner().invoke(app, ["eval", "--bench", str(variant_bench), "--model", "baseline:random", "--out",
                                   str(tmp_path / "bad"), "--stage", "one", "--no-progress"])
    assert isinstance(res.exception, BadInput) and res.exception.field == "--stage"  # exit 2 from `medr2`
    res = CliRunner().invoke(app, ["eval", "--bench", str(variant_bench), "--model", "baseline:random", "--out",
                                   str(tmp_path / "bad"), "--task", f"{task},nosuch", "--no-progress"])
    assert isinstance(res.exception, BadInput) and res.exception.field == "--task"  # a task the bench has not


def test_sorted_items_bytes_do_not_depend_on_the_sort_runs(variant_bench: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """``BenchWriter`` sorts out of core (``medr2.bench.sorting``) and cuts what it reads back into row groups:
    the sorted rows read back in batches of 13 (row groups made of many pieces, each key split across them) give
    the bytes of one batch holding everything; the sort's temporary folder is gone after close."""
    import medr2.bench.format as fmt
    from medr2.bench import sorting

    loaded = load_bench(variant_bench)
    monkeypatch.setattr(sorting, "BATCH_ROWS", len(loaded.items))
    fmt.write_bench(tmp_path / "one", loaded.cases, loaded.items, {"name": "x"}, row_group_size=64)
    monkeypatch.setattr(sorting, "BATCH_ROWS", 13)
    fmt.write_bench(tmp_path / "many", loaded.cases, loaded.items, {"name": "x"}, row_group_size=64)
    assert (tmp_path / "one" / ITEMS_FILE).read_bytes() == (tmp_path / "many" / ITEMS_FILE).read_bytes()
    assert not [p for p in (tmp_path / "many").iterdir() if p.name.startswith(".")]
    got = pq.read_table(tmp_path / "many" / ITEMS_FILE).column("item_id").to_pylist()
    from medr2.bench.format import item_sort_key

    assert got == [it.item_id for it in sorted(loaded.items, key=item_sort_key)]


@pytest.mark.parametrize("old", [False, True], ids=["sorted", "old-style"])
def test_case_counts_and_count_match_the_records(variant_bench: Path, tmp_path: Path, old: bool) -> None:
    """``BenchTable.case_counts`` / ``value_counts`` (counted from the dictionary indices of a column; an integer
    column encoded first) and ``count`` (from the filter's own columns) give what the records give: the rows per
    value, the values in order of first appearance."""
    bench = _old_style(variant_bench, tmp_path / "old") if old else variant_bench
    loaded = load_bench(bench, image_hashes=False)
    table = BenchTable.open(bench, image_hashes=False)
    some_cases = frozenset(c.case_id for c in loaded.cases[1::2])
    filters = [None, ItemFilter(), ItemFilter(split="test"), ItemFilter(variants=("V8",), split="train"),
               ItemFilter(tasks=frozenset({"s1.modality"})), ItemFilter(case_ids=some_cases),
               ItemFilter(case_ids=some_cases, variants=("clean",)), ItemFilter(variants=("nosuch",))]
    for flt in filters:
        kept = [it for it in loaded.items if flt is None or flt.matches(it)]  # the filter on each record
        want: dict[str, int] = {}
        for it in kept:
            want[it.case_id] = want.get(it.case_id, 0) + 1
        got = table.case_counts(flt)
        assert list(got.items()) == list(want.items()), flt
        assert table.count(flt) == sum(want.values()), flt
        variants: dict[str, int] = {}  # what the case order's cursors are made from
        for it in kept:
            variants[it.variant] = variants.get(it.variant, 0) + 1
        assert list(table.value_counts("variant", flt).items()) == list(variants.items()), flt
        assert list(table.value_counts("stage", flt)) == list(dict.fromkeys(it.stage for it in kept))
        held = loaded.table()  # the same API over the records held in memory
        assert held.case_counts(flt) == got and held.count(flt) == table.count(flt), flt
