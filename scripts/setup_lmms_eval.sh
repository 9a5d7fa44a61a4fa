#!/usr/bin/env bash
# Create .venv-lmms-eval: lmms-eval in its own virtual environment (its declared dependencies conflict
# with medr2's and pull a CUDA torch build of several GB), used by tests/test_interop_lmms_eval_run.py
# to run the real lmms-eval CLI on a `medr2 convert --to lmms-eval` task folder with its OpenAI-compatible
# model. lmms-eval is installed with --no-deps, plus exactly what its CLI imports on that path.
# Idempotent: a finished environment (marker file .venv-lmms-eval/.medr2-ready) is left as it is.
# Usage: bash scripts/setup_lmms_eval.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
V=.venv-lmms-eval
check() { "$V/bin/python" -c "import lmms_eval.__main__, lmms_eval.models.chat.openai" >/dev/null 2>&1; }
if [ -f "$V/.medr2-ready" ] && check; then
  echo "$V is ready"
  exit 0
fi
rm -f "$V/.medr2-ready"
[ -x "$V/bin/python" ] || "$PY" -m venv "$V"
# torch is the CPU build (+cpu, named explicitly: a plain `torch` requirement resolves to a CUDA build); it is
# installed first so no later requirement replaces it. Versions: constraints.txt.
C=constraints.txt
"$V/bin/python" -m pip install -q -c "$C" "torch==$(sed -n 's/^torch==//p' "$C")+cpu"
# What `python -m lmms_eval eval --model openai` imports on that path. filelock<4: lmms-eval 0.7.3 patches
# filelock._api, which filelock 4 removed.
"$V/bin/python" -m pip install -q -c "$C" torch transformers "filelock<4" accelerate datasets \
  evaluate openai loguru tqdm pillow numpy python-dotenv pytz zstandard sacrebleu pyyaml jinja2 tenacity \
  pytablewriter
# last, so that pip's dependency check never sees lmms-eval's (deliberately unmet) declared dependencies
"$V/bin/python" -m pip install -q --no-deps "lmms-eval==0.7.3"
check || { echo "lmms-eval does not import in $V" >&2; exit 1; }
"$V/bin/python" -m lmms_eval eval --help >/dev/null
"$V/bin/python" -c "import torch, importlib.metadata as m; print('lmms-eval', m.version('lmms-eval'), 'torch', torch.__version__)"
touch "$V/.medr2-ready"
echo "$V is ready"
