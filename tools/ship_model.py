"""Ship a trained translator with the package: its final checkpoint in half precision.

    python tools/ship_model.py runs/ship-de-en de-en
    python tools/ship_model.py runs/ship-zh-en zh-en

Reads the run's final checkpoint, stores its weights as float16 (half the size; the model runs
in float32, the weights are widened on loading), and writes the checkpoint's files with
``provenance.json`` into ``src/transformer_tutorial/pretrained/<pair>/``, where
``python -m transformer_tutorial.translate --checkpoint <pair>`` and ``load_checkpoint(<pair>)``
find it. Before writing, it translates the pair's whole test set with beam search (the run's
beam size and length penalty) in float32 and from the float16 weights, and refuses to ship when
the two test BLEU scores differ by more than 0.1.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import torch

from transformer_tutorial.data import PAIRS
from transformer_tutorial.decoding import translate
from transformer_tutorial.translator.checkpoint import (
    SHIPPED,
    load_checkpoint,
    resolve_checkpoint,
    save_checkpoint,
)
from transformer_tutorial.translator.report import score

MAX_BLEU_CHANGE = 0.1


def test_bleu(model, tokenizer, pair, beam_size: int, length_penalty: float) -> float:
    test = pair.load("test")
    hypotheses = translate(model, tokenizer, [s for s, _ in test], beam_size=beam_size,
                           length_penalty=length_penalty)  # fmt: skip
    return score(pair, hypotheses, [t for _, t in test])[0].score


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "run_dir", type=Path, help="a finished run of python -m transformer_tutorial.train"
    )
    p.add_argument("pair", choices=sorted(PAIRS))
    args = p.parse_args(argv)
    torch.set_num_threads(max(1, torch.get_num_threads()))
    results = json.loads((args.run_dir / "results.json").read_text(encoding="utf-8"))
    if results["pair"] != args.pair:
        raise SystemExit(f"{args.run_dir} trained {results['pair']}, not {args.pair}.")
    checkpoint = resolve_checkpoint(args.run_dir)
    model, config, tokenizer, meta = load_checkpoint(checkpoint)
    pair, beam = PAIRS[args.pair], results["beam_size"]
    penalty = results.get("length_penalty", meta.get("length_penalty", 0.6))
    start = time.perf_counter()
    full = test_bleu(model, tokenizer, pair, beam, penalty)
    with tempfile.TemporaryDirectory() as tmp:
        save_checkpoint(tmp, model.half(), config, tokenizer, step=meta["step"],
                        meta={k: v for k, v in meta.items() if k not in ("step", "sha256")},
                        keep_last=None)  # fmt: skip
        half_model, _, _, _ = load_checkpoint(tmp)
        half = test_bleu(half_model, tokenizer, pair, beam, penalty)
        print(f"test BLEU {full:.2f} (float32) and {half:.2f} (float16 weights), "
              f"{time.perf_counter() - start:.0f} s")  # fmt: skip
        if abs(full - half) > MAX_BLEU_CHANGE:
            print(f"refused: the float16 weights change test BLEU by more than {MAX_BLEU_CHANGE}")
            return 1
        target = SHIPPED / args.pair
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(resolve_checkpoint(tmp), target)
    provenance = {
        "pair": args.pair,
        "trained_by": results["command"],
        "git_commit": results["git_commit"],
        "hardware": results["hardware"],
        "wall_time_s": results["wall_time_s"],
        "steps": results["steps"],
        "test_set": results["test_set"],
        "beam_size": beam,
        "length_penalty": penalty,
        "test_bleu_float32": round(full, 2),
        "test_bleu_float16": round(half, 2),
        "sacrebleu_signature": results["sacrebleu_signature"],
        "shipped_by": "python tools/ship_model.py " + " ".join(sys.argv[1:]),
    }
    (target / "provenance.json").write_text(json.dumps(provenance, indent=2) + "\n")
    size = sum(f.stat().st_size for f in target.iterdir())
    print(f"shipped {args.pair}: {target} ({size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
