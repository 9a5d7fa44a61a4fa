"""vLLM data-parallel serving on the CPU build (slow; ``.venv-vllm`` from scripts/setup_vllm.sh): one endpoint,
``--data-parallel-size 2`` (two engine cores behind vLLM's own API server), started by ``medr2 eval --serve``.
The stored answers equal those of the same server with one engine; the server's log shows both engine cores
serving requests (docs/serving.md, "Data parallel: one endpoint, several engines")."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from medr2.run.store import Store
from tests.servers import VLLM_ENV, VLLM_KV_CACHE_BYTES, VLLM_READY_MARKER, vllm_python

pytestmark = [pytest.mark.slow, pytest.mark.vllm_dp]

SRC = str(Path(__file__).resolve().parent.parent / "src")
LIMIT = 40  # whole cases: 14 items of the 8-case sample bench
# two engine cores load and compile the model at once; 466 s to healthy was measured on the loaded 2-core machine
DP_READY_S = 1200
# vLLM's periodic stats line per engine core, e.g. "(APIServer pid=1) INFO ... Engine 001: Avg prompt throughput:
# 51.3 tokens/s, Avg generation throughput: 16.0 tokens/s, Running: 2 reqs, ..."
ENGINE_STATS = re.compile(r"Engine (\d+): Avg prompt throughput: ([\d.]+) tokens/s")


def medr2(*args: str | Path, timeout: float = 1500) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "medr2", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": SRC, "COLUMNS": "200"})


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not VLLM_READY_MARKER.exists():
        pytest.skip(f"no vLLM environment at {VLLM_READY_MARKER.parent}: run `bash scripts/setup_vllm.sh` "
                    "(.ci/run does)")
    d = tmp_path_factory.mktemp("vllm-dp")
    for args in (("tiny-vlm", "--out", d / "tiny"), ("vllm-export", d / "tiny", "--out", d / "tiny-vllm"),
                 ("build", "--source", "sample", "--out", d / "bench", "--cases", "8", "--workers", "1")):
        done = medr2(*args)
        assert done.returncode == 0, done.stderr
    return d


def serve_command(model_dir: Path, dp: int) -> str:
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in VLLM_ENV.items())
    return (f"env {env} {shlex.quote(str(vllm_python()))} -m vllm.entrypoints.openai.api_server "
            f"--model {shlex.quote(str(model_dir))} --served-model-name medr2-tiny --dtype float32 "
            f"--max-model-len 2048 --kv-cache-memory-bytes {VLLM_KV_CACHE_BYTES} --seed 0 --host 127.0.0.1 "
            f"--port {{port}} --data-parallel-size {dp}")


def answers(run: Path) -> dict[tuple[str, str], tuple[Any, ...]]:
    with Store.open(run) as st:
        return {(r.prediction.item_id, r.prediction.mode): (r.prediction.request_hash, r.prediction.raw,
                                                           r.prediction.status, r.prediction.prompt_tokens,
                                                           r.prediction.completion_tokens)
                for r in st.iter_predictions()}


def served_eval(work: Path, dp: int) -> Path:
    out = work / f"run-dp{dp}"
    done = medr2("eval", "--split", "all", "--bench", work / "bench", "--model", "openai:medr2-tiny", "--preset",
                 "medr2-tiny",
                 "--mode", "independent", "--limit", str(LIMIT), "--max-new-tokens", "16", "--concurrency", "8",
                 "--retries", "0", "--no-progress", "--out", out, "--serve-timeout", str(DP_READY_S),
                 "--serve", serve_command(work / "tiny-vllm", dp))
    assert done.returncode == 0, f"{done.stderr}\n{(out / 'serve.log').read_text()[-4000:]}"
    serve = json.loads((out / "manifest.json").read_text())["invocations"][-1]["serve"]
    print(f"vLLM --data-parallel-size {dp}: healthy after {serve['ready_s']} s; {done.stderr.strip()}")
    return out


def test_data_parallel_2_answers_as_one_engine(work: Path) -> None:
    dp2 = served_eval(work, 2)
    log = (dp2 / "serve.log").read_text("utf-8", "replace")
    assert "EngineCore_DP0" in log and "EngineCore_DP1" in log  # two engine cores behind one endpoint
    busy = {int(e) for e, rate in ENGINE_STATS.findall(log) if float(rate) > 0}
    dp1 = served_eval(work, 1)
    a2, a1 = answers(dp2), answers(dp1)
    assert a1 and all(v[2] == "ok" for v in a1.values())
    assert a2 == a1  # same request hashes, text, status and token counts
    assert busy == {0, 1}, f"engines with prompt throughput > 0 in the stats lines: {busy}"
