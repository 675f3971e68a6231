"""Decoding speed: the key/value cache against recomputing the whole prefix, greedy and beam.

    python benchmarks/decoding.py                          # CPU, output lengths 16 32 64
    python benchmarks/decoding.py --batch 8 --lengths 50   # a small batch: weight-bound steps
    python benchmarks/decoding.py --device cuda --batch 64 --lengths 16 32 64 128 256

Every run decodes exactly ``L`` tokens per sentence (``eos_id=None``: no sentence stops early),
so the work depends only on ``L`` and the weights may be random. With the cache each step feeds
one new token and reuses the keys and values of the earlier ones; without it each step runs the
decoder over the whole prefix again, so its cost grows with the square of ``L``.

Tokens/s counts output tokens of the returned translations, ``B * L`` per batch; beam search
does ``K`` times more decoder work for the same count. Each run also checks that the cache does
not change the output (the "same output" column).
"""

from __future__ import annotations

import argparse

import torch
from common import (
    command_line,
    environment,
    interleaved_median_seconds,
    markdown_table,
    resolve_device,
    write_json,
)

from transformer_tutorial.decoding import beam_search, greedy_decode
from transformer_tutorial.sequences import BOS_ID, PAD_ID
from transformer_tutorial.transformer import Transformer, TransformerConfig


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu", help="cpu or cuda (default cpu)")
    parser.add_argument("--layers", type=int, default=3, help="layers per stack N")
    parser.add_argument("--d-model", type=int, default=256, help="width D")
    parser.add_argument("--heads", type=int, default=8, help="attention heads H")
    parser.add_argument("--vocab", type=int, default=8000, help="vocabulary size V")
    parser.add_argument(
        "--batch",
        type=int,
        default=64,
        help="sentences decoded together B (64: what the translate command decodes at once)",
    )
    parser.add_argument("--src-len", type=int, default=20, help="source length S")
    parser.add_argument(
        "--lengths", type=int, nargs="+", default=[16, 32, 64], help="output lengths L"
    )
    parser.add_argument("--beam", type=int, default=4, help="beam size K")
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2, help="CPU threads for PyTorch")
    parser.add_argument("--json", default=None, help="also write the results to this JSON file")
    args = parser.parse_args(argv)

    torch.set_num_threads(args.threads)
    device = resolve_device(args.device)
    config = TransformerConfig(
        src_vocab_size=args.vocab,
        tgt_vocab_size=args.vocab,
        d_model=args.d_model,
        num_heads=args.heads,
        num_encoder_layers=args.layers,
        num_decoder_layers=args.layers,
        d_ff=4 * args.d_model,
        dropout=0.1,
        max_len=max(max(args.lengths), args.src_len) + 1,
        fused_attention=True,
    )
    torch.manual_seed(0)
    model = Transformer(config).to(device).eval()
    g = torch.Generator().manual_seed(0)
    src = torch.randint(4, args.vocab, (args.batch, args.src_len), generator=g)  # (B, S)
    src[1::2, -3:] = PAD_ID  # every other sentence is 3 tokens shorter
    src = src.to(device)

    def run(search: str, L: int, use_cache: bool) -> torch.Tensor:
        if search == "greedy":
            return greedy_decode(model, src, L, BOS_ID, None, use_cache=use_cache)
        return beam_search(
            model, src, args.beam, L, bos_id=BOS_ID, eos_id=None, use_cache=use_cache
        )

    rows, records = [], []
    for search in ("greedy", f"beam {args.beam}"):
        kind = search.split()[0]
        for L in args.lengths:
            cached, recomputed = run(kind, L, True), run(kind, L, False)
            same = torch.equal(cached, recomputed)
            if cached.shape != (args.batch, L):
                raise AssertionError(
                    f"expected {(args.batch, L)} tokens, got {tuple(cached.shape)}"
                )
            seconds = interleaved_median_seconds(
                {
                    "cache": lambda kind=kind, L=L: run(kind, L, True),
                    "recompute": lambda kind=kind, L=L: run(kind, L, False),
                },
                device,
                args.warmup,
                args.repeats,
            )
            tokens = args.batch * L
            tps = {name: tokens / s for name, s in seconds.items()}
            speedup = seconds["recompute"] / seconds["cache"]
            rows.append(
                [
                    search,
                    L,
                    f"{tps['cache']:.0f}",
                    f"{tps['recompute']:.0f}",
                    f"{speedup:.2f}",
                    "yes" if same else "NO",
                ]
            )
            records.append(
                {
                    "search": search,
                    "output_length": L,
                    "tokens_per_second_cache": tps["cache"],
                    "tokens_per_second_recompute": tps["recompute"],
                    "seconds_cache": seconds["cache"],
                    "seconds_recompute": seconds["recompute"],
                    "speedup": speedup,
                    "same_output": same,
                }
            )
    env = environment(device)
    print(
        f"Decoding, N={args.layers}, D={args.d_model}, H={args.heads}, V={args.vocab}, "
        f"B={args.batch}, S={args.src_len}, device={device}, threads={env['torch_threads']}, "
        f"median of {args.repeats} after {args.warmup} warm-up runs, load average {env['load_average']}"
    )
    print()
    print(
        markdown_table(
            [
                "search",
                "output length L",
                "cache (tokens/s)",
                "recompute (tokens/s)",
                "cache speed-up",
                "same output",
            ],
            rows,
        )
    )
    payload = {
        "benchmark": "decoding",
        "command": command_line("decoding", argv),
        "settings": {
            k: getattr(args, k)
            for k in (
                "layers",
                "d_model",
                "heads",
                "vocab",
                "batch",
                "src_len",
                "beam",
                "warmup",
                "repeats",
                "threads",
            )
        },
        "environment": env,
        "results": records,
    }
    write_json(args.json, payload)
    if not all(r["same_output"] for r in records):
        # Not an error by itself: the two paths round differently, and with random weights two
        # candidates can tie to the last bit. Look at the rows before trusting the speed-up.
        print("warning: the cache changed the output of some runs (see 'same output')")
    return payload


if __name__ == "__main__":
    main()
