"""``medr2 eval`` with baseline:prior and baseline:random over the whole sample bench in every mode."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medr2.bench import load_bench
from medr2.cli import app as cli_app
from medr2.run.prompts import MODES
from medr2.run.store import Store


@pytest.mark.slow
@pytest.mark.parametrize("model", ["baseline:prior", "baseline:random"])
def test_sample_bench_every_mode(sample_bench_dir: Path, tmp_path: Path, model: str) -> None:
    app = cli_app
    run = tmp_path / "run"
    res = CliRunner().invoke(app, ["eval", "--split", "all", "--bench", str(sample_bench_dir), "--model", model,
                                   "--out", str(run),
                                   "--mode", ",".join(MODES), "--no-progress"])
    assert res.exit_code == 0, res.output
    n = len(load_bench(sample_bench_dir).items)
    with Store.open(run) as st:
        rows = list(st.iter_predictions())
    assert Counter(r.prediction.mode for r in rows) == {m: n for m in MODES}
    assert all(r.prediction.status == "ok" and r.prediction.raw is not None for r in rows)
    assert len({(r.prediction.item_id, r.prediction.mode) for r in rows}) == len(rows)
