"""``medr2 eval --executor ray`` with a ``vllm:`` checkpoint: ray.data.llm's vLLM engine processor starts vLLM's CPU
build inside a real local Ray cluster (``ray start --head`` on 127.0.0.1 with the 2 CPUs, from ``.venv-vllm``, where
scripts/setup_vllm.sh installs vLLM and scripts/setup_vllm_ray.sh adds ray[data]); the tiny VLM answers a small
sample bench. The stored answers equal the local ``vllm:`` adapter's on the same items (greedy), one row per request;
a driver killed mid-run and rerun loses no answer and asks nothing again that was stored.

Everything runs as subprocesses of ``.venv-vllm``'s Python with this checkout's ``src`` first on ``PYTHONPATH``
(vLLM is not in the project venv); vLLM's own environment variables (tests/servers.py ``VLLM_ENV``) reach the engines
through the ``ray start`` environment, medr2 reads none. Skips, saying why, without that environment.
Measured on the 2-core dev machine, 2026-12-04, nothing else running: 358 s for the module: the fixture 184 s (the
local run 71 s), the test 166 s (the driver killed 90 s after its start with 1 of 14 answers stored, the rerun 65 s,
each with an engine start; the third run 12 s). Before, an uninterrupted Ray run and a killed one were two tests:
345 s for the module in another sitting (fixture 116 s, tests 99 s and 129 s).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from medr2.run.store import Store
from tests.run_fixtures import stored_count
from tests.servers import REPO, VLLM_ENV, VLLM_KV_CACHE_BYTES, free_port, vllm_python

pytestmark = pytest.mark.slow

MEDR2 = str(Path(sys.executable).with_name("medr2"))  # the project venv's CLI (builds the model and the bench)
# 14 items sampled evenly over the tasks (seeded): --limit alone takes whole cases in bench order, so its count
# followed the first case's item count, which moves whenever the build's validity rules do (14 -> 9 at stop 57)
LIMIT = 14
MAX_NEW = 8
# Ray binds and connects on the loopback only (see tests/test_run_ray.py), and vLLM's queues too (VLLM_ENV)
ENV = {**os.environ, "PYTHONPATH": str(REPO / "src"), "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", **VLLM_ENV}


def _missing() -> str | None:
    py = vllm_python()
    if not py.exists():
        return f"no vLLM environment at {py.parent.parent}: run `bash scripts/setup_vllm.sh` (.ci/run does)"
    probe = subprocess.run([str(py), "-c", "import ray.data.llm, vllm"], capture_output=True, text=True, timeout=300,
                           env=ENV)
    if probe.returncode != 0:
        return (f"no ray[data] beside vLLM in {py.parent.parent}: run `bash scripts/setup_vllm_ray.sh` "
                f"({probe.stderr.strip().splitlines()[-1:]})")
    return None


def _eval(work: dict[str, Path], out: Path, *extra: str) -> list[str]:
    return [str(vllm_python()), "-m", "medr2", "eval", "--split", "all", "--bench", str(work["bench"]),
            "--model", f"vllm:{work['model']}", "--preset", "medr2-tiny", "--out", str(out), "--limit", str(LIMIT),
            "--stratify", "task",
            "--max-new-tokens", str(MAX_NEW), "--no-progress", "--model-option", "dtype=float32",
            "--model-option", "max_model_len=2048", "--model-option", f"kv_cache_memory_bytes={VLLM_KV_CACHE_BYTES}",
            *extra]


def _run(cmd: list[str], log: Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=ENV)
    with log.open("a", encoding="utf-8") as fh:
        fh.write(f"$ {' '.join(cmd)}\n{p.stdout}{p.stderr}\n")
    assert p.returncode == 0, f"{' '.join(cmd)} -> {p.returncode}\n{p.stderr[-6000:]}"
    return p


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """The tiny VLM (vLLM's layout), a sample bench, a local ``vllm:`` run of it, and a Ray head (2 CPUs, from
    .venv-vllm, no dashboard) on 127.0.0.1; ``ray stop`` afterwards."""
    missing = _missing()
    if missing:
        pytest.skip(missing)
    d = tmp_path_factory.mktemp("ray-vllm")
    log = d / "commands.log"
    _run([MEDR2, "tiny-vlm", "--out", str(d / "tiny")], log)
    _run([MEDR2, "vllm-export", str(d / "tiny"), "--out", str(d / "model")], log)
    _run([MEDR2, "build", "--source", "sample", "--out", str(d / "bench"), "--cases", "4", "--workers", "1"], log)
    work = {"dir": d, "log": log, "model": d / "model", "bench": d / "bench", "local": d / "run-local"}
    t0 = time.perf_counter()
    _run(_eval(work, work["local"], "--batch-size", "16"), log)
    print(f"\n[ray-vllm] local vllm: run {time.perf_counter() - t0:.1f}s")
    port = free_port()
    ray = str(vllm_python().with_name("ray"))
    started = subprocess.run([ray, "start", "--head", "--num-cpus", "2", "--include-dashboard=false",
                              "--node-ip-address", "127.0.0.1", "--port", str(port), "--disable-usage-stats"],
                             capture_output=True, text=True, timeout=180, env=ENV)
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        work["address"] = Path(f"127.0.0.1:{port}")  # (a str in a Path: the fixture's dict is of paths)
        yield work
    finally:
        subprocess.run([ray, "stop"], capture_output=True, timeout=120, env=ENV)


def _rows(run: Path) -> dict[str, Any]:
    with Store.open(run) as st:
        return {r.prediction.request_hash: r.prediction for r in st.iter_predictions()}


def _same_answers(local: dict[str, Any], ray_rows: dict[str, Any]) -> None:
    assert set(local) == set(ray_rows)  # the same request hashes: the same model key, settings and prompts
    for h, a in local.items():
        b = ray_rows[h]
        assert (a.item_id, a.mode, a.model_key, a.status, a.raw, a.prompt_tokens, a.completion_tokens,
                a.finish_reason, a.error) == (b.item_id, b.mode, b.model_key, b.status, b.raw, b.prompt_tokens,
                                              b.completion_tokens, b.finish_reason, b.error), h
    slots = Counter((p.item_id, p.mode) for p in ray_rows.values())
    assert max(slots.values()) == 1  # one row per request


def test_ray_vllm_answers_equal_the_local_adapter_through_a_driver_kill(work: dict[str, Path]) -> None:
    """One Ray run whose driver is SIGKILLed once answers are stored, then rerun: every request stored once, equal
    to the local ``vllm:`` adapter's answers (greedy: text, token counts, finish reason); the rerun asks only what
    was not stored (its summary) and the rows stored before the kill are unchanged; a third run finds everything
    stored and starts no engine. (One Ray run with a kill rather than an uninterrupted run and a killed one: one
    engine start less, for CI's time; the equality covers the rows of both drivers.)"""
    run = work["dir"] / "run-ray"
    cmd = _eval(work, run, "--executor", "ray", "--ray-address", str(work["address"]), "--ray-batch-size", "1")
    local = _rows(work["local"])
    total = len(local)
    assert total >= 10 and all(p.status == "ok" for p in local.values())
    t0 = time.perf_counter()
    with (work["dir"] / "kill.log").open("w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=ENV)
        deadline = time.time() + 600
        while stored_count(run / "store.sqlite") < 1:  # answers arrive once Ray has started the engine
            assert proc.poll() is None, (work["dir"] / "kill.log").read_text()[-6000:]
            assert time.time() < deadline, "the Ray run stored no answer in time"
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    killed_after = time.perf_counter() - t0
    stored_at_kill = _rows(run)
    assert proc.returncode == -signal.SIGKILL
    assert 1 <= len(stored_at_kill) < total, f"{len(stored_at_kill)} of {total} stored at the kill"
    t1 = time.perf_counter()
    _run(cmd, work["log"])
    resumed = time.perf_counter() - t1
    rows = _rows(run)
    _same_answers(local, rows)
    assert all(rows[h] == p for h, p in stored_at_kill.items())
    assert {p.finish_reason for p in rows.values()} == {"length"}  # MAX_NEW cuts every tiny-model answer
    manifest = json.loads((run / "manifest.json").read_text("utf-8"))
    local_manifest = json.loads((work["local"] / "manifest.json").read_text("utf-8"))
    assert manifest["identity"] == local_manifest["identity"]
    assert manifest["model"]["settings"] == local_manifest["model"]["settings"]
    assert [i["status"] for i in manifest["invocations"]] == ["running", "complete"]
    inv = manifest["invocations"][-1]
    assert inv["executor"] == {"name": "ray", "address": str(work["address"]), "batch_size": 1, "engines": 1,
                               "engine_gpus": 0.0, "engine_cpus": 1.0}
    counts = inv["summary"]["modes"]["independent"]
    assert counts["stored_before"] == len(stored_at_kill) and counts["ok"] == total - len(stored_at_kill)
    # a third run: everything is stored, so no Dataset and no engine is started
    t2 = time.perf_counter()
    again = _run(cmd, work["log"])
    assert f"{total} already stored, 0 ok" in again.stderr.replace("\n", " ")
    assert _rows(run) == rows
    print(f"\n[ray-vllm] killed after {killed_after:.1f}s (engine start included) with {len(stored_at_kill)}/{total}"
          f" stored; the rerun sent {counts['ok']} in {resumed:.1f}s (engine start included); third run "
          f"{time.perf_counter() - t2:.1f}s")
