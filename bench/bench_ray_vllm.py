"""Overhead of ``medr2 eval --executor ray`` with a ``vllm:`` checkpoint (ray.data.llm's vLLM engine processor,
vLLM's CPU build started inside Ray) against the local ``vllm:`` adapter (vLLM's in-process engine), same model,
same items, same machine.

Run with ``.venv-vllm``'s Python (scripts/setup_vllm.sh, then scripts/setup_vllm_ray.sh for ray[data]). Builds the
tiny VLM (``medr2 tiny-vlm`` + ``medr2 vllm-export``) and two sample benches (``--cases`` sizes) with the project
venv's Python (``--project-python``), starts a Ray head
(``ray start --head --num-cpus 2 --include-dashboard=false`` on 127.0.0.1, stopped at the end), then for each bench
and each repeat runs ``medr2 eval`` as a child process into a fresh run folder, local then Ray (in turn, so both see
the same load). Per run: wall seconds; the eval process's CPU seconds (``os.wait4``: the process and the
descendants it reaped, i.e. the local adapter's vLLM engine-core process); the Ray cluster's CPU seconds (the raylet,
the GCS and every descendant of the raylet: the engine actor, its vLLM engine-core process, the map workers;
sampled every 0.5 s, a process that exits between samples loses at most its last 0.5 s). Cells are medians over
``--repeats``; the per-request cost is the slope between the two sizes (the engine start cancels out), next to the
whole difference at each size. vLLM's variables (``VLLM_HOST_IP=127.0.0.1``, ``VLLM_CPU_OMP_THREADS_BIND=nobind``)
are set for the children and the Ray head, as in tests/servers.py.

    .venv-vllm/bin/python bench/bench_ray_vllm.py [--cases 2 12] [--repeats 2] [--max-new-tokens 8]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from process_cpu import ProcessCpu  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
PY = sys.executable
RAY = str(Path(PY).with_name("ray"))
KV_CACHE_BYTES = 256 * 1024 * 1024  # as tests/servers.py
ENV = {**os.environ, "PYTHONPATH": str(REPO / "src"), "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
       "VLLM_HOST_IP": "127.0.0.1", "VLLM_CPU_OMP_THREADS_BIND": "nobind"}


def cluster_processes() -> set[psutil.Process]:
    """The Ray cluster's process tree: raylet, GCS and the raylet's descendants."""
    roots = [p for p in psutil.process_iter(["name", "cmdline"])
             if any(k in " ".join(p.info["cmdline"] or ()) for k in ("/raylet", "gcs_server"))]
    procs = set(roots)
    for r in roots:
        try:
            procs.update(r.children(recursive=True))
        except psutil.Error:
            continue
    return procs


def medr2(python: Path, *args: str) -> None:
    subprocess.run([str(python), "-m", "medr2", *args], check=True, capture_output=True, env=ENV, timeout=1800)


def run_eval(bench: Path, model: Path, out: Path, max_new: int, ray_address: str | None) -> dict[str, float]:
    args = [PY, "-m", "medr2", "eval", "--split", "all", "--bench", str(bench), "--model", f"vllm:{model}",
            "--preset", "medr2-tiny",
            "--out", str(out), "--max-new-tokens", str(max_new), "--no-progress", "--batch-size", "16",
            "--model-option", "dtype=float32", "--model-option", "max_model_len=2048",
            "--model-option", f"kv_cache_memory_bytes={KV_CACHE_BYTES}"]
    if ray_address:
        args += ["--executor", "ray", "--ray-address", ray_address]
    t0 = time.perf_counter()
    with ProcessCpu(cluster_processes) as cluster:
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        assert proc.stderr is not None
        raise SystemExit(f"eval failed: {proc.stderr.read().decode()[-3000:]}")
    return {"wall_s": wall, "eval_cpu_s": usage.ru_utime + usage.ru_stime, "ray_cpu_s": cluster.cpu_s}


def answers(run: Path) -> dict[str, tuple[object, ...]]:
    import sqlite3

    con = sqlite3.connect(run / "store.sqlite")
    try:
        return {r[0]: tuple(r[1:]) for r in con.execute(
            "SELECT request_hash, status, raw, prompt_tokens, completion_tokens, finish_reason FROM predictions")}
    finally:
        con.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, nargs=2, default=[2, 12], help="two sample-bench sizes (cases)")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--max-new-tokens", type=int, default=8)
    ap.add_argument("--project-python", type=Path, default=REPO / ".venv" / "bin" / "python",
                    help="the project venv's Python, which builds the model and the benches (they need torch and "
                         "the sample sources' libraries, not vLLM)")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "medr2-ray-vllm-bench")
    a = ap.parse_args()
    a.work.mkdir(parents=True, exist_ok=True)
    model = a.work / "model"
    if not (model / "config.json").exists():
        medr2(a.project_python, "tiny-vlm", "--out", str(a.work / "tiny"))
        medr2(a.project_python, "vllm-export", str(a.work / "tiny"), "--out", str(model))
    benches = {}
    for c in a.cases:
        b = a.work / f"bench-{c}"
        if not (b / "manifest.json").exists():
            medr2(a.project_python, "build", "--source", "sample", "--out", str(b), "--cases", str(c), "--workers", "1")
        benches[c] = b
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    subprocess.run([RAY, "start", "--head", "--num-cpus", "2", "--include-dashboard=false", "--port", str(port),
                    "--node-ip-address", "127.0.0.1", "--disable-usage-stats"], check=True, capture_output=True,
                   env=ENV, timeout=300)
    address = f"127.0.0.1:{port}"
    load0 = os.getloadavg()
    try:
        results: dict[tuple[int, str], list[dict[str, float]]] = {}
        sizes: dict[int, int] = {}
        for c, bench in benches.items():
            for r in range(a.repeats):
                got = {}
                for name, addr in (("local", None), ("ray", address)):
                    out = a.work / f"run-{name}-{c}-{r}"
                    shutil.rmtree(out, ignore_errors=True)
                    res = run_eval(bench, model, out, a.max_new_tokens, addr)
                    got[name] = answers(out)
                    results.setdefault((c, name), []).append(res)
                    print(f"cases={c} repeat={r} {name}: {len(got[name])} requests, "
                          + ", ".join(f"{k}={v:.2f}" for k, v in res.items()), flush=True)
                    shutil.rmtree(out, ignore_errors=True)
                if got["local"] != got["ray"]:
                    raise SystemExit(f"cases={c}: the Ray run's answers differ from the local run's")
                sizes[c] = len(got["local"])
        load1 = os.getloadavg()
        med = {key: {k: statistics.median(x[k] for x in runs) for k in runs[0]} for key, runs in results.items()}
        print(f"\nmedians over {a.repeats} repeats; max_new_tokens {a.max_new_tokens}; load average "
              f"{load0[0]:.1f} at the start, {load1[0]:.1f} at the end; the answers of every pair were equal")
        print(f"{'requests':>8} {'executor':>8} {'wall s':>8} {'eval CPU s':>10} {'Ray CPU s':>9} {'total CPU s':>11}")
        for (c, name), m in sorted(med.items()):
            print(f"{sizes[c]:>8} {name:>8} {m['wall_s']:>8.2f} {m['eval_cpu_s']:>10.2f} {m['ray_cpu_s']:>9.2f} "
                  f"{m['eval_cpu_s'] + m['ray_cpu_s']:>11.2f}")
        c1, c2 = a.cases
        n1, n2 = sizes[c1], sizes[c2]
        for c in a.cases:
            d = {k: med[(c, "ray")][k] - med[(c, "local")][k] for k in ("wall_s", "eval_cpu_s", "ray_cpu_s")}
            cpu = d["eval_cpu_s"] + d["ray_cpu_s"]
            print(f"{sizes[c]} requests: ray - local: wall {d['wall_s']:.2f} s, CPU {cpu:.2f} s "
                  f"({1000 * cpu / sizes[c]:.1f} ms per request, engine start included)")

        def total(c: int, name: str) -> float:
            return med[(c, name)]["eval_cpu_s"] + med[(c, name)]["ray_cpu_s"]

        for what, get in (("wall", lambda c, name: med[(c, name)]["wall_s"]), ("total CPU", total)):
            slope = {name: (get(c2, name) - get(c1, name)) / (n2 - n1) for name in ("local", "ray")}
            print(f"{what} per extra request (slope {n1}->{n2}): local {1000 * slope['local']:.2f} ms, ray "
                  f"{1000 * slope['ray']:.2f} ms, overhead {1000 * (slope['ray'] - slope['local']):.2f} ms")
    finally:
        subprocess.run([RAY, "stop"], capture_output=True, env=ENV, timeout=300)


if __name__ == "__main__":
    main()
