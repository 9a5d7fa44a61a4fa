"""``medr2 eval --order``: the dispatch order of a wave's items (medr2.run.order). ``case`` sends the items of a
case back to back (for servers' prefix caches); every order sends every item once and stores the same rows."""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path
from typing import Any

import pytest

import medr2
from medr2 import BadInput, Item, ModelConfig
from medr2.bench.format import load_bench
from medr2.bench.select import select_items
from medr2.bench.table import BenchTable, ItemFilter
from medr2.run.order import ORDERS, get_order, group_by_case, merge_by_case
from medr2.run.runner import EvalConfig, run_eval
from medr2.run.store import Store
from tests.openai_server import OpenAIServer, default_answer
from tests.run_fixtures import make_bench

SELECTIONS: list[dict[str, Any]] = [
    {},  # streamed: merged from one cursor per variant
    {"split": "test"},
    {"variants": ("T2", "V8")},  # no clean cursor: the first variant's cursor leads
    {"limit": 50},  # held in memory (whole cases at a time)
    {"shard": (1, 3), "tasks": ("s1.modality", "s4.diagnosis")},
]


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("order") / "bench"
    make_bench(root, n_cases=24)
    return root


def case_runs(items: list[Item]) -> list[str]:
    """The case of each run of consecutive items of one case."""
    runs: list[str] = []
    for it in items:
        if not runs or runs[-1] != it.case_id:
            runs.append(it.case_id)
    return runs


@pytest.mark.parametrize("sel", SELECTIONS, ids=["all", "split", "variants", "limit", "shard-tasks"])
def test_case_order_groups_every_item_of_a_case(bench: Path, sel: dict[str, Any]) -> None:
    """The case order of a selection streamed from the columns (or held) is the bench order regrouped: the same
    items, each once; each case in one run, cases in order of first appearance, a case's items in bench order; the
    same over a loaded bench's records held in memory."""
    table = BenchTable.open(bench, image_hashes=False)
    want = list(select_items(table, **sel))
    assert list(get_order("bench")(select_items(table, **sel))) == want
    loaded = load_bench(bench, image_hashes=False).table()
    bench_order = list(get_order("bench")(select_items(loaded, **sel)))
    got = list(get_order("case")(select_items(table, **sel)))
    assert list(get_order("case")(select_items(loaded, **sel))) == got
    assert bench_order == want
    assert sorted(it.item_id for it in got) == sorted(it.item_id for it in want) and len(got) == len(want)
    assert got == group_by_case(want)
    runs = case_runs(got)
    assert len(runs) == len(set(runs)) == len({it.case_id for it in want})
    if "limit" in sel:  # a --limit selection is held whole cases at a time: grouped already
        assert case_runs(want) == runs
    else:  # the bench order splits cases; this one does not
        assert len(case_runs(want)) > len(runs)


def test_variant_ids_filter_is_exact(bench: Path) -> None:
    """``ItemFilter.variant_ids`` (the case order's cursors) matches ids exactly, where ``variants`` also matches
    a code prefix (``V8`` -> ``V8-noise-2``)."""
    table = BenchTable.open(bench, image_hashes=False)
    assert [it.variant for it in table.iter_items(ItemFilter(variant_ids=frozenset({"V8"})))] == []
    noisy = list(table.iter_items(ItemFilter(variant_ids=frozenset({"V8-noise-2"}))))
    assert noisy and noisy == list(table.iter_items(ItemFilter(variants=("V8",))))
    assert list(table.iter_items(ItemFilter(variants=("T2",), variant_ids=frozenset({"V8-noise-2"})))) == []


def test_merge_keeps_every_item_when_the_variants_disagree_on_the_case_order(bench: Path) -> None:
    """Cursors that list cases in different orders (a bench written by another tool) still give every item once;
    a case may then come out in more than one run."""
    items = load_bench(bench, image_hashes=False).items
    rng = random.Random(0)
    cursors = []
    for v in sorted({it.variant for it in items}):
        of_v = [it for it in items if it.variant == v]
        cases = list(dict.fromkeys(it.case_id for it in of_v))
        rng.shuffle(cases)
        cursors.append(iter(sorted(of_v, key=lambda it: cases.index(it.case_id))))
    merged = list(merge_by_case(cursors))
    assert sorted(it.item_id for it in merged) == sorted(it.item_id for it in items)
    assert len(case_runs(merged)) > len({it.case_id for it in items})  # grouped less well, nothing lost


def test_unknown_order_is_refused(bench: Path, tmp_path: Path) -> None:
    assert set(ORDERS.names()) >= {"bench", "case"}
    with pytest.raises(BadInput) as e:
        run_eval(EvalConfig(split="all", bench=bench, model=ModelConfig("baseline:random"), out=tmp_path / "run",
                            order="nosuch"))
    assert e.value.field == "--order" and "known: bench, case" in str(e.value)
    assert not (tmp_path / "run").exists()


class Recorder:
    """The test server's answer function: every request body in arrival order."""

    def __init__(self) -> None:
        self.bodies: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> str:
        with self._lock:
            self.bodies.append(json.dumps(body, sort_keys=True))
        return default_answer(body)


def stored(run: Path) -> list[tuple[Any, ...]]:
    with Store.open(run) as st:
        return [(r.prediction.request_hash, r.prediction.item_id, r.prediction.mode, r.prediction.raw,
                 r.prediction.status, r.prediction.prompt_tokens, r.prediction.completion_tokens, r.chain_id, r.step,
                 json.dumps(r.meta, sort_keys=True), json.dumps(r.request, sort_keys=True))
                for r in st.iter_predictions(with_request=True)]


def test_orders_store_the_same_answers_through_a_real_server(bench: Path, tmp_path: Path) -> None:
    """``medr2 eval`` against a local OpenAI-compatible server in each order: the same store rows (request
    hashes, answers, token counts, prompts, meta) and the same request bodies sent, each once; only the order
    they were sent in differs (one at a time here, so the store's insertion order is the sending order)."""
    modes = "independent,chain-own"
    loaded = load_bench(bench, image_hashes=False)
    rows: dict[str, list[tuple[Any, ...]]] = {}
    bodies: dict[str, list[str]] = {}
    for order in ("bench", "case"):
        rec = Recorder()
        with OpenAIServer(answer=rec) as srv:
            summary = medr2.evaluate(bench, "openai:m", tmp_path / order, split="all", mode=modes, base_url=srv.url,
                                     concurrency=1, order=order)
        assert summary.sent == 2 * len(loaded.items) and not summary.interrupted
        rows[order], bodies[order] = stored(tmp_path / order), rec.bodies
        manifest = json.loads((tmp_path / order / "manifest.json").read_text())
        assert manifest["invocations"][-1]["order"] == order
    assert sorted(rows["bench"]) == sorted(rows["case"])
    assert sorted(bodies["bench"]) == sorted(bodies["case"]) and len(bodies["case"]) == 2 * len(loaded.items)
    by_id = {it.item_id: it for it in loaded.items}
    independent = {o: [by_id[r[1]] for r in rows[o] if r[2] == "independent"] for o in rows}
    assert independent["bench"] == loaded.items  # sent in the bench's order
    assert independent["case"] == group_by_case(loaded.items)  # each case's items back to back
    assert len(case_runs(independent["case"])) == 24 < len(case_runs(independent["bench"]))
    # chain-own asks step by step; within each step's wave the case order groups the wave's items by case
    own = [by_id[r[1]] for r in rows["case"] if r[2] == "chain-own"]
    assert len(case_runs(own)) < len(case_runs([by_id[r[1]] for r in rows["bench"] if r[2] == "chain-own"]))
    # resuming in the other order finds everything stored
    with OpenAIServer() as srv:
        again = medr2.evaluate(bench, "openai:m", tmp_path / "case", split="all", mode=modes, base_url=srv.url,
                               order="bench")
    assert again.sent == 0 and srv.stats.requests == 0


def test_eval_sends_in_case_order_by_default(bench: Path, tmp_path: Path) -> None:
    """``medr2 eval`` without ``--order`` sends a case's items back to back (one at a time here) and says so in
    its manifest; ``Runner``'s own default keeps the items as given."""
    from medr2.run.order import DEFAULT_ORDER
    from medr2.run.runner import Runner

    assert DEFAULT_ORDER == "case" and Runner.__init__.__kwdefaults__["order"] == "bench"
    medr2.evaluate(bench, "baseline:random", tmp_path / "run", split="all", batch_size=1)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["invocations"][-1]["order"] == "case"
    by_id = {it.item_id: it for it in load_bench(bench, image_hashes=False).items}
    sent = [by_id[r[1]] for r in stored(tmp_path / "run")]
    assert len(case_runs(sent)) == 24
