"""Training-step time: our Transformer against ``torch.nn.Transformer`` at the same size.

    python benchmarks/train_step.py                       # CPU, three sizes, markdown table
    python benchmarks/train_step.py --device cuda --batch 64 --json results/translator/gpu/train_step.json

One step = forward (teacher forcing) + label-smoothed loss + backward, in training mode with
dropout, on one fixed padded batch. Both models get the same embeddings-positions-stacks-output
shape, the same masks and the same batch: ``torch.nn.Transformer``'s stacks are wrapped with a
model's token embeddings, positions and tied output projection (``reference.TorchTransformer``,
the same wrapper the book's checks use), so that it does the same work. Its final
encoder/decoder LayerNorms are removed (our post-norm stacks have none), so the parameter counts
are equal. After ``--warmup`` untimed steps of each, the models take turns, one
timed step each per round, and the table gives the median of ``--repeats`` rounds (taking turns
means a change in the machine's load hits all columns alike).

Columns: our model with the explicit attention of chapter 6 (matmul-mask-softmax-matmul),
with the fused kernel (``F.scaled_dot_product_attention``, ``fused_attention=True``), and
``nn.Transformer``; the ratio is fused / nn.Transformer (below 1 = ours is faster).
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
    resolve_device,
    write_json,
)
from torch import Tensor, nn

from transformer_tutorial.reference import TorchTransformer
from transformer_tutorial.sequences import PAD_ID
from transformer_tutorial.training import LabelSmoothingLoss
from transformer_tutorial.transformer import Transformer, TransformerConfig, count_parameters


def parse_size(text: str) -> tuple[int, int, int]:
    """``"6x512x8"`` -> (layers per stack, d_model, heads)."""
    try:
        layers, d_model, heads = (int(v) for v in text.split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"a size is LAYERSxD_MODELxHEADS, e.g. 6x512x8; got {text!r}"
        ) from None
    return layers, d_model, heads


def make_batch(
    batch: int, src_len: int, tgt_len: int, vocab: int, device: torch.device
) -> tuple[Tensor, Tensor, Tensor]:
    """A fixed random batch with realistic padding: row b is shortened by b % 5 positions."""
    g = torch.Generator().manual_seed(0)
    src = torch.randint(4, vocab, (batch, src_len), generator=g)  # (B, S)
    tgt = torch.randint(4, vocab, (batch, tgt_len + 1), generator=g)  # (B, T + 1)
    for b in range(batch):
        cut = b % 5
        if cut:
            src[b, src_len - cut :] = PAD_ID
            tgt[b, tgt_len + 1 - cut :] = PAD_ID
    return src.to(device), tgt[:, :-1].to(device), tgt[:, 1:].to(device)


def training_step(model: nn.Module, batch: tuple[Tensor, Tensor, Tensor]) -> Callable[[], None]:
    """A closure doing one forward + loss + backward of ``model`` on ``batch``."""
    src, tgt_in, tgt_out = batch
    criterion = LabelSmoothingLoss(0.1)
    model.train()

    def step() -> None:
        model.zero_grad(set_to_none=True)
        logits = model(src, tgt_in)  # (B, T, V)
        criterion(logits, tgt_out).backward()

    return step


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu", help="cpu or cuda (default cpu)")
    parser.add_argument(
        "--sizes",
        type=parse_size,
        nargs="+",
        default=[parse_size(s) for s in ("2x128x4", "3x256x8", "6x512x8")],
        help="model sizes LAYERSxD_MODELxHEADS (d_ff = 4 * d_model); default 2x128x4 3x256x8 6x512x8",
    )
    parser.add_argument("--batch", type=int, default=16, help="sentences per batch B")
    parser.add_argument("--src-len", type=int, default=24, help="padded source length S")
    parser.add_argument("--tgt-len", type=int, default=24, help="padded target length T")
    parser.add_argument("--vocab", type=int, default=8000, help="vocabulary size V")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2, help="CPU threads for PyTorch")
    parser.add_argument(
        "--no-explicit", action="store_true", help="skip the explicit-attention column"
    )
    parser.add_argument("--json", default=None, help="also write the results to this JSON file")
    args = parser.parse_args(argv)

    torch.set_num_threads(args.threads)
    device = resolve_device(args.device)
    batch = make_batch(args.batch, args.src_len, args.tgt_len, args.vocab, device)
    rows, records = [], []
    for layers, d_model, heads in args.sizes:
        config = TransformerConfig(
            src_vocab_size=args.vocab,
            tgt_vocab_size=args.vocab,
            d_model=d_model,
            num_heads=heads,
            num_encoder_layers=layers,
            num_decoder_layers=layers,
            d_ff=4 * d_model,
            dropout=0.1,
            max_len=max(args.src_len, args.tgt_len) + 1,
        )
        torch.manual_seed(0)
        fused = Transformer(replace(config, fused_attention=True))
        reference = TorchTransformer(Transformer(config))  # nn.Transformer's stacks inside
        fused.to(device)
        reference.to(device)
        n_ours, n_ref = count_parameters(fused), count_parameters(reference)
        if n_ours != n_ref:
            raise AssertionError(f"parameter counts differ: ours {n_ours}, torch {n_ref}")
        steps = {"fused": training_step(fused, batch), "torch": training_step(reference, batch)}
        if not args.no_explicit:
            steps["explicit"] = training_step(Transformer(config).to(device), batch)
        seconds = interleaved_median_seconds(steps, device, args.warmup, args.repeats)
        ms = {name: 1e3 * s for name, s in seconds.items()}
        ratio = ms["fused"] / ms["torch"]
        tokens = args.batch * args.tgt_len  # target positions per step (padding included)
        tps = {model: tokens / s for model, s in seconds.items()}
        name = f"N={layers}, D={d_model}, H={heads}"
        rows.append(
            [
                name,
                f"{n_ours / 1e6:.2f}M",
                f"{ms['explicit']:.1f}" if "explicit" in ms else "-",
                f"{ms['fused']:.1f}",
                f"{ms['torch']:.1f}",
                f"{tps['fused']:.0f}",
                f"{ratio:.2f}",
            ]
        )
        records.append(
            {
                "layers": layers,
                "d_model": d_model,
                "heads": heads,
                "d_ff": 4 * d_model,
                "parameters": n_ours,
                "ms_explicit": ms.get("explicit"),
                "ms_fused": ms["fused"],
                "ms_torch": ms["torch"],
                "target_tokens_per_step": tokens,
                "tokens_per_second_fused": tps["fused"],
                "tokens_per_second_torch": tps["torch"],
                "ratio_fused_over_torch": ratio,
            }
        )
    env = environment(device)
    print(
        f"Training step (forward + loss + backward), B={args.batch}, S={args.src_len}, "
        f"T={args.tgt_len}, V={args.vocab}, device={device}, threads={env['torch_threads']}, "
        f"median of {args.repeats} after {args.warmup} warm-up steps, load average {env['load_average']}"
    )
    print()
    print(
        markdown_table(
            [
                "size",
                "parameters",
                "ours, explicit (ms)",
                "ours, fused (ms)",
                "nn.Transformer (ms)",
                "ours, fused (target tokens/s)",
                "fused / nn.Transformer",
            ],
            rows,
        )
    )
    payload = {
        "benchmark": "train_step",
        "command": command_line("train_step", argv),
        "settings": {
            k: getattr(args, k)
            for k in ("batch", "src_len", "tgt_len", "vocab", "warmup", "repeats", "threads")
        },
        "environment": env,
        "results": records,
    }
    write_json(args.json, payload)
    return payload


if __name__ == "__main__":
    main()
