"""Every tiny family vLLM runs, on a bench with two-image items (issue 49), through ``vllm:`` (the in-process engine,
``max_images_per_prompt=2`` -> ``limit_mm_per_prompt``) and ``hf:`` in ONE .venv-vllm process (where vLLM and
torchvision import): one JSON line per family with its items, how many show two images, whether every answer is
ok, and how many answers and prompt token counts agree. Run by tests/test_multi_image_vllm_families.py:

    .venv-vllm/bin/python tests/multi_image_vllm_families.py OUT_DIR

The caller passes vLLM's environment variables; the exit status is 0 whatever the families gave (the test judges).
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

MAX_NEW = 8


def _answers(run: Path) -> dict[str, tuple[str, int | None, str]]:
    from medr2.run.store import Store

    return {sp.prediction.item_id: (sp.prediction.raw or "", sp.prediction.prompt_tokens, sp.prediction.status)
            for sp in Store.open(run).iter_predictions()}


def _family(name: str, root: Path, bench: Any, engine: dict[str, Any]) -> dict[str, Any]:
    from medr2 import ModelConfig
    from medr2.models.families import build_family, get_family, vllm_loadable
    from medr2.run.runner import EvalConfig, run_eval

    model = build_family(name, root / "models" / name.replace(".", "_"), seed=0)
    loadable = root / "loadable" / name.replace(".", "_")
    vllm_loadable(model, loadable)
    common: dict[str, Any] = {"bench": bench.root, "modes": ("independent",), "split": "test"}
    settings: dict[str, Any] = {"preset": get_family(name).preset, "max_new_tokens": MAX_NEW, "retries": 0}
    runs = root / "runs" / name
    # the preset may take one image (llava-med for llava-1.5): the checkpoint is told it takes two
    run_eval(EvalConfig(model=ModelConfig(f"hf:{model}", extra={"device": "cpu", "max_images": 2}, **settings),
                        out=runs / "hf", **common), bench=bench)
    run_eval(EvalConfig(model=ModelConfig(f"vllm:{loadable}", extra=dict(engine), **settings), out=runs / "vllm",
                        **common), bench=bench)
    hf, served = _answers(runs / "hf"), _answers(runs / "vllm")
    two = {it.item_id for it in bench.items if len(it.images) == 2}
    return {"items": len(hf), "two_image": len(two & set(hf)), "same_items": set(hf) == set(served),
            "all_ok": all(v[2] == "ok" for v in [*hf.values(), *served.values()]),
            "same_answers": sum(hf[k][0].strip() == served.get(k, ("",))[0].strip() for k in hf),
            "same_prompt_tokens": sum(hf[k][1] == served.get(k, ("", None))[1] for k in hf)}


def main(out: str) -> int:
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")  # the engine core in this process
    from vllm.model_executor.models import registry

    if callable(getattr(registry, "_run_in_subprocess", None)):  # as tests/vllm_engines.py: no re-import per family
        registry._run_in_subprocess = lambda fn: fn()  # type: ignore[assignment]
    from medr2.models.families import FAMILIES, VLLM_UNSUPPORTED
    from tests.multi_image_fixtures import make_multi_bench
    from tests.servers import VLLM_KV_CACHE_BYTES

    root = Path(out)
    bench = make_multi_bench(root / "bench")
    engine = {"dtype": "float32", "max_model_len": 2048, "kv_cache_memory_bytes": VLLM_KV_CACHE_BYTES,
              "enforce_eager": True, "max_num_seqs": 16, "max_images_per_prompt": 2}
    for name in sorted(n for n in FAMILIES if n not in VLLM_UNSUPPORTED):
        t0 = time.perf_counter()
        row: dict[str, Any] = {"family": name}
        try:
            row.update(_family(name, root, bench, engine))
        except Exception as e:  # noqa: BLE001 - reported per family; the next one still runs
            traceback.print_exc()
            row["error"] = f"{type(e).__name__}: {e}"[:2000]
        row["seconds"] = round(time.perf_counter() - t0, 1)
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
