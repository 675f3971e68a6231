"""Checkpoint averaging against time: is the mean of the last few checkpoints a better model?

    python benchmarks/averaging.py runs/tiny-cpu --last 3 \\
        --json results/translator/tiny-cpu/averaging.json
    python benchmarks/averaging.py runs/screen --minutes 2 3 4 5 --last 2 3 4 5 --every 100

For each of ``--minutes`` (default: every whole minute of the run, and its end) it takes the last
checkpoint the run saved within that many minutes of its start (or, with ``--steps``, the last
one at or before each of those steps), and measures the validation BLEU
(greedy search, the whole validation set) of that checkpoint alone and of the average of its
weights with those of the checkpoints saved just before it, ``K`` in all for each ``K`` of
``--last`` (``transformer_tutorial.translator.checkpoint.average_checkpoints``). ``--every N``
uses only the checkpoints whose step is a multiple of ``N``, as if the run had saved every ``N``
steps. The time of a checkpoint is the wall time the run had logged at its step; the averages are
made after the run and cost it nothing. Only the validation set is used: this is how the number of
checkpoints to average is chosen, so the test set must not see it.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import torch
from choices import checkpoints, val_bleu
from common import command_line, environment, markdown_table, write_json
from quality import elapsed_at, read_metrics


def step_of(checkpoint: Path) -> int:
    return int(checkpoint.name.split("-")[1])


def measure(
    run_dir: Path,
    minutes: list[float] | None,
    lasts: list[int],
    every: int,
    steps: list[int] | None = None,
) -> dict:
    from transformer_tutorial.data import PAIRS
    from transformer_tutorial.translator.checkpoint import average_checkpoints

    args = json.loads((run_dir / "args.json").read_text())
    records = read_metrics(run_dir)
    pair = PAIRS[args["pair"]]
    val = pair.load("val", data_dir=args.get("data_dir"))
    kept = [p for p in checkpoints(run_dir) if step_of(p) % every == 0]
    times = {p: elapsed_at(records, step_of(p)) for p in kept}
    if minutes is None:
        end = max(t for t in times.values() if t is not None) / 60
        minutes = [*range(1, math.ceil(end)), end]  # every whole minute, and the end

    def bleu(paths: list[Path]) -> float:
        model, _, tokenizer, _ = average_checkpoints(paths)
        return val_bleu(model, tokenizer, pair, val)

    rows = []
    points = [("step", s) for s in steps] if steps else [("minutes", m) for m in minutes]
    for kind, limit in points:
        if kind == "step":
            by_then = [p for p in kept if step_of(p) <= limit]
        else:
            by_then = [p for p in kept if times[p] is not None and times[p] <= limit * 60]
        if not by_then:
            continue
        row = {
            kind: limit,  # "minutes" or "step": what was asked for
            "step": step_of(by_then[-1]),
            "elapsed_s": times[by_then[-1]],
            "val_bleu": bleu(by_then[-1:]),
        }
        for k in lasts:
            if len(by_then) >= k:
                row[f"val_bleu_last_{k}"] = bleu(by_then[-k:])
                row[f"steps_last_{k}"] = [step_of(p) for p in by_then[-k:]]
        rows.append(row)
        cells = " ".join(f"{row.get(f'val_bleu_last_{k}', math.nan):.2f}" for k in lasts)
        print(f"{run_dir.name}: step {row['step']}: {row['val_bleu']:.2f} | {cells}")
    args = {k: v for k, v in args.items() if k not in ("run_dir", "data_dir")}
    return {"run": run_dir.name, "args": args, "every": every, "points": rows}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run directories of the train command")
    parser.add_argument("--minutes", type=float, nargs="+", help="default: every whole minute")
    parser.add_argument(
        "--steps", type=int, nargs="+", help="the last checkpoint at each of these steps instead"
    )
    parser.add_argument(
        "--last", type=int, nargs="+", default=[3], metavar="K", help="checkpoints to average"
    )
    parser.add_argument("--every", type=int, default=1, help="use only steps divisible by this")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads for PyTorch")
    parser.add_argument("--json", default=None, help="also write the results to this JSON file")
    args = parser.parse_args(argv)
    if min(args.last) < 1 or args.every < 1:
        parser.error("--last and --every must be at least 1")
    torch.set_num_threads(args.threads)
    runs = [measure(r, args.minutes, args.last, args.every, args.steps) for r in args.runs]
    for r in runs:
        print(f"\n{r['run']}: validation BLEU (greedy) of the last checkpoint by each time, alone")
        print("and averaged with the ones before it (K checkpoints in all)")
        print(
            markdown_table(
                ["by", "step", "saved at (min)", "alone", *(f"K = {k}" for k in args.last)],
                [
                    [
                        f"{row['minutes']:.2f} min" if "minutes" in row else f"step {row['step']}",
                        row["step"],
                        f"{row['elapsed_s'] / 60:.2f}",
                        f"{row['val_bleu']:.2f}",
                    ]
                    + [f"{row.get(f'val_bleu_last_{k}', math.nan):.2f}" for k in args.last]
                    for row in r["points"]
                ],
            )
        )
    payload = {
        "benchmark": "averaging",
        "command": command_line("averaging", argv),
        "environment": environment(torch.device("cpu")),
        "last": args.last,
        "runs": runs,
    }
    write_json(args.json, payload)
    return payload


if __name__ == "__main__":
    main()
