"""Issue 21 items 2 and 3 under SIGKILL: the outputs of one command are published as one set, and a
rebuild with another source never reads as the old bench.

Each test starts a real process, kills it (SIGKILL, whole process group) at random moments, then reads
the folder as a reader would (``settle`` first, as ``load_run``/``load_table`` do) and checks that
every file belongs to one and the same publication: never a new scores.parquet beside an old
metrics.json, never new leaderboard files beside an old index.html.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from medr2 import BadInput, ModelConfig
from medr2.atomic import JOURNAL, PENDING_SUFFIX, settle
from medr2.bench.format import load_bench
from medr2.outdir import LOCK, SCORE_LOCK
from medr2.run.runner import EvalConfig, run_eval
from tests.interop_fixtures import write_png
from tests.run_fixtures import make_bench

MEDR2 = [sys.executable, "-m", "medr2.cli"]
SRC = str(Path(__file__).parents[1] / "src")


def _start(cmd: list[str]) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True, env=env)


def _kill(proc: subprocess.Popen[bytes]) -> bool:
    """SIGKILL the process group; True when it was still running."""
    alive = proc.poll() is None
    if alive:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    if proc.stderr:
        err = proc.stderr.read().decode(errors="replace")
        proc.stderr.close()
        if not alive:
            assert proc.returncode == 0, err[-2000:]
    return alive


# -- the mechanism: a process publishing sets of files in a loop ------------------------------------------------

_PUBLISHER = """
import itertools, sys
from pathlib import Path
from medr2.atomic import publish_files
out = Path(sys.argv[1])
for g in itertools.count(int(sys.argv[2])):
    tag = f"{g}\\n".encode()
    files = {"scores.parquet": tag + bytes(300_000), "metrics.json": tag, f"plots/p{g % 3}.png": tag,
             "plots/always.png": tag + bytes(50_000)}
    old = [f"plots/p{k}.png" for k in range(3) if k != g % 3]
    publish_files(out, files, remove=old, command="publisher")
    print(g, flush=True)
"""


def _generations(out: Path) -> set[str]:
    files = [out / "scores.parquet", out / "metrics.json", *(out / "plots").glob("*.png")]
    return {f.read_bytes().split(b"\n", 1)[0].decode() for f in files if f.is_file()}


def test_publish_files_never_shows_a_mix_under_sigkill(tmp_path: Path) -> None:
    out = tmp_path / "out"
    rng = random.Random(21)
    kills = completed_by_reader = 0
    start = 0
    for _ in range(25):
        proc = _start([sys.executable, "-c", _PUBLISHER, str(out), str(start)])
        time.sleep(rng.uniform(0.15, 0.8))
        kills += _kill(proc)
        completed_by_reader += settle(out)
        gens = _generations(out)
        assert len(gens) <= 1, f"files from several publications: {gens}"
        if gens:
            assert len(list((out / "plots").glob("p*.png"))) == 1  # the files a set removes are gone with it
            start = int(gens.pop()) + 1
        assert not (out / JOURNAL).exists()
    assert kills >= 20
    leftovers = [p.name for p in out.rglob(f"*{PENDING_SUFFIX}*")]
    print("RELIABILITY-FIGURES kill-publish", json.dumps({"kills": kills, "completed_by_reader": completed_by_reader,
                                                          "pending_left_before_next_publish": len(leftovers),
                                                          "mixed_sets_seen": 0}))


# -- medr2 score -------------------------------------------------------------------------------------------------


def _outputs(folder: Path, names: list[str]) -> tuple[bytes | None, ...]:
    return tuple((folder / n).read_bytes() if (folder / n).is_file() else None for n in names)


def _kill_states(run_cmd: Callable[[], list[str]], set_state: Callable[[int], None], check: Callable[[], None],
                 duration: float, n: int, seed: int) -> int:
    rng = random.Random(seed)
    kills = 0
    for _ in range(n):
        set_state(rng.randrange(2))
        proc = _start(run_cmd())
        time.sleep(duration * rng.uniform(0.3, 1.1))
        kills += _kill(proc)
        check()
    return kills


@pytest.mark.slow
def test_score_outputs_are_one_set_under_sigkill(tmp_path: Path) -> None:
    from medr2.scoring.scorer import score_run

    bench = tmp_path / "bench"
    make_bench(bench, n_cases=12)
    inputs = [tmp_path / "oracle", tmp_path / "random"]
    run_eval(EvalConfig(split="all", bench=bench, model=ModelConfig("baseline:oracle"), out=inputs[0],
                        modes=("independent", "chain-own")))
    run_eval(EvalConfig(split="all", bench=bench, model=ModelConfig("baseline:random"), out=inputs[1],
                        modes=("independent", "chain-own")))
    run = tmp_path / "run"
    names = ["scores.parquet", "metrics.json"]

    def set_state(k: int) -> None:  # the command's inputs: a run folder holding one run or the other
        run.mkdir(exist_ok=True)
        for f in ("store.sqlite-wal", "store.sqlite-shm"):  # a killed reader's, belonging to the other store
            (run / f).unlink(missing_ok=True)
        for f in ("manifest.json", "store.sqlite"):
            shutil.copyfile(inputs[k] / f, run / f)

    refs = []
    for k in range(2):
        set_state(k)
        score_run(run, mixed_splits=True, seed=0, n_resamples=300)
        refs.append(_outputs(run, names))
    assert refs[0] != refs[1] and all(x is not None for r in refs for x in r)
    shutil.rmtree(run)
    cmd = [*MEDR2, "score", str(run), "--mixed-splits", "--resamples", "300"]
    t0 = time.perf_counter()
    set_state(0)
    done = subprocess.run(cmd, capture_output=True, timeout=300, env={**os.environ, "PYTHONPATH": SRC})
    assert done.returncode == 0, done.stderr[-2000:]
    duration = time.perf_counter() - t0
    shutil.rmtree(run)
    seen: dict[str, int] = {"none": 0, "state0": 0, "state1": 0}

    def check() -> None:
        settle(run)  # what load_table / load_run do first
        got = _outputs(run, names)
        if got == (None, None):
            seen["none"] += 1
            return
        assert got in refs, "scores.parquet and metrics.json from different scorings"
        seen[f"state{refs.index(got)}"] += 1

    kills = _kill_states(lambda: cmd, set_state, check, duration, 8, seed=5)
    assert kills >= 4
    print("RELIABILITY-FIGURES kill-score", json.dumps({"kills": kills, **seen, "mixed_sets_seen": 0}))


# -- medr2 report ------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_report_outputs_are_one_set_under_sigkill(tmp_path: Path) -> None:
    from medr2.reporting.write import write_report
    from tests.report_fixtures import make_fixture

    fx = make_fixture(tmp_path / "fx")
    out = tmp_path / "report"
    states = [[fx.runs[0]], [fx.runs[0], fx.runs[1]]]

    pending_left = [0]

    def listing() -> dict[str, bytes]:
        """What a reader of the report sees: the published files. Hidden pending files of a publish killed
        before its journal existed belong to no set (the next publish sweeps them); they are counted. The
        writer lock a killed command leaves (``.lock``, medr2.outdir) is no report file: the next writer takes it."""
        files = [p for p in sorted(out.rglob("*")) if p.is_file() and p.name not in (LOCK, SCORE_LOCK)]
        pending_left[0] = sum(PENDING_SUFFIX in p.name for p in files)
        return {str(p.relative_to(out)): p.read_bytes() for p in files if PENDING_SUFFIX not in p.name}

    refs = []
    for runs in states:
        write_report(runs, out, max_items=200)
        refs.append(listing())
        shutil.rmtree(out)
    assert refs[0] != refs[1]
    state = [0]

    def cmd() -> list[str]:
        return [*MEDR2, "report", *map(str, states[state[0]]), "--out", str(out), "--max-items", "200"]

    def set_state(k: int) -> None:
        state[0] = k

    t0 = time.perf_counter()
    done = subprocess.run(cmd(), capture_output=True, timeout=300, env={**os.environ, "PYTHONPATH": SRC})
    assert done.returncode == 0, done.stderr[-2000:]
    duration = time.perf_counter() - t0
    assert listing() == refs[0]  # the command writes what the function writes
    shutil.rmtree(out)
    seen = {"none": 0, "state0": 0, "state1": 0}

    def check() -> None:
        if out.is_dir():
            settle(out)
        got = listing() if out.is_dir() else {}
        if not got:
            seen["none"] += 1
            return
        assert got in refs, f"a mix of reports: {sorted(got)}"
        seen[f"state{refs.index(got)}"] += 1

    kills = _kill_states(cmd, set_state, check, duration, 6, seed=8)
    assert kills >= 3
    print("RELIABILITY-FIGURES kill-report", json.dumps({"kills": kills, **seen, "mixed_sets_seen": 0,
                                                          "pending_left_at_last_check": pending_left[0]}))


# -- medr2 build over another bench ------------------------------------------------------------------------------


def _folder_data(root: Path, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows = ["image,modality,diagnosis"]
    for i in range(n):
        write_png(root / f"img{i:03d}.png", rng.integers(0, 255, (96, 96), dtype=np.uint8))
        rows.append(f"img{i:03d}.png,{['CT', 'MRI'][i % 2]},{['nodule', 'normal', 'cyst'][i % 3]}")
    (root / "labels.csv").write_text("\n".join(rows) + "\n")


@pytest.mark.slow
def test_rebuild_with_another_source_killed_never_reads_as_the_old_bench(tmp_path: Path) -> None:
    from medr2.builder.pipeline import build_bench

    old_data, new_data = tmp_path / "old", tmp_path / "new"
    _folder_data(old_data, 30, 1)
    _folder_data(new_data, 60, 2)
    (old_data / "labels.csv").write_text((old_data / "labels.csv").read_text() + "missing.png,CT,normal\n")
    out = tmp_path / "b" / "bench"
    ref = tmp_path / "ref" / "bench"
    build_bench(f"folder:{new_data}", ref, seed=3, workers=2, variants="T4,V1")
    new_checksum = load_bench(ref).checksum

    def cmd() -> list[str]:
        return [*MEDR2, "build", "--source", f"folder:{new_data}", "--out", str(out), "--seed", "3", "--workers", "2",
                "--variants", "T4,V1"]

    t0 = time.perf_counter()
    done = subprocess.run(cmd(), capture_output=True, timeout=300, env={**os.environ, "PYTHONPATH": SRC})
    assert done.returncode == 0, done.stderr[-2000:]
    duration = time.perf_counter() - t0
    seen = {"incomplete": 0, "new": 0}

    def set_state(_k: int) -> None:  # before every start: the folder holds the old bench, complete
        shutil.rmtree(out, ignore_errors=True)
        build_bench(f"folder:{old_data}", out, seed=3, workers=1)
        assert load_bench(out).manifest["quarantine"]["n"] == 1

    def check() -> None:
        try:
            bench = load_bench(out)
        except BadInput as e:
            assert e.field == "complete" or "no manifest.json" in e.reason, str(e)
            seen["incomplete"] += 1
            return
        assert bench.checksum == new_checksum, "the folder reads as a bench that is not the new one"
        seen["new"] += 1

    kills = _kill_states(cmd, set_state, check, duration, 5, seed=3)
    assert kills >= 3
    print("RELIABILITY-FIGURES kill-rebuild", json.dumps({"kills": kills, **seen, "read_as_old_bench": 0}))
