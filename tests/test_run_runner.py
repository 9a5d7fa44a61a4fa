"""Runner: every mode with baselines, resume, shards + merge, manifest, the eval/merge commands."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from medr2 import BadInput, BoxConvention, ModelConfig, Request, Response
from medr2.bench import load_bench
from medr2.bench.select import parse_shard, select_items, shard_index
from medr2.cli import app as cli_app
from medr2.run.merge import merge_runs
from medr2.run.prompts import MODES
from medr2.run.runner import EvalConfig, run_eval
from medr2.run.store import Store
from tests.run_fixtures import make_bench

ALL_MODES = tuple(MODES)


@pytest.fixture(scope="module")
def bench_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bench")
    make_bench(root, n_cases=6)
    return root


def _rows(run: Path) -> list:
    with Store.open(run) as st:
        return list(st.iter_predictions())


def _app() -> typer.Typer:
    return cli_app


@pytest.mark.parametrize("model", ["baseline:prior", "baseline:random"])
def test_cli_eval_every_mode(bench_root: Path, tmp_path: Path, model: str) -> None:
    run = tmp_path / "run"
    res = CliRunner().invoke(_app(), ["eval", "--split", "all", "--bench", str(bench_root), "--model", model,
                                      "--out", str(run),
                                      "--mode", "independent,chain-own", "--mode", "chain-gold",
                                      "--mode", "chain-misleading,blind", "--mode", "reasoning", "--no-progress"])
    assert res.exit_code == 0, res.output
    n = len(load_bench(bench_root).items)
    rows = _rows(run)
    assert Counter(r.prediction.mode for r in rows) == {m: n for m in ALL_MODES}
    assert all(r.prediction.status == "ok" for r in rows)
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["medr2_version"] and "git_commit" in manifest
    assert manifest["bench"]["checksum"] == load_bench(bench_root).checksum
    assert manifest["model"]["box_convention"] == {"space": "pixel", "resize": "none", "params": {}}
    assert manifest["identity"]["model_key"] == model
    assert manifest["invocations"][0]["command"] and manifest["invocations"][0]["status"] == "complete"
    assert manifest["modes"] == sorted(ALL_MODES)
    # rerunning the same command sends nothing
    res = CliRunner().invoke(_app(), ["eval", "--split", "all", "--bench", str(bench_root), "--model", model,
                                      "--out", str(run),
                                      "--mode", ",".join(ALL_MODES), "--no-progress"])
    assert res.exit_code == 0 and "0 ok" in res.output
    assert len(_rows(run)) == len(rows)


def test_misleading_mode_records_the_misled_step(bench_root: Path, tmp_path: Path) -> None:
    run_eval(EvalConfig(split="all", bench=bench_root, model=ModelConfig("baseline:oracle"), out=tmp_path / "r",
                        modes=("chain-misleading",)))
    rows = _rows(tmp_path / "r")
    chained = [r for r in rows if r.step and r.step > 1]
    assert chained and all(r.meta["misled_step"] == r.step - 1 for r in chained)
    assert all("misled_step" not in r.meta for r in rows if not r.step or r.step == 1)


def test_resume_into_other_settings_is_refused(bench_root: Path, tmp_path: Path) -> None:
    run_eval(EvalConfig(split="all", bench=bench_root, model=ModelConfig("baseline:oracle"), out=tmp_path / "r",
                        limit=5))
    with pytest.raises(BadInput, match="model_key"):
        run_eval(EvalConfig(split="all", bench=bench_root, model=ModelConfig("baseline:random"), out=tmp_path / "r",
                            limit=5))
    with pytest.raises(BadInput, match="generation"):
        run_eval(EvalConfig(split="all", bench=bench_root, model=ModelConfig("baseline:oracle", max_new_tokens=7),
                            out=tmp_path / "r"))


def test_shards_partition_by_case_and_merge_equals_unsharded(bench_root: Path, tmp_path: Path) -> None:
    modes = ("independent", "chain-own")
    full = tmp_path / "full"
    run_eval(EvalConfig(split="all", bench=bench_root, model=ModelConfig("baseline:random"), out=full, modes=modes))
    shards = []
    for i in range(3):
        d = tmp_path / f"s{i}"
        run_eval(EvalConfig(split="all", bench=bench_root, model=ModelConfig("baseline:random"), out=d, modes=modes,
                            shard=(i, 3)))
        shards.append(d)
    cases = [{r.prediction.item_id for r in _rows(d)} for d in shards]
    assert not (cases[0] & cases[1]) and not (cases[1] & cases[2])
    merged = merge_runs(shards, tmp_path / "merged")
    assert merged["shards_missing"] == [] and merged["identity"]["shard"] is None

    def key(rows: list) -> set:
        return {(r.prediction.item_id, r.prediction.mode, r.prediction.request_hash, r.prediction.raw) for r in rows}

    assert key(_rows(tmp_path / "merged")) == key(_rows(full))
    with pytest.raises(BadInput, match="twice"):
        merge_runs([shards[0], shards[0]], tmp_path / "m2")
    with pytest.raises(BadInput, match="already holds"):
        merge_runs(shards, tmp_path / "merged")


def test_merge_refuses_other_settings_or_bench(bench_root: Path, tmp_path: Path) -> None:
    run_eval(EvalConfig(split="all", bench=bench_root, model=ModelConfig("baseline:random"), out=tmp_path / "a",
                        shard=(0, 2)))
    run_eval(EvalConfig(split="all", bench=bench_root, model=ModelConfig("baseline:random", seed=5), out=tmp_path / "b",
                        shard=(1, 2)))
    with pytest.raises(BadInput, match="generation"):
        merge_runs([tmp_path / "a", tmp_path / "b"], tmp_path / "m")
    other = tmp_path / "bench2"
    make_bench(other, n_cases=3)
    run_eval(EvalConfig(split="all", bench=other, model=ModelConfig("baseline:random"), out=tmp_path / "c",
                        shard=(1, 2)))
    with pytest.raises(BadInput, match="bench_checksum"):
        merge_runs([tmp_path / "a", tmp_path / "c"], tmp_path / "m")
    res = CliRunner().invoke(_app(), ["merge", str(tmp_path / "a"), "--out", str(tmp_path / "m3")])
    assert res.exit_code == 0 and json.loads((tmp_path / "m3" / "manifest.json").read_text())["shards_missing"] == [
        "1/2"]


def test_selection_and_shard_parsing(bench_root: Path) -> None:
    bench = load_bench(bench_root)
    items, table = bench.items, bench.table()
    per_case = len(items) // 6
    limited = list(select_items(table, limit=2 * per_case + 3))
    assert len(limited) == 2 * per_case and len({it.case_id for it in limited}) == 2
    assert len(select_items(table, limit=1)) == per_case  # at least one whole case
    by_case = Counter(it.case_id for it in items)
    assert all(by_case[c] == n for c, n in Counter(it.case_id for it in limited).items())  # whole cases
    assert {it.variant for it in select_items(table, variants=["V8"])} == {"V8-noise-2"}
    assert {it.split for it in select_items(table, split="test")} == {"test"}
    shard = list(select_items(table, shard=(1, 2)))
    assert all(shard_index(it.case_id, 2) == 1 for it in shard)
    assert parse_shard("0/4") == (0, 4)
    for bad in ("4/4", "x", "1/0"):
        with pytest.raises(BadInput):
            parse_shard(bad)


class _FailingStep:
    """A tiny adapter object (what a user's own Python callable looks like) that fails one task."""

    key = "custom:fail-box"
    box_convention = BoxConvention()

    def settings(self) -> dict:
        return {}

    def generate(self, requests: list[Request]) -> list[Response]:
        return [Response("error", error="cannot draw boxes") if r.meta["item"].form == "box"
                else Response("ok", text="A") for r in requests]

    def close(self) -> None:
        return None


def test_chain_own_after_a_failed_step_and_retry_errors(bench_root: Path, tmp_path: Path) -> None:
    cfg = EvalConfig(split="all", bench=bench_root, model=ModelConfig("custom"), out=tmp_path / "r",
                     modes=("chain-own",))
    run_eval(cfg, adapter_factory=lambda _config: _FailingStep())
    rows = {r.prediction.item_id: r for r in _rows(tmp_path / "r")}
    later = [r for r in rows.values() if r.chain_id and r.step and r.step > 2 and r.meta["variant"] == "clean"]
    assert later and all(r.prediction.status == "error" and "earlier chain step 2" in (r.prediction.error or "")
                         for r in later)
    # rerun skips errors; --retry-errors resends them and replaces the rows (still one per item)
    again = run_eval(cfg, adapter_factory=lambda _config: _FailingStep())
    assert again.sent == 0
    cfg.retry_errors = True
    run_eval(cfg, adapter_factory=lambda _config: _FailingStep())
    rows2 = _rows(tmp_path / "r")
    assert len(rows2) == len(rows)


class _StreamOnly:
    """The openai adapter seen through the plain ``stream`` capability only (no ``stream_pull``):
    the runner plans each wave up front instead of lazily."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.key = inner.key
        self.box_convention = inner.box_convention

    def settings(self) -> dict[str, Any]:
        return self.inner.settings()

    def stream(self, requests: Any) -> Any:
        return self.inner.stream(list(requests))

    def generate(self, requests: Any) -> Any:
        return self.inner.generate(requests)

    def close(self) -> None:
        self.inner.close()


def test_lazy_planning_stores_the_same_rows_as_planning_up_front(bench_root: Path, tmp_path: Path) -> None:
    from medr2.models.openai import OpenAIAdapter
    from medr2.models.registry import load_adapter
    from medr2.run.runner import PullingAdapter
    from tests.openai_server import FaultPlan, OpenAIServer

    modes = ("independent", "chain-own", "blind")
    plan = FaultPlan(seed=5, permanent=lambda body: 400 if "Locate the lesion" in str(body["messages"][-1]) else None)
    tables = {}
    with OpenAIServer(plan) as srv:
        for name, wrap in (("pulled", lambda a: a), ("up front", _StreamOnly)):
            def factory(config: ModelConfig, wrap: Any = wrap) -> Any:
                return wrap(load_adapter(config))

            probe = factory(ModelConfig("openai:m", base_urls=(srv.url,)))
            assert isinstance(probe, PullingAdapter) == (name == "pulled") and isinstance(
                getattr(probe, "inner", probe), OpenAIAdapter)
            probe.close()
            cfg = EvalConfig(split="all", bench=bench_root,
                             model=ModelConfig("openai:m", base_urls=(srv.url,), concurrency=3, retries=0),
                             out=tmp_path / name, modes=modes)
            summary = run_eval(cfg, adapter_factory=factory)
            assert summary.modes["chain-own"].error > 0  # failed steps block later ones (stored as errors)
            tables[name] = sorted((r.prediction.request_hash, r.prediction.item_id, r.prediction.mode, r.step,
                                   r.chain_id, r.prediction.status, r.prediction.raw, r.prediction.error,
                                   json.dumps(r.meta, sort_keys=True), json.dumps(r.request))
                                  for r in _rows(tmp_path / name))
            again = run_eval(cfg, adapter_factory=factory)  # resume: everything is stored already
            assert again.sent == 0
    assert tables["pulled"] == tables["up front"]
    assert len(tables["pulled"]) == len(modes) * len(load_bench(bench_root).items)


def test_tampered_image_is_an_error_of_its_items_not_a_guess(tmp_path: Path) -> None:
    """``medr2 eval`` does not hash every image up front (a few items of a large bench would read them
    all): the adapter verifies each image it sends, so a tampered image makes its items ``error`` with
    the reason, and every other item is answered."""
    from tests.openai_server import FaultPlan, OpenAIServer

    root = tmp_path / "bench"
    make_bench(root, n_cases=3)
    bench = load_bench(root)
    victim = next(it.image for it in bench.items if it.image)
    path = root / victim
    path.write_bytes(path.read_bytes() + b"tampered")
    with pytest.raises(BadInput):
        load_bench(root)  # the full check still finds it
    with OpenAIServer(FaultPlan(seed=0)) as srv:
        summary = run_eval(EvalConfig(split="all", bench=root,
                                      model=ModelConfig("openai:m", base_urls=(srv.url,), concurrency=2, retries=0),
                                      out=tmp_path / "run"))
        sent = srv.stats.requests
    rows = _rows(tmp_path / "run")
    by_item = {it.item_id: it for it in bench.items}
    bad = [r.prediction for r in rows if by_item[r.prediction.item_id].image == victim]
    assert bad and all(p.status == "error" and "sha256" in (p.error or "") for p in bad)
    good = [r.prediction for r in rows if by_item[r.prediction.item_id].image != victim]
    assert good and all(p.status == "ok" for p in good)
    assert summary.modes["independent"].error == len(bad) and sent == len(good)
