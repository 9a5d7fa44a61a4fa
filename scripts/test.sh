#!/usr/bin/env bash
# The fast test suite (the README's test command runs this after installing).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f .venv/bin/activate ] && . .venv/bin/activate
ruff check src tests bench
python -m pytest -q -p no:cacheprovider
