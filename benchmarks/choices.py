"""Which training choices pay within a time budget: validation BLEU at 5 minutes and at the end.

    python benchmarks/choices.py runs/A runs/B ... --baseline runs/A \\
        --json results/translator/choices/choices.json

Each argument is the run directory of one ``python -m transformer_tutorial.train`` run with a
time budget (``--max-minutes``) and checkpoints kept every ``--checkpoint-every`` steps. For each
run it reports what differs from the baseline's options, the steps it took, and the validation
BLEU (greedy, the whole validation set) of

* the last checkpoint saved within the first ``--early`` minutes (5 by default), translated here,
  after the run -- this costs the run nothing;
* the final model (the run's last ``val`` record, made when its budget was spent).

With ``--average K`` it also scores the average of the last ``K`` checkpoints' weights. With
``--length-penalties A [B ...]`` it also translates the validation set with the final model by beam
search (``--beam-size``, 4 by default) once per length penalty ``alpha`` and reports the BLEU and the
length ratio (output length / reference length) of each. Only the validation set is used: choices
are made on it, never on the test set.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import torch
from common import environment, markdown_table, write_json
from quality import elapsed_at, read_metrics

IGNORED = {"run_dir", "data_dir", "no_progress", "resume", "samples", "attention_samples"}


def checkpoints(run_dir: Path) -> list[Path]:
    return sorted(p for p in (run_dir / "checkpoints").glob("step-*") if p.is_dir())


def val_bleu(model, tokenizer, pair, val, **search) -> float:
    return val_score(model, tokenizer, pair, val, **search).score


def val_score(model, tokenizer, pair, val, **search):
    """sacreBLEU's score object (``.score``, ``.sys_len``, ``.ref_len``) of the validation set;
    ``search``: ``beam_size`` and ``length_penalty`` for ``translate`` (greedy by default)."""
    from transformer_tutorial.decoding import translate
    from transformer_tutorial.translator.report import score

    hypotheses = translate(model, tokenizer, [s for s, _ in val], **search)
    return score(pair, hypotheses, [t for _, t in val])[0]


def length_penalty_sweep(
    model, tokenizer, pair, val, alphas: list[float], beam_size: int
) -> list[dict]:
    """Validation BLEU and length ratio of beam search at each length penalty ``alpha``."""
    sweep = []
    for alpha in alphas:
        s = val_score(model, tokenizer, pair, val, beam_size=beam_size, length_penalty=alpha)
        sweep.append({"length_penalty": alpha, "val_bleu": s.score, "ratio": s.sys_len / s.ref_len})
    return sweep


def measure(
    run_dir: Path,
    early_minutes: float,
    average: int | None,
    alphas: list[float] | None = None,
    beam_size: int = 4,
) -> dict:
    from transformer_tutorial.data import PAIRS
    from transformer_tutorial.translator.checkpoint import average_checkpoints, load_checkpoint

    args = json.loads((run_dir / "args.json").read_text())
    metrics = read_metrics(run_dir)
    val = [r for r in metrics if r["kind"] == "val"]
    pair = PAIRS[args["pair"]]
    val_pairs = pair.load("val", data_dir=args.get("data_dir"))
    kept = checkpoints(run_dir)
    early = [
        p for p in kept if elapsed_at(metrics, int(p.name.split("-")[1])) <= early_minutes * 60
    ]
    if not early:
        raise SystemExit(f"{run_dir}: no checkpoint within {early_minutes} minutes")
    model, _, tokenizer, meta = load_checkpoint(early[-1])
    out = {
        "run": run_dir.name,
        "args": {k: v for k, v in args.items() if k not in ("run_dir", "data_dir")},
        "steps": val[-1]["step"],
        "early_step": meta["step"],
        "early_elapsed_s": elapsed_at(metrics, meta["step"]),
        "val_bleu_early": val_bleu(model, tokenizer, pair, val_pairs),
        "val_bleu_end": val[-1]["val_bleu"],
        "end_elapsed_s": val[-1]["elapsed_s"],
        "validation": [
            {k: r[k] for k in ("step", "val_loss", "val_bleu", "elapsed_s")} for r in val
        ],
    }
    if alphas:
        final, _, _, final_meta = load_checkpoint(kept[-1])
        if final_meta["step"] != out["steps"]:
            raise SystemExit(f"{run_dir}: the last checkpoint is not the final model")
        out["beam_size"] = beam_size
        out["length_penalty_sweep"] = length_penalty_sweep(
            final, tokenizer, pair, val_pairs, alphas, beam_size
        )
    if average:
        model = average_checkpoints(kept[-average:])[0]
        out[f"val_bleu_average_last_{average}"] = val_bleu(model, tokenizer, pair, val_pairs)
    load = run_dir.with_suffix(".load")  # optional: "time load1 load5 load15" lines
    if load.is_file():
        ones = [float(line.split()[1]) for line in load.read_text().splitlines() if line.strip()]
        out["load_1min_median"] = statistics.median(ones)
    return out


def changes(args: dict, baseline: dict) -> str:
    diff = [
        f"--{k.replace('_', '-')} {v}"
        for k, v in sorted(args.items())
        if k not in IGNORED and baseline.get(k) != v
    ]
    return " ".join(diff) or "(baseline)"


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run directories")
    parser.add_argument("--baseline", type=Path, help="the run the others are compared with")
    parser.add_argument("--early", type=float, default=5.0, help="minutes (default 5)")
    parser.add_argument("--average", type=int, help="also score the last K checkpoints averaged")
    parser.add_argument(
        "--length-penalties",
        type=float,
        nargs="+",
        metavar="ALPHA",
        help="also score the final model by beam search at each of these length penalties",
    )
    parser.add_argument("--beam-size", type=int, default=4, help="for --length-penalties")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads for PyTorch")
    parser.add_argument("--json", default=None, help="also write the results to this JSON file")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    baseline = json.loads(((args.baseline or args.runs[0]) / "args.json").read_text())
    runs = [
        measure(r, args.early, args.average, args.length_penalties, args.beam_size)
        for r in args.runs
    ]
    for r in runs:
        r["changes"] = changes(r["args"], baseline)
    headers = ["change", "steps", f"val BLEU at {args.early:g} min", "val BLEU at the end"]
    rows = [
        [r["changes"], r["steps"], f"{r['val_bleu_early']:.2f}", f"{r['val_bleu_end']:.2f}"]
        for r in runs
    ]
    if args.average:
        headers.append(f"average of last {args.average}")
        for row, r in zip(rows, runs, strict=True):
            row.append(f"{r[f'val_bleu_average_last_{args.average}']:.2f}")
    print(markdown_table(headers, rows))
    if args.length_penalties:
        print(f"\nfinal model, beam {args.beam_size}: validation BLEU (length ratio)")
        print(
            markdown_table(
                ["run", *(f"alpha = {a:g}" for a in args.length_penalties)],
                [
                    [r["run"]]
                    + [f"{x['val_bleu']:.2f} ({x['ratio']:.3f})" for x in r["length_penalty_sweep"]]
                    for r in runs
                ],
            )
        )
    payload = {
        "benchmark": "choices",
        "early_minutes": args.early,
        "environment": environment(torch.device("cpu")),
        "runs": runs,
    }
    write_json(args.json, payload)
    return payload


if __name__ == "__main__":
    main()
