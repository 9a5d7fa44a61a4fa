#!/usr/bin/env bash
# Install the extra medr2[ray] (ray[data]==2.60.0: `medr2 eval --executor ray`) into .venv, after
# scripts/install.sh. Additive: ray[data] adds ray, msgpack, protobuf, jsonschema (+ referencing, rpds-py,
# jsonschema-specifications) and changes no installed package (checked with pip install --dry-run). Without it
# the Ray tests (tests/test_run_ray.py, slow) skip with a reason. ray[llm] is not installed: it pulls vllm
# (a CUDA build); the HTTP path needs none of it.
# Usage: bash scripts/setup_ray.sh
set -euo pipefail
cd "$(dirname "$0")/.."
if .venv/bin/python -c "import ray.data.llm" >/dev/null 2>&1; then
  echo "ray[data] is installed"
  exit 0
fi
.venv/bin/python -m pip install -q -c constraints.txt -e ".[ray]"
.venv/bin/python -c "import ray, ray.data.llm; print('ray', ray.__version__)"
