"""Translation throughput: sentences per second of ``translate`` on Multi30k's test2016.

    python benchmarks/throughput.py runs/tiny-cpu                 # greedy and beam 4, CPU
    python benchmarks/throughput.py runs/tiny-cpu --json results/translator/benchmarks/throughput_cpu.json

Loads a checkpoint of ``python -m transformer_tutorial.train`` and translates the 1,000 German
sentences of test2016 with the package's ``translate`` (sorted by length, 64 sentences per batch,
as the translate command does), once greedily and once with beam search. The time counts the
translation only (the model is loaded and warmed up on a few sentences first), the median of
``--repeats`` runs. It also prints the BLEU of the output, which must not depend on the speed.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch
from common import command_line, environment, markdown_table, write_json

from transformer_tutorial.data import PAIRS
from transformer_tutorial.decoding import corpus_bleu, translate
from transformer_tutorial.translator.checkpoint import load_checkpoint


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", type=Path, help="a run directory or one of its checkpoints")
    parser.add_argument("--beams", type=int, nargs="+", default=[1, 4], help="1 = greedy")
    parser.add_argument("--sentences", type=int, default=None, help="only the first N")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2, help="CPU threads for PyTorch")
    parser.add_argument("--json", default=None, help="also write the results to this JSON file")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    model, _, tokenizer, meta = load_checkpoint(args.checkpoint)
    test = PAIRS["de-en"].load("test")[: args.sentences]
    sources, references = [s for s, _ in test], [t for _, t in test]
    translate(model, tokenizer, sources[:8])  # warm-up
    rows, records = [], []
    for beam in args.beams:
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            hypotheses = translate(model, tokenizer, sources, beam_size=beam)
            times.append(time.perf_counter() - start)
        seconds = sorted(times)[len(times) // 2]
        bleu = corpus_bleu(hypotheses, references)[0].score
        search = "greedy" if beam == 1 else f"beam {beam}"
        rows.append(
            [search, len(sources), f"{seconds:.2f}", f"{len(sources) / seconds:.0f}", f"{bleu:.2f}"]
        )
        records.append(
            {
                "search": search,
                "sentences": len(sources),
                "seconds": seconds,
                "sentences_per_second": len(sources) / seconds,
                "bleu": bleu,
            }
        )
    env = environment(torch.device("cpu"))
    print(
        f"Translation of test2016 with the checkpoint at step {meta.get('step')}, "
        f"threads={env['torch_threads']}, median of {args.repeats}, "
        f"load average {env['load_average']}"
    )
    print()
    print(markdown_table(["search", "sentences", "seconds", "sentences/s", "BLEU"], rows))
    payload = {
        "benchmark": "throughput",
        "command": command_line("throughput", argv),
        "checkpoint_step": meta.get("step"),
        "environment": env,
        "results": records,
    }
    write_json(args.json, payload)
    return payload


if __name__ == "__main__":
    main()
