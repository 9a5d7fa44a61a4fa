"""Scoring's column-wise item reader: the same fields as the bench's records; bad JSON names its row."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from medr2 import BadInput, Bench
from medr2.bench.format import CASES_FILE, ITEMS_FILE, MANIFEST, bench_checksum
from medr2.images import sha256_file
from medr2.scoring.itemcols import open_scoring_items
from medr2.scoring.items import ScoringItem
from tests.run_fixtures import make_bench, write_items_table

FIELDS = [f.name for f in dataclasses.fields(ScoringItem)]


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Bench:
    return make_bench(tmp_path_factory.mktemp("bench"), n_cases=3)


def _copy(bench: Bench, dst: Path, edit: dict[str, pa.Array | None]) -> Path:
    """The bench with some items.parquet columns replaced (None: dropped), as a writer of such files would
    leave it: the manifest's checksums name the new file (a file changed after the build is refused before
    its rows are read)."""
    dst.mkdir()
    for f in bench.root.iterdir():
        if f.is_file():
            (dst / f.name).write_bytes(f.read_bytes())
    table = pq.read_table(bench.root / ITEMS_FILE)
    for name, values in edit.items():
        i = table.column_names.index(name)
        table = table.remove_column(i) if values is None else table.set_column(i, name, values)
    write_items_table(dst, table)
    return dst


def _records(root: Path) -> dict[str, ScoringItem]:
    """Every item of a bench as scoring reads it (:func:`open_scoring_items`), by id in row order."""
    _, cols = open_scoring_items(root)
    return cols.records(np.arange(len(cols)))


def test_fields_equal_the_records(bench: Bench) -> None:
    items = _records(bench.root)
    assert list(items) == [it.item_id for it in bench.items]
    for it in bench.items:
        got = items[it.item_id]
        for name in FIELDS:
            want = getattr(it, name)
            want = tuple(want) if name == "answer_box" and want is not None else want
            assert getattr(got, name) == want, name
    assert any(it.options for it in items.values()) and any(it.answer_box for it in items.values())
    assert any(it.parent_id for it in items.values())
    same = [it for it in items.values() if it.task == "s1.modality"]
    assert len({id(it.task) for it in same}) == 1  # repeated strings share one object


@pytest.mark.parametrize("column", ["options", "meta"])
def test_bad_json_names_the_first_bad_row(bench: Bench, tmp_path: Path, column: str) -> None:
    table = pq.read_table(bench.root / ITEMS_FILE)
    values = table.column(column).to_pylist()
    values[2] = values[4] = "[not json" if column == "options" else "{bad"
    root = _copy(bench, tmp_path / "b", {column: pa.array(values, type=pa.string())})
    with pytest.raises(BadInput) as e:
        open_scoring_items(root)
    assert e.value.record == table.column("item_id")[2].as_py() and e.value.field == column


def test_missing_and_null_columns_take_the_defaults(bench: Bench, tmp_path: Path) -> None:
    from medr2.scoring.itemcols import ScoringItems

    n = len(bench.items)
    root = _copy(bench, tmp_path / "b", {"variant": None, "meta": pa.nulls(n), "lure": pa.nulls(n),
                                        "options": pa.array([None] * n, type=pa.string()), "pair_id": None})
    items = _records(root)
    assert {it.variant for it in items.values()} == {"clean"}
    assert all(it.meta == {} and it.options == [] and it.lure is None and it.pair_id is None
               for it in items.values())
    again = ScoringItems.from_mapping(items)  # records held by columns give the same records back
    assert [again[i] for i in items] == list(items.values())


# -- held by columns (medr2.scoring.itemcols, what `medr2 score` uses) ------------------------------------


def test_columns_make_records_only_for_the_rows_asked(bench: Bench) -> None:
    """``ScoringItems``: the bench's items in its order, each record made alone (a lookup outside any window)
    equal to the one made with the others, made only for the rows loaded (the window) or looked up; positions are
    rows, -1 for an unknown id."""
    _, cols = open_scoring_items(bench.root)
    rows = _records(bench.root)
    assert len(cols) == len(rows) and list(cols) == list(rows) == [it.item_id for it in bench.items]
    assert [cols[i] for i in rows] == list(rows.values())  # each made alone (outside any window)
    ids = list(rows)
    wanted = [ids[5], ids[1], ids[5], "no-such-item", None, ids[0][:-1], ids[0] + "0"]
    assert cols.positions(wanted).tolist() == [5, 1, 5, -1, -1, -1, -1]
    window = cols.load(cols.positions(ids[:4]))
    assert list(window) == ids[:4] and list(window.values()) == [rows[i] for i in ids[:4]]
    assert cols.ids(cols.positions(ids[::-1])) == ids[::-1]
    assert ids[-1] in cols and "no-such-item" not in cols
    with pytest.raises(KeyError):
        cols["no-such-item"]
    parents = cols.column_positions("parent_id").tolist()
    assert parents == [ids.index(it.parent_id) if it.parent_id else -1 for it in bench.items]
    assert any(p >= 0 for p in parents)


# -- in the columnar engine in the run's spill folder (medr2.scoring.itemengine, what `medr2 score` uses) ---------


def _spilled_copy(bench: Bench, dst: Path) -> Path:
    """The bench with items.parquet rewritten in row groups of 5 rows (the load reads a row group at a time), some
    of its text columns stored dictionary-encoded (they read back so)."""
    table = pq.read_table(bench.root / ITEMS_FILE)
    for name in ("task", "question", "case_id", "parent_id"):
        i = table.column_names.index(name)
        table = table.set_column(i, name, table.column(i).dictionary_encode())
    root = _copy(bench, dst, {})
    write_items_table(root, table, row_group_size=5)
    return root


@pytest.mark.parametrize("fixes", [False, True], ids=["bench", "with-review-fixes"])
def test_items_in_the_engine_give_what_the_items_in_memory_give(bench: Bench, tmp_path: Path, fixes: bool) -> None:
    """Loaded into the engine in a folder and joined back: the same records, positions, ids, columns and codes as
    held in memory, in any order asked; the folder holds the engine's database and nothing of its load left. With
    items added after the bench's rows (the review fixes a run asked), the same, and those items are held as
    made."""
    import numpy as np

    from medr2.bench.reviews import fixed_item
    from medr2.scoring.itemcols import open_scoring_items
    from medr2.scoring.itemengine import DB_FILE

    root = _spilled_copy(bench, tmp_path / "b")
    added = [fixed_item(it, {"question": f"fixed {k}?"}) for k, it in enumerate(bench.items[:5:2])] if fixes else []
    _, mem = open_scoring_items(root, added=added)
    folder = tmp_path / "spill"
    folder.mkdir()
    _, disk = open_scoring_items(root, folder, added=added)
    try:
        assert len(mem) == len(bench.items) + len(added)
        for got in (mem, disk):
            for it in added:
                held = got[it.item_id]
                assert (held.question, held.parent_id, held.case_id, held.answer, held.meta) == (
                    it.question, it.parent_id, it.case_id, it.answer, it.meta)
        assert [p.name for p in folder.iterdir()] == [DB_FILE]
        ids = list(mem)
        assert len(disk) == len(mem) > 2 * 3 * 2 and list(disk) == ids
        assert [disk[i] for i in ids] == [mem[i] for i in ids]
        rng = np.random.default_rng(0)
        for pos in (rng.permutation(len(ids)), np.arange(len(ids))[::-1], np.asarray([4, 4, 1, 9, 1]),
                    np.zeros(0, dtype=np.int64)):
            assert list(disk.load(pos).items()) == list(mem.load(pos).items())
            assert disk.ids(pos) == mem.ids(pos)
        by_case = np.argsort(mem.codes("case_id")[0], kind="stable")[:7]  # one case's rows: ids far apart
        assert list(disk.records(by_case).items()) == list(mem.records(by_case).items())
        wanted = [ids[5], ids[1], "no-such-item", None, ids[0][:-1]]
        assert disk.positions(wanted).tolist() == mem.positions(wanted).tolist()
        for name in ("case_id", "chain_id", "split", "variant", "parent_id", "pair_id", "step", "stage"):
            assert disk.column(name).to_pylist() == mem.column(name).to_pylist(), name
        for name in ("case_id", "chain_id", "split", "variant"):
            a, b = disk.codes(name), mem.codes(name)
            assert a[0].tolist() == b[0].tolist() and a[1] == b[1], name
        assert disk.column_positions("parent_id").tolist() == mem.column_positions("parent_id").tolist()
    finally:
        disk.close()


def test_items_in_the_engine_refuse_what_the_items_in_memory_refuse(bench: Bench, tmp_path: Path) -> None:
    """Invalid JSON (the first bad row, the first bad column in (options, answer_box, meta) order, as read in
    row groups) and an item without id: the same message, record and field as held in memory."""
    from medr2.scoring.itemcols import open_scoring_items

    table = pq.read_table(bench.root / ITEMS_FILE)
    meta, options, ids = (table.column(c).to_pylist() for c in ("meta", "options", "item_id"))
    meta[3] = meta[16] = "{bad"
    options[12] = "[bad"
    ids[7] = None
    for k, edit in enumerate(({"meta": pa.array(meta, type=pa.string())},
                              {"meta": pa.array(meta, type=pa.string()),
                               "options": pa.array(options, type=pa.string())},
                              {"item_id": pa.array(ids, type=pa.string())})):
        root = _copy(bench, tmp_path / f"b{k}", {})
        pq.write_table(pq.read_table(_copy(bench, tmp_path / f"e{k}", edit) / ITEMS_FILE), root / ITEMS_FILE,
                       row_group_size=5)
        manifest = json.loads((root / MANIFEST).read_text("utf-8"))
        manifest["checksums"][ITEMS_FILE] = sha256_file(root / ITEMS_FILE)
        manifest["checksums"]["bench"] = bench_checksum(manifest["checksums"][ITEMS_FILE],
                                                        manifest["checksums"][CASES_FILE])
        (root / MANIFEST).write_text(json.dumps(manifest), "utf-8")
        with pytest.raises(BadInput) as e:
            open_scoring_items(root)
        folder = tmp_path / f"spill{k}"
        folder.mkdir()
        with pytest.raises(BadInput) as f:
            open_scoring_items(root, folder)
        assert (f.value.record, f.value.field, str(f.value)) == (e.value.record, e.value.field, str(e.value))


def test_an_error_of_the_rows_handed_to_the_engine_is_raised_as_it_is(tmp_path: Path) -> None:
    """A read refused while the engine loads the rows (a damaged row group: BadInput) reaches the caller as that
    BadInput, not as the engine's own error wrapping it, and the engine's folder is gone."""
    from medr2.scoring.itemengine import load_items

    schema = pa.schema([("item_id", pa.string())])

    def rows() -> Iterator[pa.RecordBatch]:
        yield pa.record_batch([pa.array(["a", "b"])], schema=schema)
        raise BadInput("cannot read parquet: damaged", file="items.parquet")

    with pytest.raises(BadInput, match="damaged") as e:
        load_items(rows(), schema, np.arange(4, dtype=np.int32), tmp_path)
    assert e.value.file == "items.parquet" and not (tmp_path / "engine").exists()
