"""A bench's one validation (``BenchTable.validate``) checks the whole items table by columns
(``medr2.bench.columns``) and each item as it is built: a defect the column-wise pass can see is refused by every
entry point alike (``load_bench``, ``medr2 info --check``, eval, perturb, export, convert, report, view), in an
item a run never asks, naming file, record and field; a defect only a record check sees is refused alike by every
entry point that builds the item (a run: before it is sent); ``medr2 info --check`` builds every item."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from medr2 import BadInput, ModelConfig, api
from medr2.bench.columns import ITEM_RULES, RULES_VERSION
from medr2.bench.format import CASES_FILE, ITEMS_FILE, MANIFEST, load_bench, write_bench
from medr2.bench.table import BenchTable
from medr2.images import ImageStore
from medr2.run.runner import EvalConfig, run_eval
from medr2.run.store import Store
from tests.run_fixtures import make_bench, make_items, rewrite_items

Row = dict[str, Any]
MEDR2 = [sys.executable, "-m", "medr2.cli"]


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    root = tmp_path / "bench"
    make_bench(root, n_cases=6)
    return root


def _rows(root: Path) -> list[Row]:
    return pq.read_table(root / ITEMS_FILE).to_pylist()


def _rewrite(root: Path, rows: list[Row], row_group_size: int | None = None) -> None:
    """Write ``rows`` as the items table and fix the manifest's checksums (a bench written by a buggy tool)."""
    rewrite_items(root, rows, row_group_size=row_group_size)


def _unasked(rows: list[Row], pick: Callable[[Row], bool] = lambda r: True) -> int:
    """The last row ``pick`` accepts that is not of the first case (``--limit 1`` asks only that case)."""
    first_case = rows[0]["case_id"]
    return max(i for i, r in enumerate(rows) if r["case_id"] != first_case and pick(r))


def _eval(root: Path, out: Path, limit: int | None = 1) -> Any:
    return run_eval(EvalConfig(split="all", bench=root, model=ModelConfig("baseline:random"), out=out, limit=limit,
                               command=("test",)))


def _named(e: BadInput) -> tuple[Any, ...]:
    return e.file, e.record, e.field, e.reason


def _is_box(r: Row) -> bool:
    return r["answer_box"] is not None and bool(r["image_width"])


# damage -> (the rows it applies to, the change, the field named)
COLUMN_DAMAGE: dict[str, tuple[Callable[[Row], bool], Callable[[list[Row], Row], Row], str]] = {
    "path escapes": (lambda r: True, lambda rows, r: {**r, "image": "../../etc/passwd"}, "image"),
    "absolute path": (lambda r: True, lambda rows, r: {**r, "image": "/etc/passwd"}, "image"),
    "empty path": (lambda r: True, lambda rows, r: {**r, "image": ""}, "image"),
    "unknown form": (lambda r: True, lambda rows, r: {**r, "form": "essay"}, "form"),
    "unknown split": (lambda r: True, lambda rows, r: {**r, "split": "dev"}, "split"),
    "null question": (lambda r: True, lambda rows, r: {**r, "question": None}, "question"),
    "null stage": (lambda r: True, lambda rows, r: {**r, "stage": None}, "stage"),
    "unknown case": (lambda r: True, lambda rows, r: {**r, "case_id": "nobody"}, "case_id"),
    "duplicate id": (lambda r: True, lambda rows, r: {**r, "item_id": rows[0]["item_id"]}, "item_id"),
    "unknown parent": (lambda r: True, lambda rows, r: {**r, "parent_id": "0123456789abcdef"}, "parent_id"),
    "meta not an object": (lambda r: True, lambda rows, r: {**r, "meta": "[1]"}, "meta"),
    "options not a list": (lambda r: True, lambda rows, r: {**r, "options": "{}"}, "options"),
    "cue not an object": (lambda r: True, lambda rows, r: {**r, "cue": "[]"}, "cue"),
    "box outside": (_is_box, lambda rows, r: {**r, "answer_box": f"[0,0,{r['image_width'] + 5},5]"}, "answer_box"),
    "nan box": (_is_box, lambda rows, r: {**r, "answer_box": "[NaN,1,5,5]"}, "answer_box"),
    "negative box": (_is_box, lambda rows, r: {**r, "answer_box": "[20,10,10,20]"}, "answer_box"),
    "box of three": (_is_box, lambda rows, r: {**r, "answer_box": "[1,1,5]"}, "answer_box"),
}


def _view_item(bench: Path, item_id: str) -> Any:
    from medr2.viewer.review import ReviewData

    return ReviewData.open(bench).item(item_id)


def _report(bench: Path, tmp_path: Path) -> Any:
    from medr2.reporting.write import write_report

    return write_report([tmp_path / "run-before"], tmp_path / "report")


def _export(bench: Path, tmp_path: Path) -> Any:
    from medr2.train.dataset import export_dataset

    return export_dataset(bench, "llamafactory", tmp_path / "sft")


# every entry point that reads a bench's items (the one validation, BenchTable.validate, behind each) -> how it is
# called on a damaged bench (the bench, tmp_path, the damaged item's id); ``built``: whether it builds every item
# (those see what only the per-record checks see; the others build only the items they show)
ENTRY_POINTS: dict[str, tuple[Callable[[Path, Path, str], Any], bool]] = {
    "load_bench": (lambda b, t, i: load_bench(b), True),
    "medr2 info --check": (lambda b, t, i: api.info(b, check=True), True),
    "eval": (lambda b, t, i: _eval(b, t / "run-all", limit=None), True),
    "eval --limit 1": (lambda b, t, i: _eval(b, t / "run-one"), False),
    "perturb add": (lambda b, t, i: api.add_variants(b, "V1", workers=1), True),
    "export (train split)": (lambda b, t, i: _export(b, t), True),
    "convert": (lambda b, t, i: api.convert(b, "hf", t / "hf"), True),
    "report": (lambda b, t, i: _report(b, t), False),
    "view (review)": (lambda b, t, i: _view_item(b, i), True),
}


def _damaged(bench: Path, tmp_path: Path, change: Callable[[list[Row], Row], Row],
             pick: Callable[[Row], bool] = lambda r: True) -> Row:
    """A bench with one train row ``pick`` accepts (not of the first case, so not asked by ``--limit 1``)
    changed, after a run of it was made and scored (for the report); returns the row."""
    from medr2.scoring.scorer import score_run

    _eval(bench, tmp_path / "run-before")
    score_run(tmp_path / "run-before", mixed_splits=True, n_resamples=0)
    rows = _rows(bench)
    k = _unasked(rows, lambda r: r["split"] == "train" and pick(r))
    rows[k] = change(rows, rows[k])
    _rewrite(bench, rows)
    return rows[k]


def _refusals(bench: Path, tmp_path: Path, item_id: str, only_built: bool) -> dict[str, tuple[Any, ...]]:
    got: dict[str, tuple[Any, ...]] = {}
    for name, (call, built) in ENTRY_POINTS.items():
        if only_built and not built:
            continue
        with pytest.raises(BadInput) as e:
            call(bench, tmp_path, item_id)
        got[name] = _named(e.value)
    return got


@pytest.mark.parametrize("damage", sorted(COLUMN_DAMAGE))
def test_every_entry_point_refuses_a_defect_the_columns_see_alike(bench: Path, tmp_path: Path, damage: str) -> None:
    """A defect the column-wise checks see, in an item a run never asks: every entry point refuses it with the
    same file, record, field and reason (the one validation), eval before its run folder is touched."""
    pick, change, field = COLUMN_DAMAGE[damage]
    row = _damaged(bench, tmp_path, change, pick)
    got = _refusals(bench, tmp_path, row["item_id"], only_built=False)
    assert len(set(got.values())) == 1, got
    e = got["load_bench"]
    assert e[0] == str(bench / ITEMS_FILE) and e[1] == row["item_id"] and (e[2] or "").split(".")[0] == field, e
    assert not (tmp_path / "run-all" / "store.sqlite").exists()  # refused before the run folder is touched


@pytest.mark.parametrize("damage", ["duplicate id", "unknown parent", "null question", "box outside"])
def test_columns_across_row_groups(bench: Path, tmp_path: Path, damage: str) -> None:
    """The same, with the items table in row groups of 5 rows (rows and ids named across groups)."""
    pick, change, field = COLUMN_DAMAGE[damage]
    rows = _rows(bench)
    k = _unasked(rows, pick)
    rows[k] = change(rows, rows[k])
    _rewrite(bench, rows, row_group_size=5)
    assert pq.ParquetFile(bench / ITEMS_FILE).num_row_groups > 5
    with pytest.raises(BadInput) as ev:
        BenchTable.open(bench, image_hashes=False)
    assert ev.value.record == rows[k]["item_id"] and (ev.value.field or "").split(".")[0] == field, str(ev.value)


@pytest.mark.parametrize("held", [1, 1 << 20])
def test_parents_gathered_then_looked_up_name_the_first_unknown(bench: Path, monkeypatch: pytest.MonkeyPatch,
                                                                held: int) -> None:
    """The parents are gathered over the row groups and looked up once (made distinct again every ``held``): a
    good bench opens; with an unknown 16-hex parent in one row and a parent of another form in a later one, the
    earlier row is named."""
    from medr2.bench import columns

    monkeypatch.setattr(columns, "PARENTS_HELD", held)
    rows = _rows(bench)
    _rewrite(bench, rows, row_group_size=5)
    BenchTable.open(bench, image_hashes=False)
    parented = [i for i, r in enumerate(rows) if r["parent_id"] is not None]
    assert len(parented) >= 2
    first, later = parented[len(parented) // 2], parented[-1]
    rows[first] = {**rows[first], "parent_id": "0123456789abcdef"}
    rows[later] = {**rows[later], "parent_id": "not-an-item"}
    _rewrite(bench, rows, row_group_size=5)
    with pytest.raises(BadInput) as ev:
        BenchTable.open(bench, image_hashes=False)
    assert _named(ev.value) == (str(bench / ITEMS_FILE), rows[first]["item_id"], "parent_id",
                                "parent item not in the bench"), str(ev.value)


def test_duplicate_text_ids_are_found_by_columns(bench: Path, tmp_path: Path) -> None:
    """Ids that are not 16 hex digits go through the set of texts, with the same message."""
    rows = _rows(bench)
    for i, r in enumerate(rows):
        r["item_id"] = f"item-{i}"
        r["parent_id"] = None
    k = _unasked(rows)
    rows[k]["item_id"] = "item-1"
    _rewrite(bench, rows)
    with pytest.raises(BadInput) as ev:
        _eval(bench, tmp_path / "run")
    assert _named(ev.value) == (str(bench / ITEMS_FILE), "item-1", "item_id", "duplicate item_id")


def test_a_parent_column_of_another_type_is_refused(bench: Path, tmp_path: Path) -> None:
    """``parent_id`` is read only by the parent pass, but its type is checked from the schema with the columns the
    row checks read: a column of another type makes every row a suspect (the first row's record check names it)."""
    rows = _rows(bench)
    for r in rows:
        r["parent_id"] = 7 if r["parent_id"] is not None else None
    schema = pq.read_schema(bench / ITEMS_FILE)
    rewrite_items(bench, rows, schema.set(schema.get_field_index("parent_id"), pa.field("parent_id", pa.int64())))
    with pytest.raises(BadInput) as ev:
        _eval(bench, tmp_path / "run")
    first = next(r for r in rows if r["parent_id"] is not None)  # the first row whose record does not decode
    assert ev.value.record == first["item_id"] and (ev.value.field or "").startswith("parent_id"), str(ev.value)


def test_a_suspect_row_that_passes_its_record_checks_is_no_error(bench: Path, tmp_path: Path) -> None:
    """A ``..`` path that stays inside the bench is flagged by the columns, then passes the record checks."""
    rows = _rows(bench)
    k = _unasked(rows)
    rows[k]["image"] = "images/../" + rows[k]["image"]
    _rewrite(bench, rows)
    load_bench(bench)
    assert _eval(bench, tmp_path / "run", limit=None).sent == len(rows)


RECORD_DAMAGE: dict[str, tuple[Callable[[Row], Row], str]] = {
    "option not text": (lambda r: {**r, "options": '["a",1]'}, "options.1"),
    "cue of no kind": (lambda r: {**r, "cue": '{"kind":"blob","box":[0,0,1,1]}'}, "cue.kind"),
    "meta bad json": (lambda r: {**r, "meta": '{"a":}'}, "meta"),
    "image file missing": (lambda r: {**r, "image": "images/" + "0" * 64 + ".png"}, "image"),
}


@pytest.mark.parametrize("damage", sorted(RECORD_DAMAGE))
def test_record_checks_refuse_a_defect_in_an_item_built(bench: Path, tmp_path: Path, damage: str) -> None:
    """What only a record check sees: not refused where the damaged item is never built (a run that does not ask
    it, a report that does not show it), refused alike by every entry point that builds it (a run: before that
    item is sent)."""
    change, field = RECORD_DAMAGE[damage]
    row = _damaged(bench, tmp_path, lambda rows, r: change(r), lambda r: r["variant"] == "clean")  # exported
    assert _eval(bench, tmp_path / "run-limit").sent > 0  # only the first case asked: the damaged item is not
    got = _refusals(bench, tmp_path, row["item_id"], only_built=True)
    assert len(set(got.values())) == 1, got
    e = got["load_bench"]
    assert e[0] == str(bench / ITEMS_FILE) and e[1] == row["item_id"] and e[2] == field, e
    with Store.open(tmp_path / "run-all") as store:
        assert row["item_id"] not in {p.item_id for p in store.iter_predictions()}


def test_record_checks_refuse_an_asked_item_before_the_run_folder(bench: Path, tmp_path: Path) -> None:
    """With ``--limit`` the items asked are built while planning: refused before the store is made."""
    rows = _rows(bench)
    rows[0] = {**rows[0], "options": '["a",1]'}
    _rewrite(bench, rows)
    with pytest.raises(BadInput) as ev:
        _eval(bench, tmp_path / "run")
    assert ev.value.record == rows[0]["item_id"] and ev.value.field == "options.1", str(ev.value)
    assert not (tmp_path / "run" / "store.sqlite").exists()


def test_validate_checks_each_item_built(bench: Path) -> None:
    """After the column-wise pass, each item ``iter_items`` builds gets the record checks."""
    rows = _rows(bench)
    k = _unasked(rows)
    rows[k] = {**rows[k], "image": "images/" + "0" * 64 + ".png"}
    _rewrite(bench, rows)
    table = BenchTable.open(bench, image_hashes=False)
    with pytest.raises(BadInput) as e:
        list(table.iter_items())
    assert e.value.record == rows[k]["item_id"] and e.value.field == "image" and "missing" in e.value.reason
    assert len(list(BenchTable.open(bench, validate=False).iter_items())) == len(rows)  # unchecked: no error


def _manifest(root: Path) -> dict[str, Any]:
    return json.loads((root / MANIFEST).read_text("utf-8"))  # type: ignore[no-any-return]


def test_the_writers_checks_are_recorded_for_its_tables(bench: Path) -> None:
    """The writer makes eval's checks once on the tables it wrote and records them with their checksums; eval
    then reads only the case ids, and still checks each item it builds."""
    m = _manifest(bench)
    sums = m["checksums"]
    assert m["checked"] == {"rules": RULES_VERSION, CASES_FILE: sums[CASES_FILE], ITEMS_FILE: sums[ITEMS_FILE]}
    assert list(m)[-2:] == ["checked", "complete"]
    table = BenchTable.open(bench, image_hashes=False)
    assert table.checks_trusted
    first = next(table.iter_items())
    (bench / (first.image or "")).unlink()  # the images are not in the checksums: the record check sees it
    with pytest.raises(BadInput) as e:
        list(BenchTable.open(bench, image_hashes=False).iter_items())
    assert e.value.record == first.item_id and e.value.field == "image" and "missing" in e.value.reason


def test_the_record_is_trusted_for_those_bytes_and_rules_only(bench: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Other tables (a checksum that changed since: another writer's rows) or other rules: checked in full."""
    import medr2.bench.columns as columns

    monkeypatch.setattr(columns, "RULES_VERSION", RULES_VERSION + 1)
    assert not BenchTable.open(bench, image_hashes=False).checks_trusted
    monkeypatch.undo()
    rows = _rows(bench)
    k = _unasked(rows)
    rows[k] = {**rows[k], "form": "essay"}
    _rewrite(bench, rows)  # the checksums fixed, the record of the checks left as it was
    assert _manifest(bench)["checked"][ITEMS_FILE] != _manifest(bench)["checksums"][ITEMS_FILE]
    with pytest.raises(BadInput) as e:
        BenchTable.open(bench, image_hashes=False)
    assert e.value.record == rows[k]["item_id"] and e.value.field == "form", str(e.value)


def test_a_bench_failing_the_writers_checks_is_written_without_the_record(tmp_path: Path) -> None:
    """A writer whose tables fail the checks still writes the bench, without the record, so that every reader
    makes the checks and names the defect."""
    root = tmp_path / "bench"
    cases, items = make_items(ImageStore(root), 3)
    (root / cases[1].image).unlink()
    write_bench(root, cases, items, {"name": "unchecked"})
    assert "checked" not in _manifest(root)
    with pytest.raises(BadInput) as ev:
        BenchTable.open(root, image_hashes=False)
    assert (ev.value.file, ev.value.record, ev.value.field) == (str(root / CASES_FILE), cases[1].case_id, "image")


def test_rules_come_from_the_item_model() -> None:
    assert {"item_id", "case_id", "question", "answer", "stage", "meta", "options", "variant"} <= set(
        ITEM_RULES.required)
    assert not {"image", "split", "cue", "answer_box", "parent_id"} & set(ITEM_RULES.required)
    assert set(ITEM_RULES.literals) == {"form", "split"} and "essay" not in ITEM_RULES.literals["form"]
    assert ITEM_RULES.brackets["answer_box"] == ("[", "]") and ITEM_RULES.brackets["cue"] == ("{", "}")


def test_info_check_exit_codes(bench: Path) -> None:
    ok = subprocess.run([*MEDR2, "info", str(bench), "--check"], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0 and "checked: 6 cases" in ok.stdout, ok.stderr
    rows = _rows(bench)
    k = _unasked(rows)
    rows[k] = {**rows[k], "options": '["a",1]'}
    _rewrite(bench, rows)
    bad = subprocess.run([*MEDR2, "info", str(bench), "--check"], capture_output=True, text=True, timeout=120)
    err = bad.stderr.replace("\n", "")
    assert bad.returncode == 2 and ITEMS_FILE in err and rows[k]["item_id"] in err and "options.1" in err, err


def test_the_writers_record_is_trusted_only_without_image_hashes(bench: Path) -> None:
    """The writer checked its tables without hashing images: a validation that hashes them (``medr2 info --check``)
    checks the tables again, and so finds a case image gone since; eval's (no hashes) trusts the record."""
    case = next(BenchTable(bench).iter_cases())
    (bench / case.image).unlink()
    assert BenchTable.open(bench, image_hashes=False).checks_trusted
    with pytest.raises(BadInput) as e:
        api.info(bench, check=True)
    assert (e.value.file, e.value.record, e.value.field) == (str(bench / CASES_FILE), case.case_id, "image")
