"""``medr2 demo`` end to end, as a user runs it (a subprocess of the installed command line).

Slow: the full demo takes about ten minutes on two idle cores; the ``--quick`` one a few minutes.
The fast tests check the options, the folder rules and the summary table on hand-made metrics."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from medr2 import BadInput
from medr2.demokit import DEMO_FILE, SUMMARY_FILE, DemoConfig, demo_config, run_demo
from medr2.demokit.summary import ROBUSTNESS_COLUMNS, SummaryColumn, _lookup

RUNS = ("random", "prior", "oracle", "tiny-before", "tiny-flat", "tiny-chain")


def _demo(out: Path, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-c", "from medr2.cli import main; main()", "demo", "--out", str(out), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


def _metric(run: Path, mode: str, *path: str) -> dict:
    node = json.loads((run / "metrics.json").read_text("utf-8"))["modes"][mode]
    for key in path:
        node = node[key]
    return node


def _check_outputs(out: Path, cfg: DemoConfig) -> None:
    record = json.loads((out / DEMO_FILE).read_text("utf-8"))
    assert record["status"] == "complete"
    assert record["config"] == cfg.identity()
    assert [s["stage"] for s in record["stages"]][:2] == ["build the sample bench", "build the tiny VLM"]
    assert all(s["seconds"] >= 0 and s["cpu_s"] >= 0 for s in record["stages"])
    assert (out / "bench" / "manifest.json").is_file()
    assert (out / "models" / "tiny" / "config.json").is_file()
    for strategy in ("flat", "chain"):
        ft = json.loads((out / "models" / f"tiny-{strategy}" / "finetune.json").read_text("utf-8"))
        assert ft["config"]["strategy"] == strategy
        assert [s["stage"] for s in ft["stages"]] == ["pretrain", "full", "lora"]
        assert (out / "models" / f"tiny-{strategy}" / "merged" / "config.json").is_file()
    for name in RUNS:
        run = out / "runs" / name
        # the demo's model settings reached each run (tests/test_model_entry_points.py leaves the demo to this)
        generation = json.loads((run / "manifest.json").read_text("utf-8"))["identity"]["generation"]
        assert (generation["seed"], generation["max_new_tokens"]) == (cfg.seed, cfg.max_new_tokens)
        metrics = json.loads((run / "metrics.json").read_text("utf-8"))
        assert set(metrics["modes"]) == {"independent", "chain-own", "blind"}
        overall = metrics["modes"]["independent"]["overall"]
        assert overall["value"] is not None and overall["lo"] <= overall["value"] <= overall["hi"]
        assert overall["n_cases"] >= 2
    # the oracle is the sanity ceiling
    assert _metric(out / "runs" / "oracle", "independent", "overall")["value"] == 1.0
    # the untrained tiny model generates nothing readable (an answer that runs into the token limit is "truncated"
    # rather than "unparsed": both count as unreadable); with choice=loglik its closed answers are choices, each
    # with every option's log-likelihood in its notes
    import pyarrow.parquet as pq

    scores = pq.read_table(out / "runs" / "tiny-before" / "scores.parquet", columns=["form", "verdict"]).to_pandas()
    closed = scores["form"].isin(["mcq", "yesno"]) if cfg.choice == "loglik" else scores["form"].isin([])
    assert scores[~closed]["verdict"].isin(["unparsed", "truncated"]).mean() > 0.9
    assert (scores[closed]["verdict"].isin(["correct", "wrong"])).all()
    if cfg.choice == "loglik":
        assert closed.sum() > 0.5 * len(scores)
        with sqlite3.connect(out / "runs" / "tiny-before" / "store.sqlite") as db:
            metas = [json.loads(m) for (m,) in db.execute("SELECT meta FROM predictions")]
        noted = [m for m in metas if any(n.startswith("choice by log-likelihood") for n in m.get("notes", ()))]
        assert len(noted) == int(closed.sum())
    # fine-tuning taught the tiny model the answer format at least (measured, not assumed better)
    for strategy in ("flat", "chain"):
        assert _metric(out / "runs" / f"tiny-{strategy}", "independent", "rates", "unparsed")["value"] < 0.5
    # robustness metrics exist for the fine-tuned models
    for col in ROBUSTNESS_COLUMNS:
        if col.header.startswith(("MFR", "PRI", "FlipRate", "BlindGap", "VRS")):  # PRI: the demo builds T2 and T3
            m = _lookup(json.loads((out / "runs" / "tiny-flat" / "metrics.json").read_text("utf-8")), col)
            assert isinstance(m, dict) and m["value"] is not None, col.header

    summary = (out / SUMMARY_FILE).read_text("utf-8")
    for name in RUNS:
        assert f"| {name} |" in summary
    assert "## Change after fine-tuning" in summary and "## Time per stage" in summary
    index = (out / "report" / "index.html").read_text("utf-8")
    for name in RUNS:
        assert name in index
    board = (out / "report" / "leaderboard.md").read_text("utf-8")
    assert board.count("| tiny-") >= 9  # 3 tiny runs x 3 modes


@pytest.mark.slow
def test_quick_demo_completes_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    res = _demo(out, "--quick", timeout=1800)
    assert res.returncode == 0, res.stderr[-4000:]
    assert "summary:" in res.stdout
    _check_outputs(out, demo_config(quick=True))
    first = (out / "runs" / "tiny-chain" / "metrics.json").read_bytes()
    first_stages = {s["stage"]: s for s in json.loads((out / DEMO_FILE).read_text("utf-8"))["stages"]}
    # a rerun resumes: nothing is asked or trained again, and the scores are the same
    res2 = _demo(out, "--quick", timeout=900)
    assert res2.returncode == 0, res2.stderr[-4000:]
    record = json.loads((out / DEMO_FILE).read_text("utf-8"))
    stages = {s["stage"]: s for s in record["stages"]}
    for title in ("build the sample bench", "build the tiny VLM", "fine-tune (flat)", "evaluate tiny-before"):
        # reused on resume: the record keeps the time and note of the run that did the work
        assert stages[title]["reused"] is True and stages[title]["resume_note"].startswith("reused"), title
        assert stages[title]["seconds"] == first_stages[title]["seconds"], title
        assert stages[title]["note"] == first_stages[title]["note"], title
    assert not stages["score every run"].get("reused")  # scoring really runs again
    assert "(reused on resume)" in (out / "summary.md").read_text("utf-8")
    assert (out / "runs" / "tiny-chain" / "metrics.json").read_bytes() == first
    # a resume may add a strategy: only its model is trained, the summary compares it with flat
    from tests.test_demo_strategies import check_extra_strategy

    res3 = _demo(out, "--quick", "--strategies", "augmented", timeout=1800)
    assert res3.returncode == 0, res3.stderr[-4000:]
    stages3 = {s["stage"]: s for s in json.loads((out / DEMO_FILE).read_text("utf-8"))["stages"]}
    assert stages3["fine-tune (flat)"]["reused"] is True and stages3["fine-tune (chain)"]["reused"] is True
    check_extra_strategy(out)


def _fingerprint(out: Path) -> dict[str, str]:
    """sha256 of each fine-tuned model's merged weights and of each run's stored answers."""
    import hashlib
    import sqlite3

    got = {}
    for strategy in ("flat", "chain"):
        weights = out / "models" / f"tiny-{strategy}" / "merged" / "model.safetensors"
        got[f"tiny-{strategy} weights"] = hashlib.sha256(weights.read_bytes()).hexdigest()
    for name in RUNS:
        con = sqlite3.connect(f"file:{out / 'runs' / name / 'store.sqlite'}?mode=ro", uri=True)
        # (not the request hash: it includes the model key, which holds the folder's path)
        rows = con.execute("SELECT item_id, mode, raw, status, completion_tokens, finish_reason FROM predictions "
                           "ORDER BY item_id, mode").fetchall()
        con.close()
        assert rows, name
        got[f"{name} answers"] = hashlib.sha256(json.dumps(rows).encode()).hexdigest()
    return got


@pytest.mark.slow
def test_quick_demo_lanes_compute_the_same(tmp_path: Path) -> None:
    """One lane and two: the same fine-tuned weights (bytes) and the same stored answers (12 cases: the
    comparison, not the size, is the point; CI's time goes to the quick and full demos above and below)."""
    runs = {}
    for lanes in ("1", "2"):
        out = tmp_path / f"lanes{lanes}"
        res = _demo(out, "--quick", "--cases", "12", "--lanes", lanes, timeout=1800)
        assert res.returncode == 0, res.stderr[-4000:]
        record = json.loads((out / DEMO_FILE).read_text("utf-8"))
        assert record["lanes"] == int(lanes)
        assert {s.get("lane", 1) for s in record["stages"]} == ({1} if lanes == "1" else {1, 2})
        runs[lanes] = _fingerprint(out)
    assert runs["1"] == runs["2"]


@pytest.mark.slow
@pytest.mark.full_demo
def test_full_demo(tmp_path: Path) -> None:
    """The README's first command as a user runs it. Deselected by .ci/run (12-13 min of CI's time, where the
    ``--quick`` demos above run every stage of the same code); run by hand with ``pytest -m full_demo``."""
    out = tmp_path / "demo"
    res = _demo(out, timeout=3600)
    assert res.returncode == 0, res.stderr[-4000:]
    _check_outputs(out, demo_config())


def test_demo_refuses_a_foreign_folder(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine", "utf-8")
    with pytest.raises(BadInput, match="not empty"):
        run_demo(tmp_path, demo_config(quick=True))
    assert (tmp_path / "notes.txt").read_text("utf-8") == "mine"


def test_demo_refuses_another_configuration(tmp_path: Path) -> None:
    cfg = demo_config(quick=True)
    (tmp_path / DEMO_FILE).write_text(json.dumps({"config": cfg.identity()}), "utf-8")
    with pytest.raises(BadInput, match="another configuration"):
        run_demo(tmp_path, demo_config(quick=True, seed=1))


def test_demo_record_round_trips_for_resume() -> None:
    cfg = demo_config(quick=True)
    assert json.loads(json.dumps({"config": cfg.identity()}))["config"] == cfg.identity()


def test_demo_config_options() -> None:
    assert demo_config().cases == 200 and demo_config(quick=True).cases == 40
    assert demo_config(cases=60, seed=3).cases == 60 and demo_config(seed=3).seed == 3
    assert demo_config(threads=1).identity() == demo_config().identity()  # threads do not change results
    with pytest.raises(BadInput):
        demo_config(cases=3)
    assert demo_config().choice == "loglik" and demo_config(choice="generate").choice == "generate"
    assert demo_config(choice="generate").identity() != demo_config().identity()  # answers differ: no resume across


def test_demo_bad_choice_is_exit_2(tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, "-c", "from medr2.cli import main; main()", "demo", "--out",
                          str(tmp_path / "d"), "--choice", "beam"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and "--choice" in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "d").exists()


def test_demo_bench_splits_by_case_and_says_so(tmp_path: Path) -> None:
    from medr2.demokit.summary import write_summary

    assert demo_config().split_unit == "case" and demo_config(quick=True).split_unit == "case"
    d = tmp_path / "runs" / "a"
    d.mkdir(parents=True)
    (d / "metrics.json").write_text(json.dumps({"modes": {}, "run": {"bench": {"name": "x"}}}), "utf-8")
    for unit, says in (("case", "Splits by **case**"), ("patient", "Splits by **patient**")):
        cfg = replace(demo_config(), split_unit=unit)
        (tmp_path / DEMO_FILE).write_text(json.dumps({"config": cfg.identity()}), "utf-8")
        text = write_summary(tmp_path / "summary.md", {"a": d}, roles={}, before="none", after=[])
        assert says in text and ("not generalisation to new patients" in text) == (unit == "case")


def test_summary_lookup_takes_the_last_chain_stage() -> None:
    metrics = {"modes": {"chain-own": {"chain": {"ChainAcc<=s": {"1": {"value": 0.9}, "4": {"value": 0.2},
                                                                  "3": {"value": 0.4}}}}}}
    col = SummaryColumn("x", "chain-own", ("chain", "ChainAcc<=s", "LAST"))
    assert _lookup(metrics, col) == {"value": 0.2}
    assert _lookup(metrics, SummaryColumn("y", "independent", ("overall",))) is None


def test_summary_tables_show_values_with_intervals(tmp_path: Path) -> None:
    from medr2.demokit.summary import write_summary

    def m(v: float | None, lo: float | None = None, hi: float | None = None) -> dict:
        return {"value": v, "lo": lo, "hi": hi, "n": 10, "n_cases": 5}

    runs = {}
    for name, acc in (("a", 0.5), ("b", 0.25)):
        d = tmp_path / name
        d.mkdir()
        modes = {"independent": {"overall": m(acc, acc - 0.1, acc + 0.1), "stages": {"1": m(acc, 0.0, 1.0)},
                                 "rates": {"unparsed": m(0.0, 0.0, 0.0)},
                                 "prompt_reliance": {"MFR": m(0.3, 0.2, 0.4)}}}
        (d / "metrics.json").write_text(json.dumps({"modes": modes, "run": {"bench": {"name": "x"}}}), "utf-8")
        runs[name] = d
    text = write_summary(tmp_path / "summary.md", runs, roles={"a": "first"}, before="none", after=[])
    # every value with its n and cases, marked † (5 cases < 10)
    assert "| a | first | 0.50 [0.40, 0.60]† (n=10, 5 cases) | 0.50 [0.00, 1.00]† (n=10, 5 cases) | n/a |" in text
    assert "| b |  | 0.25 [0.15, 0.35]† (n=10, 5 cases) |" in text
    assert "0.30 [0.20, 0.40]† (n=10, 5 cases)" in text
    assert "† fewer than 10 cases" in text
    assert "Change after fine-tuning" not in text  # no before/after runs given
    assert (tmp_path / "summary.md").read_text("utf-8") == text


def test_resume_keeps_the_time_of_the_run_that_did_the_work() -> None:
    from medr2.demokit.run import _keep_first_time

    first = {"stage": "fine-tune (flat)", "seconds": 81.2, "cpu_s": 150.3, "note": "620 examples; lora 40 steps"}
    resumed = {"stage": "fine-tune (flat)", "seconds": 0.1, "cpu_s": 0.0, "note": "reused the model fine-tuned earlier"}
    kept = _keep_first_time(resumed, first)
    assert (kept["seconds"], kept["cpu_s"], kept["note"]) == (81.2, 150.3, first["note"])
    assert kept["reused"] is True and kept["resume_seconds"] == 0.1
    # a second resume still shows the first run's figures
    again = _keep_first_time({**resumed, "seconds": 0.2}, kept)
    assert (again["seconds"], again["resume_seconds"], again["reused"]) == (81.2, 0.2, True)
    # work done again (scoring) reports its own time; a stage never recorded before reports its own time
    score = {"stage": "score every run", "seconds": 12.0, "cpu_s": 11.0, "note": "7 runs scored"}
    assert _keep_first_time(score, {**score, "seconds": 30.0}) == score
    assert _keep_first_time(resumed, None) == resumed


def test_an_interrupted_resume_keeps_the_times_of_the_stages_it_did_not_reach() -> None:
    """First run complete; a resume interrupted in stage 3 must still record stages 3-4 with the first
    run's times, so the next resume (which reuses them) shows what the work cost, not ~0 s."""
    from medr2.demokit.run import _keep_first_time, _recorded_stages

    titles = ["build the sample bench", "build the tiny VLM", "fine-tune (flat)", "score every run"]
    first = [{"stage": t, "seconds": 10.0 * (i + 1), "cpu_s": 5.0 * (i + 1), "note": f"did {t}"}
             for i, t in enumerate(titles)]
    earlier = {s["stage"]: s for s in first}
    # the resume reuses stages 1-2 and is interrupted during stage 3
    done = [_keep_first_time({"stage": t, "seconds": 0.1, "cpu_s": 0.0, "note": "reused it"}, earlier[t])
            for t in titles[:2]]
    record = _recorded_stages(done, earlier, titles)
    assert [s["stage"] for s in record] == titles
    assert [s["seconds"] for s in record] == [10.0, 20.0, 30.0, 40.0]
    assert [bool(s.get("reused")) for s in record] == [True, True, False, False]
    # the next resume reuses stage 3 too: it still finds the first run's time in the record
    again = {s["stage"]: s for s in record}
    kept = _keep_first_time({"stage": titles[2], "seconds": 0.2, "cpu_s": 0.0, "note": "reused it"}, again[titles[2]])
    assert (kept["seconds"], kept["cpu_s"], kept["reused"]) == (30.0, 15.0, True)
    # a stage no run has reached yet is simply absent; what this run did wins over the record
    assert _recorded_stages(done, {}, titles) == done
    redone = {"stage": titles[3], "seconds": 7.0, "cpu_s": 6.0, "note": "scored"}
    assert _recorded_stages([*done, redone], earlier, titles)[3] == redone


def test_change_table_reports_the_cluster_test_beside_mcnemar(tmp_path: Path) -> None:
    from medr2.demokit.summary import change_table
    from medr2.scoring.metrics import compare_runs
    from medr2.scoring.scorer import load_table, score_run
    from tests.report_fixtures import make_fixture

    fx = make_fixture(tmp_path / "fx")
    for r in fx.runs:
        score_run(r, n_resamples=20)
    runs = {"before": fx.runs[0], "after": fx.runs[1]}
    lines = change_table(runs, ["before"], ["after"], seed=0, resamples=20)
    assert "p (cases, cluster test)" in lines[0] and "McNemar p (items)" in lines[0]
    cmp = compare_runs(load_table(fx.runs[1]), load_table(fx.runs[0]), seed=0, n_resamples=20)
    row = next(ln for ln in lines[2:] if "| independent |" in ln)
    cells = [c.strip() for c in row.strip("|").split("|")]
    t = cmp["modes"]["independent"]
    assert cells[-2] == f"{t['cluster_test']['p']:.2g}" and cells[-1] == f"{t['mcnemar']['p']:.2g}"
