"""Scoring's column-wise item reader: the same fields as the bench's records; bad JSON names its row."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from medr2.bench.format import CASES_FILE, ITEMS_FILE, MANIFEST, Bench, bench_checksum
from medr2.errors import BadInput
from medr2.images import sha256_file
from medr2.score.items import ScoringItem, load_scoring_items
from tests.run_fixtures import make_bench

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
    pq.write_table(table, dst / ITEMS_FILE)
    manifest = json.loads((dst / MANIFEST).read_text("utf-8"))
    sums = manifest["checksums"]
    sums[ITEMS_FILE] = sha256_file(dst / ITEMS_FILE)
    sums["bench"] = bench_checksum(sums[ITEMS_FILE], sums[CASES_FILE])
    (dst / MANIFEST).write_text(json.dumps(manifest), "utf-8")
    return dst


def test_fields_equal_the_records(bench: Bench) -> None:
    _, items = load_scoring_items(bench.root)
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


def test_bad_json_names_the_first_bad_row(bench: Bench, tmp_path: Path) -> None:
    table = pq.read_table(bench.root / ITEMS_FILE)
    options = table.column("options").to_pylist()
    options[2] = options[4] = "[not json"
    root = _copy(bench, tmp_path / "b", {"options": pa.array(options, type=pa.string())})
    with pytest.raises(BadInput) as e:
        load_scoring_items(root)
    assert e.value.record == table.column("item_id")[2].as_py() and e.value.field == "options"


def test_missing_and_null_columns_take_the_defaults(bench: Bench, tmp_path: Path) -> None:
    n = len(bench.items)
    root = _copy(bench, tmp_path / "b", {"variant": None, "meta": pa.nulls(n), "lure": pa.nulls(n),
                                        "options": pa.array([None] * n, type=pa.string())})
    _, items = load_scoring_items(root)
    assert {it.variant for it in items.values()} == {"clean"}
    assert all(it.meta == {} and it.options == [] and it.lure is None for it in items.values())


# -- held by columns (medr2.score.itemcols, what `medr2 score` uses) ------------------------------------


def test_columns_give_the_records_of_the_row_reader(bench: Bench) -> None:
    """``ScoringItems``: the same items in the same order as ``load_scoring_items``, each record equal, made
    only for the rows loaded (the window) or looked up; positions are rows, -1 for an unknown id."""
    from medr2.score.itemcols import open_scoring_items

    _, rows = load_scoring_items(bench.root)
    _, cols = open_scoring_items(bench.root)
    assert len(cols) == len(rows) and list(cols) == list(rows)
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
    assert parents == [ids.index(it.parent_id) if it.parent_id else -1 for it in rows.values()]
    assert any(p >= 0 for p in parents)


def test_columns_refuse_bad_json_as_the_row_reader(bench: Bench, tmp_path: Path) -> None:
    from medr2.score.itemcols import open_scoring_items

    table = pq.read_table(bench.root / ITEMS_FILE)
    meta = table.column("meta").to_pylist()
    meta[3] = meta[6] = "{bad"
    root = _copy(bench, tmp_path / "b", {"meta": pa.array(meta, type=pa.string())})
    with pytest.raises(BadInput) as e:
        load_scoring_items(root)
    with pytest.raises(BadInput) as f:
        open_scoring_items(root)
    assert (f.value.record, f.value.field, str(f.value)) == (e.value.record, e.value.field, str(e.value))
    assert f.value.record == table.column("item_id")[3].as_py()


def test_columns_take_the_defaults_of_the_row_reader(bench: Bench, tmp_path: Path) -> None:
    from medr2.score.itemcols import ScoringItems, open_scoring_items

    n = len(bench.items)
    root = _copy(bench, tmp_path / "b", {"variant": None, "meta": pa.nulls(n), "lure": pa.nulls(n),
                                        "options": pa.array([None] * n, type=pa.string()), "pair_id": None})
    _, rows = load_scoring_items(root)
    _, cols = open_scoring_items(root)
    assert [cols[i] for i in rows] == list(rows.values())
    again = ScoringItems.from_mapping(rows)  # records held by columns give the same records back
    assert [again[i] for i in rows] == list(rows.values())
