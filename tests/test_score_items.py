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
