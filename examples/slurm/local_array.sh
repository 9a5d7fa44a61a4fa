#!/bin/bash
# The sequence of eval_array.sbatch on one machine: a shell loop stands in for the Slurm array (no Slurm here),
# `transformers serve` with the offline tiny VLM stands in for vLLM. Run from the repository root:
#
#   bash examples/slurm/local_array.sh WORKDIR [N]
#
# WORKDIR gets the tiny model, a sample bench, N shard runs (each started and stopped its own server) and
# their merge.
set -euo pipefail
WORK=${1:?usage: local_array.sh WORKDIR [N]}
N=${2:-2}
mkdir -p "$WORK"
[ -d "$WORK/tiny" ] || medr2 tiny-vlm --out "$WORK/tiny"
[ -d "$WORK/bench" ] || medr2 build --source sample --out "$WORK/bench" --cases 8 >/dev/null
MODEL=$(cd "$WORK/tiny" && pwd)        # transformers serve names the model by its absolute path
TRANSFORMERS=$(dirname "$(command -v medr2)")/transformers
for ((i = 0; i < N; i++)); do          # SLURM_ARRAY_TASK_ID=i, SLURM_ARRAY_TASK_COUNT=N
  medr2 eval --bench "$WORK/bench" --model "openai:$MODEL" --preset medr2-tiny \
    --mode independent,chain-own --max-new-tokens 16 --concurrency 4 --no-progress \
    --shard "$i/$N" --out "$WORK/runs/tiny.shard$i" \
    --serve "$TRANSFORMERS serve $MODEL --device cpu --dtype float32 --host 127.0.0.1 --port {port}" \
    --serve-timeout 300
done
medr2 merge "$WORK"/runs/tiny.shard* --out "$WORK/runs/tiny"
medr2 score "$WORK/runs/tiny"
