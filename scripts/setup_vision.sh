#!/usr/bin/env bash
# Create .venv-vision: medr2 with torch + torchvision, for the model families whose transformers
# processors need torchvision (Qwen2-VL / Qwen2.5-VL / Qwen3-VL, GLM-4V, InternVL, LLaVA-OneVision,
# SmolVLM: their processors carry a video processor; Pixtral / Mistral 3: the processor class itself).
# The default .venv stays light (CPU torch, no torchvision): PyPI's torchvision fails to import beside
# torch 2.13.0+cpu ("operator torchvision::nms does not exist"), so this venv takes PyPI's torch 2.13.0
# (runs on CPU) with torchvision 0.28.0, the pair scripts/setup_vllm.sh uses.
# Idempotent: a finished environment (marker .venv-vision/.medr2-ready) is left as it is.
# Usage: bash scripts/setup_vision.sh    then    .venv-vision/bin/python -m pytest tests/test_models_families.py
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
V=.venv-vision
if [ -f "$V/.medr2-ready" ] && "$V/bin/python" -c "import torchvision.ops, num2words, fastapi, uvicorn, peft, trl, medr2.models.families" >/dev/null 2>&1; then
  echo "$V is ready"
  exit 0
fi
rm -f "$V/.medr2-ready"
[ -x "$V/bin/python" ] || "$PY" -m venv "$V"
"$V/bin/python" -m pip install -q --upgrade pip
# '===' excludes the local +cpu build, which PyPI's torchvision cannot load beside. Versions: constraints.txt.
C=constraints.txt
"$V/bin/python" -m pip install -q -c "$C" "torch===$(sed -n 's/^torch==//p' "$C")" torchvision
# serve: `transformers serve` (fastapi, uvicorn) and train: `medr2 finetune` (trl, peft), for the families' slow
# tests (tests/test_models_families_slow.py); num2words: SmolVLM's processor imports it
"$V/bin/python" -m pip install -q -c "$C" -e ".[hf,serve,train,dev]" "num2words>=0.5"
"$V/bin/python" - <<'PYEOF'
import torch, torchvision, transformers  # noqa: E401 - fail here, loudly, if the environment is broken
from torchvision.ops import nms  # noqa: F401
print(f"torch {torch.__version__}, torchvision {torchvision.__version__}, transformers {transformers.__version__}")
PYEOF
touch "$V/.medr2-ready"
echo "$V is ready"
