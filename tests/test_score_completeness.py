"""Scoring an interrupted or partial run: a warning, ``complete: false`` with counts in metrics.json, and the
report says so; the plan is recomputed from the manifest's invocations exactly as the runner planned it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from medr2 import Bench, ModelConfig
from medr2.bench.select import select_items
from medr2.run.runner import EvalConfig, run_eval
from medr2.run.store import Store
from medr2.scoring.scorer import IncompleteRunWarning, score_run
from tests.run_fixtures import InterruptAfter, make_bench


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Bench:
    return make_bench(tmp_path_factory.mktemp("bench"), n_cases=4)


def _cfg(bench: Bench, out: Path, seed: int = 0, **kw: object) -> EvalConfig:
    kw.setdefault("split", "all")  # the whole fixture bench (train and test) unless a test names a split
    return EvalConfig(bench=bench.root, model=ModelConfig("baseline:oracle", batch_size=1, seed=seed), out=out,
                      **kw)  # type: ignore[arg-type]


def test_interrupted_run_is_marked_incomplete_then_complete_after_resume(bench: Bench, tmp_path: Path) -> None:
    run = tmp_path / "run"
    cfg = _cfg(bench, run, modes=("independent", "chain-gold"))
    assert run_eval(cfg, progress=InterruptAfter(7)).interrupted
    with pytest.warns(IncompleteRunWarning, match=r"incomplete run: .* planned answers missing"):
        m = score_run(run, mixed_splits=True, n_resamples=20)
    n = len(bench.items)
    assert m["complete"] is False
    plan = m["plan"]
    assert (plan["planned"], plan["answered"], plan["missing"]) == (2 * n, 7, 2 * n - 7)
    assert plan["modes"]["independent"] == {"planned": n, "answered": 7, "missing": n - 7}
    assert plan["modes"]["chain-gold"] == {"planned": n, "answered": 0, "missing": n}
    assert [u["status"] for u in plan["unfinished_invocations"]] == ["interrupted"]
    on_disk = json.loads((run / "metrics.json").read_text())
    assert on_disk["complete"] is False and on_disk["plan"] == json.loads(json.dumps(plan))

    cli = [sys.executable, "-m", "medr2.cli", "score", str(run), "--mixed-splits", "--resamples", "10"]
    done = subprocess.run(cli, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "incomplete run" in done.stderr and f"{2 * n - 7} of {2 * n} planned answers missing" in done.stderr

    run_eval(cfg)  # resume: the same command completes the run
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", IncompleteRunWarning)
        m2 = score_run(run, mixed_splits=True, n_resamples=20)
    assert m2["complete"] is True and m2["plan"]["missing"] == 0 and m2["plan"]["answered"] == 2 * n
    assert [u["status"] for u in m2["plan"]["unfinished_invocations"]] == ["interrupted"]  # history is kept


def test_plan_matches_what_the_runner_planned(bench: Bench, tmp_path: Path) -> None:
    """Variant filter + chain-own (which also asks the earlier clean steps), a limit, and a split: the plan
    recomputed at scoring equals the runner's own count, and a killed invocation (status left 'running')
    leaves its unasked items missing."""
    run = tmp_path / "run"
    first = run_eval(_cfg(bench, run, modes=("chain-own",), variants=("V8",)))
    second = run_eval(_cfg(bench, run, modes=("independent",), limit=10, split="test"))
    m = score_run(run, mixed_splits=True, n_resamples=10)
    assert m["complete"] is True
    assert m["plan"]["modes"]["chain-own"]["planned"] == first.modes["chain-own"].planned
    assert m["plan"]["modes"]["chain-own"]["planned"] > sum(1 for it in bench.items if it.variant.startswith("V8"))
    assert m["plan"]["modes"]["independent"]["planned"] == second.modes["independent"].planned

    manifest = json.loads((run / "manifest.json").read_text())
    manifest["invocations"].append({"command": ["medr2", "eval"], "started_at": 0, "modes": ["independent"],
                                    "variants": None, "split": None, "limit": None, "items": len(bench.items),
                                    "status": "running"})  # what a SIGKILL leaves behind
    (run / "manifest.json").write_text(json.dumps(manifest))
    with pytest.warns(IncompleteRunWarning, match="1 eval invocation"):
        m = score_run(run, mixed_splits=True, n_resamples=10)
    with Store.open(run) as st:
        stored = st.count(mode="independent")
    assert m["complete"] is False
    assert m["plan"]["modes"]["independent"] == {"planned": len(bench.items), "answered": stored,
                                                 "missing": len(bench.items) - stored}


def test_the_plan_of_a_stratified_limit_over_some_tasks_is_what_the_runner_asked(bench: Bench, tmp_path: Path,
                                                                               ) -> None:
    """``--task`` and ``--limit N --stratify`` (seeded by the model's seed) are recomputed at scoring as the runner
    selected them: a complete run is complete, and a killed one is missing exactly the items it did not ask."""
    run = tmp_path / "run"
    tasks = tuple(sorted({it.task for it in bench.items}))[:3]
    cfg = _cfg(bench, run, tasks=tasks, limit=9, stratify=("task", "variant"), seed=5)
    summary = run_eval(cfg)
    assert summary.modes["independent"].planned == 9
    m = score_run(run, mixed_splits=True, n_resamples=10)
    assert m["complete"] is True and m["plan"]["planned"] == 9
    with Store.open(run) as st:
        asked = {sp.prediction.item_id for sp in st.iter_predictions()}
    task_of = {it.item_id: it.task for it in bench.items}
    assert {task_of[i] for i in asked} == set(tasks)  # every task named, none other
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["invocations"].append({**manifest["invocations"][0], "limit": 12, "status": "running"})  # killed
    (run / "manifest.json").write_text(json.dumps(manifest))
    with pytest.warns(IncompleteRunWarning):
        m = score_run(run, mixed_splits=True, n_resamples=10)
    more = {it.item_id for it in select_items(bench.table(), split="all", tasks=tasks, limit=12,
                                              stratify=("task", "variant"), seed=5)}
    assert (m["plan"]["planned"], m["plan"]["answered"]) == (len(more | asked), len(asked))
    assert m["plan"]["missing"] == len(more - asked) > 0


def test_report_shows_an_incomplete_run(bench: Bench, tmp_path: Path) -> None:
    from medr2.reporting.write import write_report

    run = tmp_path / "run"
    run_eval(_cfg(bench, run), progress=InterruptAfter(5))
    with pytest.warns(IncompleteRunWarning):
        score_run(run, mixed_splits=True, n_resamples=10)
    html = write_report([run], tmp_path / "rep").read_text("utf-8")
    assert f"incomplete: 5 of {len(bench.items)} planned answers" in html
    assert f"Run run: incomplete run: {len(bench.items) - 5} of {len(bench.items)} planned answers missing" in html
    lb = json.loads((tmp_path / "rep" / "leaderboard.json").read_text())
    overall = lb["rows"][0]["metrics"]["overall"]
    assert overall["n_cases"] is not None and overall["low_n"] is True  # 4 cases: flagged
