"""Chapter 19's recorded comparisons on the 8x8 digits: a small ViT against a small CNN, and the
SAGAN block against the same CNN without it.

``--experiment vit`` (the default) trains, for each seed, the ViT with 2-D sinusoidal positions, with learned positions and with no
positions, and the CNN of about the same parameter count, all with the chapter's training loop
(`transformer_tutorial.vision.train_classifier`) and the same number of epochs, on the chapter's
fixed train/test split; records each model's test accuracy per seed. The seed changes the
initial weights and the order of the batches, not the split.

    python benchmarks/vision_digits.py --seeds 5 --epochs 20 --json results/vision/digits.json

``--experiment sagan`` trains, for each seed, the chapter's ``AttentionCNN`` (conv, SAGAN block,
conv) twice from the same initial weights: once as it is, once with the block's ``gamma``
frozen at 0, which makes the block the identity (the plain CNN; its other weights then get no
gradient). It records each run's test accuracy and test cross-entropy, the learned ``gamma``,
and two statistics of the attention maps over all test digits and query pixels: the weight
outside the query's 3x3 neighbourhood, and the row entropy as a fraction of log(64), each with
the value uniform attention would give.

    python benchmarks/vision_digits.py --experiment sagan --seeds 10 --epochs 10 \
        --json results/vision/sagan_ablation.json
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import Tensor, nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import command_line, environment, markdown_table, write_json  # noqa: E402

from transformer_tutorial.transformer import count_parameters  # noqa: E402
from transformer_tutorial.vision import (  # noqa: E402
    AttentionCNN,
    SmallCNN,
    VisionTransformer,
    ViTConfig,
    accuracy,
    load_digits_split,
    train_classifier,
)

MODELS: dict[str, Callable[[], nn.Module]] = {
    "ViT, 2-D sinusoidal": lambda: VisionTransformer(ViTConfig(positions="sinusoidal")),
    "ViT, learned": lambda: VisionTransformer(ViTConfig(positions="learned")),
    "ViT, no positions": lambda: VisionTransformer(ViTConfig(positions="none")),
    "CNN": lambda: SmallCNN(),
}


def attention_statistics(weights: Tensor, side: int = 8) -> dict[str, float]:
    """Of attention maps ``(B, side*side, side*side)``: the mean weight outside each query's
    3x3 neighbourhood and the mean row entropy over log(side*side); each also for uniform
    attention, the baseline the measured values must be read against."""
    n = side * side
    rows, cols = torch.arange(n) // side, torch.arange(n) % side
    near = ((rows[:, None] - rows[None]).abs() <= 1) & ((cols[:, None] - cols[None]).abs() <= 1)
    outside = (weights * ~near).sum(-1).mean().item()
    entropy = -(weights * weights.clamp_min(1e-12).log()).sum(-1).mean().item()
    return {
        "outside_3x3": round(outside, 6),
        "outside_3x3_uniform": round(1 - near.float().sum(-1).mean().item() / n, 6),
        "entropy_fraction": round(entropy / math.log(n), 6),
        "entropy_fraction_uniform": 1.0,
    }


def sagan_ablation(args, data) -> dict:
    """The SAGAN block against gamma frozen at 0, paired by seed (same initial weights)."""
    train_x, train_y, test_x, test_y = data
    arms = {"with the block": False, "gamma frozen at 0": True}
    runs: dict[str, list[dict]] = {arm: [] for arm in arms}
    for seed in range(args.seeds):
        for arm, frozen in arms.items():
            torch.manual_seed(seed)
            model = AttentionCNN()
            if frozen:
                model.attn.gamma.requires_grad_(False)  # stays 0: the block is the identity
            train_classifier(model, train_x, train_y, epochs=args.epochs, seed=seed)
            with torch.no_grad():
                logits, weights = model.forward_with_attention(test_x)
            run = {
                "accuracy": round((logits.argmax(-1) == test_y).float().mean().item(), 6),
                "test_loss": round(F.cross_entropy(logits, test_y).item(), 6),
                "gamma": round(model.attn.gamma.item(), 6),
            }
            if not frozen:
                run.update(attention_statistics(weights))
            runs[arm].append(run)
            print(f"seed {seed}  {arm:<18} " + "  ".join(f"{k} {v:.4f}" for k, v in run.items()),
                  flush=True)  # fmt: skip
    return {"experiment": "sagan", "runs": runs}


def main(argv: Sequence[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiment", choices=("vit", "sagan"), default="vit")
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0 .. N-1 per model")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1, help="PyTorch CPU threads")
    parser.add_argument("--json", default=None, help="write the results here")
    args = parser.parse_args(argv)
    if args.seeds < 1 or args.epochs < 1:
        parser.error("--seeds and --epochs must be at least 1")
    torch.set_num_threads(args.threads)
    train_x, train_y, test_x, test_y = load_digits_split()
    if args.experiment == "sagan":
        start = time.perf_counter()
        payload = {
            "command": command_line("vision_digits", argv),
            "epochs": args.epochs,
            "seeds": list(range(args.seeds)),
            "split": {"train": len(train_x), "test": len(test_x), "seed": 0},
            **sagan_ablation(args, (train_x, train_y, test_x, test_y)),
        }
        payload["wall_seconds"] = round(time.perf_counter() - start, 1)
        payload["environment"] = environment(torch.device("cpu"))
        write_json(args.json, payload)
        return payload
    start = time.perf_counter()
    results: dict[str, list[float]] = {name: [] for name in MODELS}
    parameters = {}
    for seed in range(args.seeds):
        for name, make in MODELS.items():
            torch.manual_seed(seed)
            model = make()
            parameters[name] = count_parameters(model)
            train_classifier(model, train_x, train_y, epochs=args.epochs, seed=seed)
            results[name].append(round(accuracy(model, test_x, test_y), 6))
            print(f"seed {seed}  {name:<20} {results[name][-1]:.4f}", flush=True)
    wall = time.perf_counter() - start
    rows = [
        [
            name,
            f"{parameters[name]:,}",
            f"{statistics.mean(accs):.4f}",
            f"{statistics.stdev(accs) if len(accs) > 1 else 0.0:.4f}",
            f"{min(accs):.4f}",
            f"{max(accs):.4f}",
        ]
        for name, accs in results.items()
    ]
    print(markdown_table(["model", "parameters", "mean", "std", "min", "max"], rows))
    payload = {
        "command": command_line("vision_digits", argv),
        "epochs": args.epochs,
        "seeds": list(range(args.seeds)),
        "split": {"train": len(train_x), "test": len(test_x), "seed": 0},
        "parameters": parameters,
        "accuracy": results,
        "wall_seconds": round(wall, 1),
        "environment": environment(torch.device("cpu")),
    }
    write_json(args.json, payload)
    return payload


if __name__ == "__main__":
    main()
