"""``medr2 report`` reads its benches by columns and its scores in batches (docs/report.md, "Memory"): the
browser's rows and the confusion matrices made from a bench read by columns (``BenchItems``) and from
``scores.parquet`` batch by batch equal those made from records in memory; the rows shown are the first in
stable-hash order of the item id, as when every candidate was sorted; only the items shown are fetched."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pytest

from medr2 import Item, PlotContext
from medr2.bench.format import write_bench
from medr2.bench.table import BenchTable, ItemFilter
from medr2.records import stable_hash
from medr2.reporting import inputs
from medr2.reporting.browser import browser_data
from medr2.reporting.inputs import RunData, ScoreTable, load_run
from medr2.reporting.items import BenchItems, id_hashes, stable_id_hash
from medr2.reporting.plots import make_plots
from tests.report_fixtures import Fixture, make_fixture


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    return make_fixture(tmp_path_factory.mktemp("streaming"))


@pytest.fixture(scope="module")
def part(fx: Fixture, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Item]]:
    """A bench holding every other item of the fixture's (the rest are scored but missing), in row groups of 4."""
    from medr2.bench.format import load_bench

    bench = load_bench(fx.bench, validate=False)
    kept = bench.items[::2]
    root = tmp_path_factory.mktemp("part") / "bench"
    write_bench(root, bench.cases, kept, {"name": "part"}, row_group_size=4)
    (root / "images").rmdir()
    shutil.copytree(fx.bench / "images", root / "images", copy_function=os.link)
    return root, {it.item_id: it for it in kept}


def _in_memory(runs: list[RunData]) -> list[RunData]:
    return [RunData(r.run_dir, r.label, r.model_key, r.manifest, r.metrics, list(r.scores), r.responses,
                    r.bench_root, r.claims) for r in runs]


def _first_rows(runs: list[RunData], held: Iterable[str], n: int) -> list[tuple[int, str, str]]:
    """The old selection: every scored row whose item is held, sorted by (id hash, run, mode, row)."""
    ids = set(held)
    cands = sorted((stable_hash(s["item_id"]), ri, str(s["mode"]), k, s["item_id"])
                   for ri, r in enumerate(runs) for k, s in enumerate(r.scores) if s["item_id"] in ids)
    return sorted((ri, mode, item_id) for _, ri, mode, _, item_id in cands[:n])


def test_stable_id_hash_is_the_records_hash() -> None:
    for item_id in ("a", "case0/s1/x", "ünï\u2028code", 'q"uote\\'):
        assert stable_id_hash(item_id) == stable_hash(item_id)
    assert list(id_hashes(["a", "b"])) == [int(stable_hash("a"), 16), int(stable_hash("b"), 16)]


@pytest.mark.parametrize("batch_rows", [5, 65_536])
def test_browser_from_columns_equals_from_records(fx: Fixture, part: tuple[Path, dict[str, Item]],
                                                  monkeypatch: pytest.MonkeyPatch, batch_rows: int) -> None:
    monkeypatch.setattr(inputs, "SCORE_BATCH_ROWS", batch_rows)  # several batches: the running top-n merges
    runs = [load_run(r) for r in fx.runs]
    assert all(isinstance(r.scores, ScoreTable) for r in runs)
    memory = _in_memory(runs)
    whole = {it.item_id: it for it in fx.items}
    root, kept = part
    for items, records in ((BenchItems([BenchTable(fx.bench)]), whole), (BenchItems([BenchTable(root)]), kept)):
        for n in (0, 1, 5, 12, 1000):
            got = browser_data(runs, items, max_items=n)
            assert got == browser_data(memory, records, max_items=n)
            assert sorted((r["r"], r["m"], r["id"]) for r in got["rows"]) == _first_rows(memory, records, n)
            scored = sum(len(r.scores) for r in runs)
            held = sum(s["item_id"] in records for r in memory for s in r.scores)
            assert got["total"] == held and got["missing_items"] == scored - held
    assert 0 < len(kept) < len(whole)


class _Counting(BenchItems):
    def __init__(self, tables: list[BenchTable]) -> None:
        super().__init__(tables)
        self.fetched: list[set[str]] = []

    def fetch(self, ids: Iterable[str]) -> dict[str, Item]:
        self.fetched.append(set(ids))
        return super().fetch(self.fetched[-1])


class _Colliding(_Counting):
    """Says every id is held, as a 64-bit hash collision would for one: the fetch by id must correct it."""

    def present(self, ids: object, hashes: np.ndarray) -> np.ndarray:
        return np.ones(len(hashes), dtype=bool)


def test_only_the_items_shown_are_fetched(fx: Fixture, part: tuple[Path, dict[str, Item]]) -> None:
    runs = [load_run(r) for r in fx.runs]
    items = _Counting([BenchTable(fx.bench)])
    data = browser_data(runs, items, max_items=6)
    # the items shown, then (only where not shown already) the clean items beside the image variants shown
    parents = {r["clean"]["id"] for r in data["rows"] if r.get("clean") and "id" in r["clean"]}
    assert items.fetched[0] == {r["id"] for r in data["rows"]} and data["shown"] == 6
    assert all(later <= parents - items.fetched[0] for later in items.fetched[1:]), items.fetched
    root, kept = part
    colliding = _Colliding([BenchTable(root)])
    got = browser_data(runs, colliding, max_items=6)
    want = browser_data(_in_memory(runs), kept, max_items=6)
    # the first selection held ids the bench lacks: fetched, not found, counted missing; the next rows shown
    assert colliding.fetched[0] - set(kept) and len(colliding.fetched) >= 2
    assert got["rows"] == want["rows"] and got["images"] == want["images"] and got["shown"] == 6
    absent = set().union(*colliding.fetched) - set(kept)
    memory = _in_memory(runs)
    assert got["missing_items"] == sum(s["item_id"] in absent for r in memory for s in r.scores)


def test_confusion_from_columns_equals_from_records(fx: Fixture, part: tuple[Path, dict[str, Item]]) -> None:
    runs = [load_run(r) for r in fx.runs]
    memory = _in_memory(runs)
    root, kept = part
    for items, records in ((BenchItems([BenchTable(fx.bench)]), {it.item_id: it for it in fx.items}),
                           (BenchItems([BenchTable(root)]), kept)):
        got = {p.name: p.png for p in make_plots(PlotContext(runs, items)) if p.name.startswith("confusion")}
        want = {p.name: p.png for p in make_plots(PlotContext(memory, records)) if p.name.startswith("confusion")}
        assert got and got == want


def _by_id_with_statistics(root: Path, out: Path) -> Path:
    """A copy of ``root`` whose items table is sorted by id in row groups of 4 with statistics on every column
    (as older writers wrote them; checksums updated, images hard-linked)."""
    import json

    import pyarrow.parquet as pq

    from medr2.bench.format import ITEMS_FILE, bench_checksum
    from medr2.images import sha256_file

    out.mkdir()
    for name in ("cases.parquet", "manifest.json"):
        (out / name).write_bytes((root / name).read_bytes())
    shutil.copytree(root / "images", out / "images", copy_function=os.link)
    pq.write_table(pq.read_table(root / ITEMS_FILE).sort_by("item_id"), out / ITEMS_FILE, row_group_size=4)
    m = json.loads((out / "manifest.json").read_text())
    m["checksums"]["items.parquet"] = sha256_file(out / ITEMS_FILE)
    m["checksums"]["bench"] = bench_checksum(m["checksums"]["items.parquet"], m["checksums"]["cases.parquet"])
    (out / "manifest.json").write_text(json.dumps(m))
    return out


def test_items_by_id_prunes_and_is_exact(part: tuple[Path, dict[str, Item]], tmp_path: Path) -> None:
    root, kept = part
    ids = sorted(kept)
    for bench in (root, _by_id_with_statistics(root, tmp_path / "stats")):
        table = BenchTable(bench)
        wanted = {ids[0], ids[-1], "no-such-item"}
        assert table.items_by_id(wanted) == {i: kept[i] for i in (ids[0], ids[-1])}
        assert table.items_by_id([]) == {}
        # a row group whose id statistics exclude every wanted id is skipped; one without statistics is read
        groups = table.row_groups(ItemFilter(item_ids=frozenset({ids[1]})))
        md = table.items_file.metadata
        col = table.items_file.schema_arrow.names.index("item_id")
        for rg in range(md.num_row_groups):
            st = md.row_group(rg).column(col).statistics
            known = st is not None and st.has_min_max
            assert (rg in groups) == (not known or st.min <= ids[1] <= st.max)
        if bench != root:  # sorted by id, with statistics: the one row group holding it
            assert len(groups) == 1 < md.num_row_groups
        table.row_groups_read = 0
        assert table.items_by_id([ids[1]]) == {ids[1]: kept[ids[1]]}
        assert table.row_groups_read == len(groups)
        assert ItemFilter(item_ids=frozenset({ids[0]})).matches(kept[ids[0]])
        items = BenchItems([table])
        assert len(items) == len(kept) and sorted(items) == ids and items[ids[1]] == kept[ids[1]]
        with pytest.raises(KeyError):
            items["no-such-item"]


def test_two_benches_later_wins(fx: Fixture, part: tuple[Path, dict[str, Item]]) -> None:
    root, kept = part
    items = BenchItems([BenchTable(fx.bench), BenchTable(root)])
    whole = {it.item_id: it for it in fx.items}
    assert len(items) == len(whole) and sorted(items) == sorted(whole)
    assert items.fetch(whole) == whole


def test_stored_responses_list_the_answers_that_count(tmp_path: Path) -> None:
    """``StoredResponses`` iterates the (item, mode) keys of the store's answers that count (its batches' named
    columns), one per key in (mode, item id) order, and reads each answer when asked."""
    from medr2 import Prediction
    from medr2.run.store import Row, Store

    rows = [Row(Prediction(model_key="m", item_id=f"i{k % 3}", mode=("independent", "blind")[k // 3],
                           request_hash=f"h{k}", raw=f"A{k}", status="ok")) for k in range(6)]
    with Store.open(tmp_path, write=True) as st:
        st.put_many(rows)
    responses = inputs.StoredResponses(tmp_path)
    assert list(responses) == [(f"i{k}", "blind") for k in range(3)] + [(f"i{k}", "independent") for k in range(3)]
    assert len(responses) == 6 and responses[("i1", "blind")].raw == "A4"
