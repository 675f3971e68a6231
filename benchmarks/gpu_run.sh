#!/usr/bin/env bash
# The GPU figures of chapter 16, in one prepared script of at most 10 minutes on one GPU:
#   1. the `base` preset (N=6, d_model=512, the paper's base model) with an 8-minute training
#      budget, then the test BLEU with beam search (the train command does it at the end);
#   2. the training-step and decoding benchmarks on cuda.
# Everything small lands in results/translator/gpu/ (no weights): commit that folder, and the
# chapter and benchmarks/README.md pick the numbers up.
#
#     bash benchmarks/gpu_run.sh
#     PYTHON=/opt/venv/bin/python MINUTES=8 bash benchmarks/gpu_run.sh
#
# Needs: a Python with a CUDA build of PyTorch and requirements.txt (the package is used from
# src/ via PYTHONPATH, nothing is installed); the Multi30k files in $TRANSFORMER_TUTORIAL_DATA,
# ../shared/data, or ./data/multi30k (the official file names, .gz or plain).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python}
OUT=${OUT:-results/translator/gpu}
RUN_DIR=${RUN_DIR:-runs/base-gpu}
MINUTES=${MINUTES:-8}
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONHASHSEED=0
if [[ -z "${TRANSFORMER_TUTORIAL_DATA:-}" ]]; then
  for d in ../shared/data ./data; do
    if [[ -d "$d/multi30k" ]]; then export TRANSFORMER_TUTORIAL_DATA=$(cd "$d" && pwd); break; fi
  done
fi
"$PYTHON" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 'no CUDA GPU visible to $PYTHON (torch ' + torch.__version__ + ')')"
if [[ -e "$RUN_DIR" ]]; then
  echo "error: $RUN_DIR exists; remove it or set RUN_DIR to a new folder" >&2
  exit 2
fi
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$OUT/nvidia-smi.csv" || true

START=$(date -u +%Y-%m-%dT%H:%M:%SZ)
# 1. The base model. Checkpoints only at the end (one), to spend the minutes on training.
"$PYTHON" -m transformer_tutorial.train --preset base --device cuda --run-dir "$RUN_DIR" \
  --max-minutes "$MINUTES" --samples 1000 --attention-samples 3 \
  --checkpoint-every 1000000 --keep-checkpoints 1 --no-progress
mkdir -p "$OUT/base"
for f in results.json metrics.jsonl samples.json attention.json args.json; do
  cp "$RUN_DIR/$f" "$OUT/base/$f"
done
"$PYTHON" benchmarks/quality.py "$RUN_DIR" --json "$OUT/base/quality.json" | tee "$OUT/quality.md"

# 2. The benchmarks on the GPU (a few seconds each).
"$PYTHON" benchmarks/train_step.py --device cuda --batch 64 --sizes 2x128x4 3x256x8 6x512x8 \
  --warmup 5 --repeats 20 --json "$OUT/train_step.json" | tee "$OUT/train_step.md"
"$PYTHON" benchmarks/decoding.py --device cuda --batch 64 --lengths 16 32 64 128 \
  --warmup 2 --repeats 5 --json "$OUT/decoding.json" | tee "$OUT/decoding.md"
END=$(date -u +%Y-%m-%dT%H:%M:%SZ)

"$PYTHON" - "$OUT" "$START" "$END" <<'EOF'
import json, sys
from pathlib import Path
out, start, end = sys.argv[1:]
info = {"what": "chapter 16 GPU run: base preset, 8-minute budget, then benchmarks on cuda",
        "wrapper": "bash benchmarks/gpu_run.sh", "started_utc": start, "ended_utc": end,
        "files": sorted(str(p.relative_to(out)) for p in Path(out).rglob("*") if p.is_file())}
(Path(out) / "provenance.json").write_text(json.dumps(info, indent=2) + "\n")
EOF
du -sh "$OUT"
