"""The spill folders of ``medr2 score`` (``RUN/.score-chunks-*``): one left by a killed scorer is removed by the
next ``score`` of the run; one whose scorer still runs, or that carries no lock, is left alone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from medr2 import ModelConfig
from medr2.run.runner import EvalConfig, run_eval
from medr2.scoring.scorer import score_run
from medr2.scoring.spill import LOCK_NAME, SPILL_PREFIX, SpillFolder, remove_stale
from tests.run_fixtures import make_bench

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock")

# a scorer's spill folder, held by a separate process until it is killed
HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from medr2.scoring.spill import SpillFolder
    with SpillFolder(Path(sys.argv[1])) as folder:
        (folder / "chunk-00000.arrow").write_bytes(b"spilled rows")
        print(folder, flush=True)
        time.sleep(120)
""")


def _holder(run_dir: Path) -> tuple[subprocess.Popen[str], Path]:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(run_dir)], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.stdout is not None
    return proc, Path(proc.stdout.readline().strip())


def _kill(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


def test_a_killed_scorers_folder_is_removed_a_running_ones_is_not(tmp_path: Path) -> None:
    proc, folder = _holder(tmp_path)
    try:
        assert folder.parent == tmp_path and folder.name.startswith(SPILL_PREFIX)
        assert (folder / LOCK_NAME).is_file() and (folder / "chunk-00000.arrow").is_file()
        assert remove_stale(tmp_path) == []  # its scorer still runs
        assert folder.is_dir()
    finally:
        _kill(proc)
    assert folder.is_dir()  # SIGKILL: nothing of the scorer's own clean-up ran
    assert remove_stale(tmp_path) == [folder]
    assert not folder.exists()


def test_a_folder_without_a_lock_is_left_and_a_finished_one_is_gone(tmp_path: Path) -> None:
    unlocked = tmp_path / (SPILL_PREFIX + "older")
    unlocked.mkdir()
    (unlocked / "chunk-00000.arrow").write_bytes(b"x")
    with SpillFolder(tmp_path) as folder:
        assert (folder / LOCK_NAME).is_file() and not (folder / (LOCK_NAME + ".new")).exists()
        assert remove_stale(tmp_path) == []  # ours (this process holds its lock) and the one without a lock
    assert not folder.exists()
    assert unlocked.is_dir()


def test_score_removes_the_folder_a_killed_score_left(tmp_path: Path) -> None:
    bench = make_bench(tmp_path / "bench", n_cases=2)
    run = tmp_path / "run"
    run_eval(EvalConfig(bench=bench.root, model=ModelConfig("baseline:oracle"), out=run, modes=("independent",)))
    proc, stale = _holder(run)
    _kill(proc)
    proc2, live = _holder(run)
    try:
        metrics = score_run(run, seed=0, n_resamples=10)
        assert metrics["modes"]["independent"]["overall"]["value"] == 1.0
        assert not stale.exists()
        assert live.is_dir()  # another scorer of the same run, still running
        assert sorted(p.name for p in run.glob(SPILL_PREFIX + "*")) == [live.name]
    finally:
        _kill(proc2)
