"""What a whole `tiny` training step costs on a CPU, with the translator's two speed-ups and
without them.

    python benchmarks/cpu_step.py                     # 2 threads, markdown table
    python benchmarks/cpu_step.py --json results/translator/cpu_step.json

One step is what ``python -m transformer_tutorial.train`` does per batch (``training.train_step``):
forward, label-smoothed loss, backward, gradient clipping, the Adam update. The model is the
``tiny`` preset's (N=2, D=128, H=4, d_ff=512, one shared vocabulary of 4,000, dropout 0.1,
pre-norm, the fused attention kernel) and the batch has the shape of one of its 1,000-token
batches (64 sentences of 16 target tokens). Four variants take turns, one timed step each per
round, and the table gives the median of ``--repeats`` rounds:

- ``nn.Dropout``, for-each Adam: the translator before the change;
- ``PackedDropout`` (``translator/dropout.py``), for-each Adam;
- ``PackedDropout``, fused Adam: the translator now;
- no dropout at all, fused Adam: the floor that cheaper masks can approach.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import replace

import torch
from common import (
    command_line,
    environment,
    interleaved_median_seconds,
    markdown_table,
    write_json,
)
from train_step import make_batch

from transformer_tutorial.training import Batch, LabelSmoothingLoss, make_optimizer, train_step
from transformer_tutorial.transformer import Transformer, TransformerConfig
from transformer_tutorial.translator.dropout import use_packed_dropout

TINY = TransformerConfig(
    src_vocab_size=4000,
    tgt_vocab_size=4000,
    d_model=128,
    num_heads=4,
    num_encoder_layers=2,
    num_decoder_layers=2,
    d_ff=512,
    dropout=0.1,
    max_len=256,
    norm_first=True,
    share_embeddings=True,
    fused_attention=True,
)

# name: (dropout probability, packed masks, fused Adam)
VARIANTS = {
    "nn.Dropout, for-each Adam (before)": (0.1, False, False),
    "packed dropout, for-each Adam": (0.1, True, False),
    "packed dropout, fused Adam (now)": (0.1, True, True),
    "no dropout, fused Adam": (0.0, False, True),
}


def full_step(dropout: float, packed: bool, fused: bool, batch: Batch) -> Callable[[], None]:
    """A closure doing one training step of a fresh `tiny` model on ``batch``."""
    torch.manual_seed(0)
    model = Transformer(replace(TINY, dropout=dropout))
    if packed:
        use_packed_dropout(model)
    optimizer = make_optimizer(model, lr=1e-3, fused=fused)
    criterion = LabelSmoothingLoss(0.1)

    def step() -> None:
        train_step(model, batch, criterion, optimizer, clip_norm=1.0)

    return step


PROFILED = ("nn.Dropout, for-each Adam (before)", "packed dropout, fused Adam (now)")


def top_operators(step: Callable[[], None], n_steps: int, top: int = 8) -> list[tuple[str, float]]:
    """The operators that take the largest shares of the CPU time of ``n_steps`` steps (their
    own time, without the operators they call), as ``(name, share)``, largest first."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(n_steps):
            step()
    events = prof.key_averages()
    total = sum(e.self_cpu_time_total for e in events)
    ranked = sorted(events, key=lambda e: e.self_cpu_time_total, reverse=True)[:top]
    return [(e.key, e.self_cpu_time_total / total) for e in ranked]


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=64, help="sentences per batch B")
    parser.add_argument("--length", type=int, default=16, help="source and target length")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=40)
    parser.add_argument("--profile-steps", type=int, default=20, help="steps profiled")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads for PyTorch")
    parser.add_argument("--json", default=None, help="also write the results to this JSON file")
    args = parser.parse_args(argv)

    torch.set_num_threads(args.threads)
    device = torch.device("cpu")
    src, tgt_in, tgt_out = make_batch(
        args.batch, args.length, args.length, TINY.tgt_vocab_size, device
    )
    batch = Batch(src, tgt_in, tgt_out)
    steps = {name: full_step(*v, batch) for name, v in VARIANTS.items()}
    seconds = interleaved_median_seconds(steps, device, args.warmup, args.repeats)
    before = seconds[next(iter(VARIANTS))]
    tokens = batch.n_tokens
    rows, records = [], []
    for name, (dropout, packed, fused) in VARIANTS.items():
        s = seconds[name]
        rows.append([name, f"{1e3 * s:.1f}", f"{tokens / s:.0f}", f"{before / s:.2f}"])
        records.append(
            {
                "variant": name,
                "dropout": dropout,
                "packed_dropout": packed,
                "fused_adam": fused,
                "ms_per_step": 1e3 * s,
                "target_tokens_per_second": tokens / s,
                "speed_up_over_before": before / s,
            }
        )
    profiles = {name: top_operators(steps[name], args.profile_steps) for name in PROFILED}
    env = environment(device)
    print(
        f"One tiny training step (forward, loss, backward, clip, Adam), B={args.batch}, "
        f"S=T={args.length} ({tokens} target tokens), threads={env['torch_threads']}, median of "
        f"{args.repeats} after {args.warmup} warm-up steps, load average {env['load_average']}"
    )
    print()
    headers = ["variant", "ms per step", "target tokens/s", "speed-up over before"]
    print(markdown_table(headers, rows))
    for name, ops in profiles.items():
        print(f"\nWhere the time goes ({name}; torch.profiler, {args.profile_steps} steps):\n")
        print(
            markdown_table(
                ["operator", "share of CPU time"], [[o, f"{100 * f:.1f} %"] for o, f in ops]
            )
        )
    payload = {
        "benchmark": "cpu_step",
        "command": command_line("cpu_step", argv),
        "settings": {k: getattr(args, k) for k in ("batch", "length", "warmup", "repeats")},
        "environment": env,
        "results": records,
        "profiles": {name: dict(ops) for name, ops in profiles.items()},
    }
    write_json(args.json, payload)
    return payload


if __name__ == "__main__":
    main()
