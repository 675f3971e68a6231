"""Translation quality against cost: BLEU reached against wall-clock time, from a real run.

    python benchmarks/quality.py results/translator/tiny-cpu
    python benchmarks/quality.py runs/tiny --checkpoints --json runs/tiny/bleu_curve.json

Reads the files that ``python -m transformer_tutorial.train`` writes into its run directory
(see that module's docstring): ``metrics.jsonl`` (validation loss and BLEU after every epoch,
with the wall time since the start) and ``results.json`` (the test BLEU and its provenance).
It prints the curve as a table, and the wall time at which validation BLEU first reached
a few levels.

With ``--checkpoints`` it also translates the test set (greedy search) with every checkpoint
the run kept (``--keep-checkpoints`` of the train command decides how many), which gives a
denser curve than one point per epoch. The time of a checkpoint is the wall time the run had
logged at that step. These translations happen after the run and are not part of its time.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
from common import command_line, environment, markdown_table, write_json

LEVELS = (10.0, 20.0, 25.0, 30.0)


def read_metrics(run_dir: Path) -> list[dict]:
    path = run_dir / "metrics.jsonl"
    if not path.is_file():
        raise SystemExit(
            f"{path} not found; give the run directory of `python -m transformer_tutorial.train`"
        )
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def elapsed_at(records: list[dict], step: int) -> float | None:
    """The wall time (s) the run logged at ``step``, from its train record (or the last one
    before it, which is within ``--log-every`` steps)."""
    train = [r for r in records if r["kind"] == "train" and r["step"] <= step]
    return max(train, key=lambda r: r["step"])["elapsed_s"] if train else None


def first_time_at_level(val: list[dict], level: float) -> float | None:
    for r in val:
        if r["val_bleu"] >= level:
            return r["elapsed_s"]
    return None


def checkpoint_curve(
    run_dir: Path, records: list[dict], test_sentences: int | None, beam_size: int
) -> list[dict]:
    """Test BLEU of every kept checkpoint, with the wall time at its step."""
    from transformer_tutorial.data import PAIRS
    from transformer_tutorial.decoding import translate
    from transformer_tutorial.translator.checkpoint import load_checkpoint
    from transformer_tutorial.translator.report import score

    args = json.loads((run_dir / "args.json").read_text())
    pair = PAIRS[args.get("pair") or "de-en"]  # runs before --pair existed were de-en
    pairs = pair.load("test")[:test_sentences]
    sources, references = [s for s, _ in pairs], [t for _, t in pairs]
    curve = []
    for path in sorted((run_dir / "checkpoints").glob("step-*")):
        model, _, tokenizer, meta = load_checkpoint(path)
        hypotheses = translate(model, tokenizer, sources, beam_size=beam_size)
        bleu, signature = score(pair, hypotheses, references)
        step = int(meta["step"])
        curve.append(
            {
                "step": step,
                "elapsed_s": elapsed_at(records, step),
                "test_bleu": bleu.score,
                "beam_size": beam_size,
                "test_sentences": len(pairs),
                "sacrebleu_signature": signature,
            }
        )
        print(f"checkpoint {path.name}: test BLEU {bleu.score:.2f}", file=sys.stderr)
    if not curve:
        raise SystemExit(f"no checkpoints in {run_dir / 'checkpoints'}")
    return curve


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path, help="a run directory of the train command")
    parser.add_argument(
        "--checkpoints",
        action="store_true",
        help="also score every kept checkpoint on the test set",
    )
    parser.add_argument(
        "--test-sentences", type=int, default=None, help="score only the first N test sentences"
    )
    parser.add_argument("--beam-size", type=int, default=1, help="for --checkpoints (1 = greedy)")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads for PyTorch")
    parser.add_argument("--json", default=None, help="also write the results to this JSON file")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    records = read_metrics(args.run_dir)
    val = [r for r in records if r["kind"] == "val"]
    results_path = args.run_dir / "results.json"
    results = json.loads(results_path.read_text()) if results_path.is_file() else {}

    rows = [
        [
            r["epoch"],
            r["step"],
            f"{r['elapsed_s'] / 60:.1f}",
            f"{r['val_loss']:.3f}",
            f"{r['val_bleu']:.2f}",
        ]
        for r in val
    ]
    print(f"Validation after each epoch, run {args.run_dir}")
    print()
    print(markdown_table(["epoch", "step", "wall time (min)", "val loss", "val BLEU"], rows))
    reached = {f"{level:g}": first_time_at_level(val, level) for level in LEVELS}
    print()
    print(
        markdown_table(
            ["val BLEU reached", "first at wall time (min)"],
            [[k, "not reached" if v is None else f"{v / 60:.1f}"] for k, v in reached.items()],
        )
    )
    if results:
        hw = results.get("hardware", {})
        print()
        print(
            f"Test BLEU {results['test_bleu']:.2f} (beam {results['beam_size']}, "
            f"{results['sacrebleu_signature']}) after {results['steps']} steps, "
            f"{results['wall_time_s'] / 60:.1f} min wall time on {hw.get('device')} "
            f"({hw.get('cpu_cores')} cores{', ' + hw['gpu'] if hw.get('gpu') else ''})."
        )

    curve = None
    if args.checkpoints:
        curve = checkpoint_curve(args.run_dir, records, args.test_sentences, args.beam_size)
        print()
        print(
            markdown_table(
                ["checkpoint step", "wall time (min)", f"test BLEU (beam {args.beam_size})"],
                [
                    [
                        c["step"],
                        "?" if c["elapsed_s"] is None else f"{c['elapsed_s'] / 60:.1f}",
                        f"{c['test_bleu']:.2f}",
                    ]
                    for c in curve
                ],
            )
        )

    payload = {
        "benchmark": "quality",
        "command": command_line("quality", argv),
        "run_dir": str(args.run_dir),
        "validation": val,
        "first_wall_time_s_at_val_bleu": reached,
        "test": {
            k: results.get(k)
            for k in ("test_bleu", "beam_size", "sacrebleu_signature", "steps", "wall_time_s")
        },
        "checkpoint_curve": curve,
        "environment": environment(torch.device("cpu")),
    }
    write_json(args.json, payload)
    return payload


if __name__ == "__main__":
    main()
