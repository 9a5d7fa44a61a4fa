"""Console progress: plain periodic lines with counts and ETA when the output is not a terminal (a log or a
pipe), a rich bar on a terminal; ``medr2 report`` prints its steps."""

from __future__ import annotations

import io
from pathlib import Path

from typer.testing import CliRunner

from medr2.progress import Bar, Plain, for_console


class _Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_plain_lines_with_counts_and_eta() -> None:
    out, clock = io.StringIO(), _Clock()
    p = Plain("medr2 build", out, every=10.0, clock=clock)
    p.step("cases", 200)
    for _ in range(50):
        clock.t += 0.125
        p.advance()  # 6.25 s: no line yet
    for _ in range(50):
        clock.t += 0.25
        p.advance()  # a line once 10 s have passed (at the 65th), the next not before 20 s
    p.step("writing")
    clock.t += 1.5
    p.close()
    lines = out.getvalue().splitlines()
    assert lines[0] == "medr2 build: cases (0/200) ..."
    assert lines[1] == "medr2 build: cases 65/200 (32%), 10.0 s, ETA 20.8 s"  # 10 s x 135/65 still to do
    assert lines[2] == "medr2 build: cases 100/200 (50%), 18.8 s: done"
    assert lines[3] == "medr2 build: writing ..."
    assert lines[4] == "medr2 build: writing, 1.5 s: done"
    assert len(lines) == 5
    assert all(len(line) <= 80 for line in lines)


def test_console_choice() -> None:
    class _Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert isinstance(for_console("x", stream=io.StringIO()), Plain)
    bar = for_console("x", stream=_Tty())
    assert isinstance(bar, Bar)
    bar.step("a", 3)
    bar.advance(3)
    bar.close()


def test_report_command_prints_its_steps(tmp_path: Path) -> None:
    from medr2.cli import app
    from tests.report_fixtures import make_fixture

    fx = make_fixture(tmp_path)
    res = CliRunner().invoke(app, ["report", *map(str, fx.runs), "--out", str(tmp_path / "r"), "--max-items", "10"])
    assert res.exit_code == 0, res.output
    text = res.output
    for step in ("reading runs (0/2) ...", "reading runs 2/2 (100%)", "plots (0/", "item browser (thumbnails) 10/10",
                 "writing index.html"):
        assert f"medr2 report: {step}" in text, text


def test_score_run_reports_its_steps_and_counts(tmp_path: Path) -> None:
    from medr2.scoring.scorer import score_run
    from tests.report_fixtures import make_fixture

    fx = make_fixture(tmp_path)
    out = io.StringIO()
    progress = Plain("medr2 score", out)
    score_run(fx.runs[0], n_resamples=50, progress=progress)
    progress.close()
    text = out.getvalue()
    n = len(fx.items)
    assert f"medr2 score: scoring answers (0/{n})" in text
    assert f"medr2 score: scoring answers {n}/{n} (100%)" in text  # every answer counted once
    # the fixture's few cases are one chunk of cases (medr2.scoring.stream.CaseChunks)
    assert "medr2 score: metrics (1 chunk of cases, 50 bootstrap resamples)" in text
    assert "writing scores.parquet" in text


def test_build_reports_each_phase_with_counts(tmp_path: Path) -> None:
    from medr2.builder.pipeline import build_bench

    out = io.StringIO()
    tracker = Plain("medr2 build", out)
    result = build_bench("sample", tmp_path / "bench", seed=0, n_cases=4, variants="T3", workers=1, tracker=tracker)
    tracker.close()
    text = out.getvalue()
    assert "medr2 build: cases (1 worker) 4/4 (100%)" in text
    assert f"medr2 build: items per case {result.n_cases}/{result.n_cases} (100%)" in text
    assert f"medr2 build: variants T3 per case {result.n_cases}/{result.n_cases} (100%)" in text
    assert "medr2 build: writing the manifest" in text


def test_finetune_losses_labelled() -> None:
    """The bar ends on the last logged step's loss, the done line gives TRL's mean train loss: both labelled."""
    from medr2.train.finetune import describe_stage

    stage = {"stage": "lora", "steps": 150, "train_loss": 2.3241,
             "log": [{"loss": 3.1, "step": 10}, {"loss": 1.139, "step": 150}, {"train_loss": 2.3241}]}
    assert describe_stage(stage) == "lora 150 steps, mean train loss 2.324 (last logged 1.139)"
    assert describe_stage({**stage, "log": []}) == "lora 150 steps, mean train loss 2.324"


ROOT = Path(__file__).resolve().parents[1]


def test_install_says_what_it_installs_and_packaging_is_clean() -> None:
    """Every pip/apt step of the install is announced first; the licence is an SPDX string (no setuptools
    deprecation warning); the README's demo folder is ignored by git."""
    import subprocess
    import tomllib

    lines = (ROOT / "scripts" / "install.sh").read_text("utf-8").splitlines()
    installs = [i for i, line in enumerate(lines) if "pip install" in line and "--upgrade pip" not in line]
    assert installs
    for i in installs:
        before = [line for line in lines[:i] if line.strip().startswith("step ")]
        assert before and lines.index(before[-1]) > max([j for j in installs if j < i], default=-1), lines[i]
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert isinstance(meta["license"], str) and meta["license"] == "Apache-2.0"
    if (ROOT / ".git").exists():
        done = subprocess.run(["git", "check-ignore", "-q", "demo-out/summary.md"], cwd=ROOT, timeout=30)
        assert done.returncode == 0, "demo-out/ is not ignored by git"
