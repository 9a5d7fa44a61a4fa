#!/usr/bin/env bash
# Create the peer-client virtualenvs used by bench/peer_openai_sdk.py and bench/peer_lmms_eval.py.
# They live outside the project (never part of medr2's install):
#   VENVS/openai    : the official openai SDK (async client)
#   VENVS/lmms-eval : lmms-eval, installed without its heavy model stack (torch, transformers, ...),
#                     plus the few packages its OpenAI-compatible model module imports.
# Usage: bash bench/setup_peers.sh [VENVS]   (default /work/bench-venvs)
set -euo pipefail
VENVS="${1:-/work/bench-venvs}"
PY="${PYTHON:-python3.11}"
mkdir -p "$VENVS"

if [ ! -x "$VENVS/openai/bin/python" ]; then
  "$PY" -m venv "$VENVS/openai"
fi
"$VENVS/openai/bin/pip" install -q --disable-pip-version-check "openai>=1.0"
"$VENVS/openai/bin/python" -c "import openai; print('openai', openai.__version__)"

if [ ! -x "$VENVS/lmms-eval/bin/python" ]; then
  "$PY" -m venv "$VENVS/lmms-eval"
fi
# --no-deps: lmms-eval's declared dependencies pull a CUDA torch build of several GB and many model
# libraries the OpenAI-compatible model does not use; install what importing
# lmms_eval.models.chat.async_openai needs (accelerate needs torch: the CPU build).
"$VENVS/lmms-eval/bin/pip" install -q --disable-pip-version-check --no-deps lmms-eval
# Versions: the project's constraints.txt; torch as its CPU build (+cpu, named: a plain `torch` is a CUDA build).
C="$(cd "$(dirname "$0")/.." && pwd)/constraints.txt"
"$VENVS/lmms-eval/bin/pip" install -q --disable-pip-version-check -c "$C" "torch==$(sed -n 's/^torch==//p' "$C")+cpu" \
  transformers accelerate datasets evaluate openai loguru tqdm pillow numpy python-dotenv pytz zstandard
"$VENVS/lmms-eval/bin/python" -c "import lmms_eval, importlib.metadata as m; print('lmms-eval', m.version('lmms-eval'))"
