"""Evaluate several checkpoints with medr2's ``vllm:`` adapter, one after another, in ONE Python process.

Run by tests/test_models_families_slow.py with .venv-vllm's Python (where scripts/setup_vllm.sh installs vLLM and
medr2), so vLLM is imported once for all families instead of once per ``medr2 eval`` (about 20 s each here):

    .venv-vllm/bin/python tests/vllm_engines.py JOBS.json

JOBS.json: ``{"bench": DIR, "modes": [...], "split": "test", "max_new_tokens": N, "options": {vllm: options},
"jobs": [{"name": ..., "model": DIR, "preset": ..., "out": DIR}, ...]}``. Each job is one ``run_eval`` with
``vllm:DIR`` (the engine is built, answers the job's items, and is shut down before the next job starts). One
JSON line per job goes to stdout: ``{"name", "ok", "error", "seconds"}``; a failed job prints its traceback to
stderr and the next job still runs. The exit status is 0 when the file was read, whatever the jobs gave: the
test judges each job.

The caller passes vLLM's own environment variables (``VLLM_*``) in this process's environment; medr2 reads none.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from pathlib import Path


def _inspect_in_process() -> None:
    """vLLM inspects each architecture's model class once per machine in a fresh subprocess (to keep CUDA out of
    the parent; the result is cached under VLLM_CACHE_ROOT), which re-imports vLLM: about 20 s of CPU per family
    on a cold cache. On the CPU build there is no CUDA to protect, so run that inspection in this process."""
    from vllm.model_executor.models import registry

    if callable(getattr(registry, "_run_in_subprocess", None)):
        registry._run_in_subprocess = lambda fn: fn()  # type: ignore[assignment]


def main(spec_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    t0 = time.perf_counter()
    import vllm  # noqa: F401 - imported once here, timed

    from medr2 import ModelConfig
    from medr2.bench.format import load_bench
    from medr2.run.runner import EvalConfig, run_eval

    _inspect_in_process()
    print(json.dumps({"import_s": round(time.perf_counter() - t0, 2)}), flush=True)
    bench = load_bench(spec["bench"], image_hashes=False)
    for job in spec["jobs"]:
        t1 = time.perf_counter()
        row: dict[str, object] = {"name": job["name"], "ok": True, "error": None}
        try:
            run_eval(EvalConfig(bench=Path(spec["bench"]),
                                model=ModelConfig(f"vllm:{job['model']}", preset=job["preset"],
                                                  max_new_tokens=spec["max_new_tokens"], retries=0,
                                                  extra=dict(spec["options"])), out=Path(job["out"]),
                                modes=tuple(spec["modes"]), split=spec["split"],
                                command=("tests/vllm_engines.py", job["name"])), bench=bench)
        except Exception as e:  # noqa: BLE001 - reported per job; the next job still runs
            traceback.print_exc()
            row.update(ok=False, error=f"{type(e).__name__}: {e}"[:4000])
        row["seconds"] = round(time.perf_counter() - t1, 2)
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
