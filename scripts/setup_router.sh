#!/usr/bin/env bash
# Create .venv-router: SGLang's router (sglang-router, a Rust load balancer shipped as a wheel) in its own virtual
# environment, for the gateway test (tests/test_gateway.py: two OpenAI-compatible servers behind one endpoint) and
# docs/serving.md ("Several servers behind a gateway").
# Idempotent: a finished environment (marker file .venv-router/.medr2-ready) is left as it is.
# Usage: bash scripts/setup_router.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
V=.venv-router
if [ -f "$V/.medr2-ready" ] && "$V/bin/python" -c "import sglang_router.launch_router" >/dev/null 2>&1; then
  echo "$V is ready"
  exit 0
fi
rm -f "$V/.medr2-ready"
[ -x "$V/bin/python" ] || "$PY" -m venv "$V"
"$V/bin/python" -m pip install -q -c constraints.txt "sglang-router==0.3.2"
"$V/bin/python" -c "import sglang_router.launch_router"
touch "$V/.medr2-ready"
echo "$V is ready"
