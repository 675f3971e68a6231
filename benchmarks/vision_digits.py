"""Chapter 19's recorded comparison: a small ViT against a small CNN on the 8x8 digits.

Trains, for each seed, the ViT with 2-D sinusoidal positions, with learned positions and with no
positions, and the CNN of about the same parameter count, all with the chapter's training loop
(`transformer_tutorial.vision.train_classifier`) and the same number of epochs, on the chapter's
fixed train/test split; records each model's test accuracy per seed. The seed changes the
initial weights and the order of the batches, not the split.

    python benchmarks/vision_digits.py --seeds 10 --epochs 20 --json results/vision/digits.json
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import command_line, environment, markdown_table, write_json  # noqa: E402

from transformer_tutorial.transformer import count_parameters  # noqa: E402
from transformer_tutorial.vision import (  # noqa: E402
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


def main(argv: Sequence[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10, help="seeds 0 .. N-1 per model")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1, help="PyTorch CPU threads")
    parser.add_argument("--json", default=None, help="write the results here")
    args = parser.parse_args(argv)
    if args.seeds < 1 or args.epochs < 1:
        parser.error("--seeds and --epochs must be at least 1")
    torch.set_num_threads(args.threads)
    train_x, train_y, test_x, test_y = load_digits_split()
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
