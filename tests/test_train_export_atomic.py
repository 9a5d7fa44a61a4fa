"""``medr2 export`` never leaves a partial file (issue 50): every format writes into a staging folder inside the
output and the whole set is published at once (:func:`medr2.atomic.staged`).

For every registered format: a complete export names only published paths (nothing points into the staging
folder); an export that fails after writing most of its records (a bench image missing, found only when its
record is written) leaves the folder absent or empty, and a rerun into it succeeds. Under SIGKILL (a real
``medr2 export`` process killed at random moments) the folder, read as a reader reads it (``settle`` first), is
always empty or the complete export, byte for byte."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from medr2 import BadInput
from medr2.atomic import PENDING_SUFFIX, STAGING, settle
from medr2.bench.format import load_bench
from medr2.outdir import LOCK, contents
from medr2.train.dataset import IDS_FILE, MANIFEST, export_dataset
from medr2.train.formats import FORMATS
from tests.train_fixtures import write_quadrant_bench

SRC = str(Path(__file__).parents[1] / "src")


@pytest.fixture(scope="module")
def bench_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_quadrant_bench(tmp_path_factory.mktemp("qbench") / "bench", n_cases=12)


def _published(out: Path) -> dict[str, bytes]:
    """What a reader sees: the files under their final names (not the writer lock a killed command leaves, the
    staging folder or pending files: no reader opens those)."""
    if not out.is_dir():
        return {}
    settle(out)
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and p.name != LOCK and STAGING not in p.parts and PENDING_SUFFIX not in p.name}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_an_export_that_fails_mid_way_leaves_nothing_and_a_complete_one_names_only_final_paths(
        bench_root: Path, tmp_path: Path, fmt: str) -> None:
    ref = tmp_path / "ref"
    manifest = export_dataset(bench_root, fmt, ref)
    files = _published(ref)
    assert MANIFEST in files and IDS_FILE in files and not (ref / STAGING).exists()
    for name, data in files.items():  # absolute paths (swift's images) point where the files were published
        assert STAGING.encode() not in data, name
    records = [json.loads(x) for x in files[IDS_FILE].decode().splitlines()]
    assert len(records) == manifest["n_examples"] > 2

    # the image first used latest, removed from a copy of the bench: the export fails after writing the records
    # before that one
    bench = load_bench(bench_root)
    image_of = {it.item_id: it.image for it in bench.items}
    first_use: dict[str, int] = {}
    for k, r in enumerate(records):
        for i in r["item_ids"]:
            first_use.setdefault(image_of[i], k)
    image, k = max(first_use.items(), key=lambda kv: kv[1])
    assert k > 0  # at least one record is written before the failure
    broken = tmp_path / "broken-bench"
    shutil.copytree(bench_root, broken)
    (broken / image).unlink()
    out = tmp_path / "out"
    with pytest.raises((BadInput, OSError)):
        export_dataset(broken, fmt, out)
    assert not out.exists() or not contents(out), sorted(p.name for p in out.iterdir())
    assert not (out / STAGING).exists()
    out.mkdir(exist_ok=True)  # an empty folder is a valid output: the rerun writes the same export there
    export_dataset(bench_root, fmt, out)
    again = _published(out)
    assert again.keys() == files.keys()
    assert {k: v for k, v in again.items() if not k.endswith((".jsonl", ".json"))} == \
        {k: v for k, v in files.items() if not k.endswith((".jsonl", ".json"))}


def _start(cmd: list[str]) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True, env=env)


@pytest.mark.slow
def test_a_killed_export_leaves_the_folder_empty_or_complete(bench_root: Path, tmp_path: Path) -> None:
    """``medr2 export`` (a real process) SIGKILLed at random moments of its run, 8 times: the folder is empty or
    holds exactly the uninterrupted export, and a rerun into it completes."""
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "medr2.cli", "export", "--bench", str(bench_root), "--format", "llamafactory",
           "--out", str(out), "--with-variants"]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, timeout=300, env={**os.environ, "PYTHONPATH": SRC})
    assert done.returncode == 0, done.stderr[-2000:]
    duration = time.perf_counter() - t0
    ref = _published(out)
    assert MANIFEST in ref
    rng = random.Random(50)
    seen = {"empty": 0, "complete": 0, "killed": 0}
    for _ in range(8):
        shutil.rmtree(out)
        proc = _start(cmd)
        time.sleep(duration * rng.uniform(0.3, 1.0))
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            seen["killed"] += 1
        proc.wait()
        assert proc.stderr is not None
        proc.stderr.close()
        got = _published(out)
        assert got in ({}, ref), f"a partial export: {sorted(got)}"
        seen["empty" if not got else "complete"] += 1
        if not got:  # the folder a killed export left is a valid output folder: the rerun completes it
            rerun = subprocess.run(cmd, capture_output=True, timeout=300, env={**os.environ, "PYTHONPATH": SRC})
            assert rerun.returncode == 0, rerun.stderr[-2000:]
            assert _published(out) == ref
    assert seen["killed"] >= 3, seen
    print("RELIABILITY-FIGURES kill-export", json.dumps(seen))
