#!/usr/bin/env bash
# The real CPU run of chapter 16: the `tiny` preset on 2 CPU cores with a 15-minute training
# budget, then the BLEU-against-time curve from its checkpoints (test set) and checkpoint
# averaging by the minute (validation set), then a copy of the small result files (no weights)
# into results/translator/tiny-cpu/ for the chapter to read.
#
#     bash benchmarks/cpu_run.sh                  # needs the Multi30k files (see below)
#     PAIR=zh-en bash benchmarks/cpu_run.sh       # Chinese→English on Tatoeba's pairs
#     MINUTES=5 RUN_DIR=/tmp/try OUT=/tmp/try-results bash benchmarks/cpu_run.sh
#     PROCS=2 THREADS=1 SEED=1 bash benchmarks/cpu_run.sh   # two processes (torchrun), one thread each
#     TRAIN_ARGS="--lr-factor 0.35" bash benchmarks/cpu_run.sh  # the preset with one value changed
#     PHASE=train bash benchmarks/cpu_run.sh      # only the timed training ...
#     PHASE=evaluate bash benchmarks/cpu_run.sh   # ... and its evaluation later (same settings)
#     PHASE=record bash benchmarks/cpu_run.sh     # a trained run's record again, no evaluation
#
# PHASE=train records the run (its results, with the test BLEU of the final model, and its
# provenance); the evaluation (BLEU of every checkpoint, averaging, the CLI) takes about half as
# long as the training and times nothing, so it may run later, when the machine is busy, and
# leaves the quiet machine free for the next timed run sooner. PHASE=all (the default) does both.
#
# PROCS=1 (the default) trains in one process with THREADS intra-op threads; PROCS=N > 1 runs
# N data-parallel processes through torchrun, THREADS threads each, on the same global batch.
#
# Data: $TRANSFORMER_TUTORIAL_DATA, else ../shared/data beside the checkout, else the loader's
# cache (it downloads the Multi30k files when it can; Tatoeba's cmn.txt must be put there).
#
# A timing is honest only on an otherwise idle machine: the script records the load average
# before, every 15 s during, and after the run (provenance.json), so a reader can tell.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-.venv/bin/python}
PAIR=${PAIR:-de-en}
SUFFIX=$([[ "$PAIR" == de-en ]] && echo "" || echo "-$PAIR")  # de-en keeps its historic name
RUN_DIR=${RUN_DIR:-runs/tiny-cpu$SUFFIX}
OUT=${OUT:-results/translator/tiny-cpu$SUFFIX}
MINUTES=${MINUTES:-15}
THREADS=${THREADS:-2}
PROCS=${PROCS:-1}
SEED=${SEED:-0}
PHASE=${PHASE:-all}
if [[ -z "${TRANSFORMER_TUTORIAL_DATA:-}" && -d ../shared/data ]]; then
  export TRANSFORMER_TUTORIAL_DATA=$(cd ../shared/data && pwd)
fi
export OMP_NUM_THREADS=$THREADS PYTHONHASHSEED=0 MINUTES PAIR PROCS

record() {  # the small result files of the run and its provenance, into $OUT
for f in results.json metrics.jsonl samples.json attention.json args.json load.txt; do
  cp "$RUN_DIR/$f" "$OUT/$f"
done
"$PYTHON" - "$OUT" "$START" "$END" "$LOAD_BEFORE" "$LOAD_AFTER" "$COMMAND" <<'EOF'
import json, os, statistics, sys
from pathlib import Path

out, start, end, before, after, command = sys.argv[1:]
samples = [line.split() for line in (Path(out) / "load.txt").read_text().splitlines() if line]
one_minute = [float(s[1]) for s in samples]
provenance = {
    "what": "the real CPU run of chapter 16 (tiny preset, " + os.environ["PAIR"] + ", "
    + os.environ["MINUTES"] + "-minute training budget)",
    "command": command,
    "wrapper": "bash benchmarks/cpu_run.sh",
    "started_utc": start,
    "ended_utc": end,
    "load_average_before": [float(x) for x in before.split()],
    "load_average_after": [float(x) for x in after.split()],
    "load_1min_during": {
        "samples": len(one_minute),
        "median": statistics.median(one_minute) if one_minute else None,
        "max": max(one_minute) if one_minute else None,
    },
    "cpu_cores": os.cpu_count(),
    "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
    "processes": int(os.environ["PROCS"]),
    "files": sorted(p.name for p in Path(out).iterdir()),
}
(Path(out) / "provenance.json").write_text(json.dumps(provenance, indent=2) + "\n")
print(json.dumps(provenance, indent=2))
EOF
}

if [[ "$PHASE" == train || "$PHASE" == all ]]; then
  if [[ -e "$RUN_DIR" ]]; then
    echo "error: $RUN_DIR exists; remove it or set RUN_DIR to a new folder" >&2
    exit 2
  fi
  mkdir -p "$RUN_DIR" "$OUT"

  LAUNCH=("$PYTHON")
  if (( PROCS > 1 )); then
    LAUNCH=("$(dirname "$PYTHON")/torchrun" --standalone --nproc_per_node="$PROCS")
  fi
  CMD=("${LAUNCH[@]}" -m transformer_tutorial.train --preset tiny --pair "$PAIR" --run-dir "$RUN_DIR"
    --max-minutes "$MINUTES" --seed "$SEED" --samples 1000 --attention-samples 3
    --checkpoint-every 100 --keep-checkpoints 1000 --no-progress)
  read -r -a EXTRA <<< "${TRAIN_ARGS:-}"  # flags that override the preset's values, if any
  CMD+=("${EXTRA[@]}")

  # Sample the load average every 15 s while the run lasts.
  ( while true; do echo "$(date +%s) $(cut -d' ' -f1-3 /proc/loadavg)"; sleep 15; done ) \
    > "$RUN_DIR/load.txt" &
  SAMPLER=$!
  trap 'kill $SAMPLER 2>/dev/null || true' EXIT

  START=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
  echo "load average before: $LOAD_BEFORE"
  echo "running: ${CMD[*]}"
  "${CMD[@]}"
  LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
  END=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  kill $SAMPLER 2>/dev/null || true
  echo "load average after: $LOAD_AFTER"
  COMMAND="${CMD[*]}"
  printf 'START=%q\nEND=%q\nLOAD_BEFORE=%q\nLOAD_AFTER=%q\nCOMMAND=%q\n' "$START" "$END" \
    "$LOAD_BEFORE" "$LOAD_AFTER" "$COMMAND" > "$RUN_DIR/timing.env"
fi
if [[ "$PHASE" == train ]]; then
  record
  echo "trained and recorded; evaluate later with the same settings and PHASE=evaluate"
  exit 0
fi
if [[ ! -e "$RUN_DIR/timing.env" ]]; then
  echo "error: $RUN_DIR has no finished training (timing.env); run PHASE=train first" >&2
  exit 2
fi
# shellcheck disable=SC1091
source "$RUN_DIR/timing.env"
mkdir -p "$OUT"
if [[ "$PHASE" == record ]]; then  # a trained run's results and provenance again, no evaluation
  record
  exit 0
fi

# Test BLEU of every checkpoint (greedy), after the run: the denser curve of the chapter.
"$PYTHON" benchmarks/quality.py "$RUN_DIR" --checkpoints --threads "$THREADS" \
  --json "$OUT/bleu_curve.json"

# Validation BLEU of the last checkpoint by each minute, alone and averaged with the two saved
# before it (checkpoint averaging, chapter 16.9).
"$PYTHON" benchmarks/averaging.py "$RUN_DIR" --last 3 --threads "$THREADS" \
  --json "$OUT/averaging.json"

# The translate command on a few sentences that are not in the data, as a reader would use it.
SRC=${PAIR%-*}
TGT=${PAIR#*-}
case "$SRC" in
  de) printf '%s\n' "Ein Hund läuft durch den Schnee." \
        "Zwei Kinder spielen mit einem roten Ball am Strand." \
        "Eine alte Frau verkauft Blumen auf dem Markt." \
        "Der Mann, der neben dem Auto steht, telefoniert mit seiner Tochter." ;;
  zh) printf '%s\n' "你好世界。" "我明天想去公园散步。" "这本书是我的朋友写的。" \
        "如果明天下雨，我们就在家里看电影。" ;;
  en) printf '%s\n' "Hello World." "I want to take a walk in the park tomorrow." \
        "My friend wrote this book." "If it rains tomorrow, we will watch a movie at home." ;;
esac > "$OUT/cli_input.$SRC.txt"
"$PYTHON" -m transformer_tutorial.translate --checkpoint "$RUN_DIR" --beam-size 4 --device cpu \
  < "$OUT/cli_input.$SRC.txt" > "$OUT/cli_output.$TGT.txt"
paste "$OUT/cli_input.$SRC.txt" "$OUT/cli_output.$TGT.txt"

record
du -sh "$OUT"
