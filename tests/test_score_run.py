"""`medr2 score RUN`: a real bench, a real run (baselines through the runner), scores.parquet + metrics.json."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from medr2 import Bench, ModelConfig
from medr2.run.runner import EvalConfig, run_eval
from medr2.scoring.scorer import load_table, score_run
from tests.run_fixtures import make_bench


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Bench:
    return make_bench(tmp_path_factory.mktemp("bench"), n_cases=6)


def _run(bench: Bench, model: str, out: Path, modes: tuple[str, ...] = ("independent",)) -> Path:
    run_eval(EvalConfig(split="all", bench=bench.root, model=ModelConfig(model), out=out, modes=modes))
    return out


def test_score_run_writes_both_files(bench: Bench, tmp_path: Path) -> None:
    run = _run(bench, "baseline:oracle", tmp_path / "run", ("independent", "chain-own"))
    metrics = score_run(run, mixed_splits=True, seed=0, n_resamples=100)
    table = pq.read_table(run / "scores.parquet")
    assert table.column_names == ["item_id", "case_id", "model_key", "mode", "task", "stage", "form", "variant",
                                  "parent_id", "split", "verdict", "parsed", "method", "iou", "text_metrics", "reason"]
    assert table.num_rows == 2 * len(bench.items)
    assert set(table.column("reason").to_pylist()) == {None}  # only unparsed answers carry a reason
    assert set(table.column("verdict").to_pylist()) == {"correct"}
    on_disk = json.loads((run / "metrics.json").read_text())
    assert on_disk == json.loads(json.dumps(metrics))
    assert on_disk["run"]["model"]["key"] == "baseline:oracle"
    assert on_disk["run"]["box_convention"]["space"] == "pixel"
    for mode in ("independent", "chain-own"):
        assert on_disk["modes"][mode]["overall"]["value"] == 1.0
    before = (run / "metrics.json").read_bytes(), (run / "scores.parquet").read_bytes()
    score_run(run, mixed_splits=True, seed=0, n_resamples=100)
    assert ((run / "metrics.json").read_bytes(), (run / "scores.parquet").read_bytes()) == before  # deterministic
    tidy = load_table(run)
    assert len(tidy) == table.num_rows and tidy["correct"].all()


def test_follow_hint_run(bench: Bench, tmp_path: Path) -> None:
    run = _run(bench, "baseline:follow-hint", tmp_path / "run")
    m = score_run(run, mixed_splits=True, n_resamples=50)["modes"]["independent"]
    assert m["prompt_reliance"]["MFR"]["value"] == 1.0
    assert m["prompt_reliance"]["MFR"]["n"] == sum(1 for it in bench.items if it.lure)
    # attack success: every pair whose parent answer is not the lure moved to the lure, per code alike
    assert m["attacks"]["ASR"]["value"] == 1.0 and m["attacks"]["ASR"]["n"] > 0
    assert all(v["value"] == 1.0 for k, v in m["attacks"].items() if k.startswith("ASR_"))


def test_cli(bench: Bench, tmp_path: Path) -> None:
    run = _run(bench, "baseline:random", tmp_path / "run")
    cli = [sys.executable, "-m", "medr2.cli", "score", str(run), "--mixed-splits", "--resamples", "50"]
    done = subprocess.run(cli, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "overall" in done.stdout and (run / "metrics.json").is_file()
    assert re.search(r"overall \d\.\d{3} \[[^]]+\]†? \(n=[\d,]+, [\d,]+ cases?\)", done.stdout), done.stdout  # its n
    bad = subprocess.run([sys.executable, "-m", "medr2.cli", "score", str(tmp_path / "nope"), "--mixed-splits"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "manifest" in bad.stderr


def test_cli_workers_give_the_same_files(bench: Bench, tmp_path: Path) -> None:
    """``medr2 score --workers 2`` writes the bytes of the single-process command; ``--workers 0`` is a usage
    error."""
    run = _run(bench, "baseline:random", tmp_path / "run")
    got = []
    for workers in ("1", "2"):
        cli = [sys.executable, "-m", "medr2.cli", "score", str(run), "--mixed-splits", "--resamples", "50",
               "--workers", workers]
        done = subprocess.run(cli, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        got.append({f: (run / f).read_bytes() for f in ("scores.parquet", "metrics.json")})
    assert got[0] == got[1]
    bad = subprocess.run([sys.executable, "-m", "medr2.cli", "score", str(run), "--mixed-splits", "--workers", "0"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--workers" in bad.stderr


def test_answer_memos_are_bounded_and_skip_long_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The choice and box memos of a scoring process hold at most ``_MEMO_MAX`` entries (cleared when full) and
    never an answer longer than ``_MEMO_RAW_MAX``; the scores are those of scoring without any memo."""
    import medr2.scoring.scorer as scorer
    from medr2 import BoxConvention
    from medr2.scoring.scorer import score_items
    from tests.score_fixtures import make_items, predict

    items = make_items()
    preds = [p for spec in ("baseline:random", "baseline:oracle") for p in predict(spec, items)]
    long = [p.model_copy(update={"raw": "I think. " * 40 + p.raw}) for p in preds if p.raw]
    by_id = {it.item_id: it for it in items}
    monkeypatch.setattr(scorer, "_MEMO_MAX", 1 << 30)
    scorer._CHOICE_MEMO.clear()
    scorer._BOX_MEMO.clear()
    want = score_items(by_id, preds + long, BoxConvention())
    assert scorer._CHOICE_MEMO and all(len(k[1]) <= scorer._MEMO_RAW_MAX for k in scorer._CHOICE_MEMO)
    assert scorer._BOX_MEMO and all(len(k[0]) <= scorer._MEMO_RAW_MAX for k in scorer._BOX_MEMO)
    assert max(len(p.raw or "") for p in long) > scorer._MEMO_RAW_MAX
    monkeypatch.setattr(scorer, "_MEMO_MAX", 3)
    scorer._CHOICE_MEMO.clear()
    scorer._BOX_MEMO.clear()
    got = score_items(by_id, preds + long, BoxConvention())
    assert 0 < len(scorer._CHOICE_MEMO) <= 3 and 0 < len(scorer._BOX_MEMO) <= 3
    assert got == want
    monkeypatch.setattr(scorer, "_MEMO_MAX", 1)  # one kept: nearly every answer read again
    scorer._CHOICE_MEMO.clear()
    scorer._BOX_MEMO.clear()
    assert score_items(by_id, preds + long, BoxConvention()) == want


def test_answers_for_items_not_in_the_bench_are_quarantined_in_stored_order(bench: Bench, tmp_path: Path) -> None:
    """Stored answers whose item is not in the bench are quarantined with their request hash, in the order they
    were stored, and the rest is scored as if they were not there; a run without them writes no quarantine."""
    from medr2 import Prediction
    from medr2.run.store import Store
    from medr2.scoring.scorer import QUARANTINE_FILE

    run = _run(bench, "baseline:oracle", tmp_path / "run")
    clean = score_run(run, mixed_splits=True, seed=0, n_resamples=50)
    assert clean["run"]["quarantined"] == 0 and not (run / QUARANTINE_FILE).exists()
    scores = (run / "scores.parquet").read_bytes()
    strangers = [("zz-not-here", "h-stranger-1"), ("00-not-here", "h-stranger-2"), ("mm-not-here", "h-stranger-3")]
    with Store.open(run, write=True) as store:
        for item_id, request_hash in strangers:
            store.put(Prediction(model_key="baseline:oracle", item_id=item_id, mode="independent",
                                 request_hash=request_hash, raw="A", status="ok"))
    got = score_run(run, mixed_splits=True, seed=0, n_resamples=50)
    lines = [json.loads(line) for line in (run / QUARANTINE_FILE).read_text().splitlines()]
    assert [(e["record"], e["field"], e["stage"]) for e in lines] == [(h, "item_id", "score") for _, h in strangers]
    assert [e["reason"] for e in lines] == [f"item {i} is not in the bench" for i, _ in strangers]
    assert got["run"]["quarantined"] == 3 and got["run"]["n_predictions"] == clean["run"]["n_predictions"]
    assert (run / "scores.parquet").read_bytes() == scores
    assert got["modes"] == clean["modes"]
