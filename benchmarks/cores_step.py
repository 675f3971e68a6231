"""Where a `tiny` training step's time goes when two CPU cores share the work: as two threads
of one process, or as two processes (data parallelism, as ``torchrun --nproc_per_node=2``).

    python benchmarks/cores_step.py                    # markdown table
    python benchmarks/cores_step.py --json results/translator/benchmarks/cores_step_cpu.json

A step is what ``python -m transformer_tutorial.train`` does per batch (``training.train_step``)
for the ``tiny`` preset's model (chapter 16's two vocabularies, 4,000 and 2,500), on a fixed
batch shaped like one of its 1,000-token batches: 64 sentences of 16 tokens. Each arrangement
is timed as the median step of ``--repeats``:

- one process, 2 threads, the whole batch: what ``--preset tiny`` does;
- one process, 1 thread, the whole batch, then half of it (the other core idle);
- two processes of 1 thread, half the batch each, at the same time but not talking to each
  other (``DistributedDataParallel.no_sync``): what the two cores cost each other;
- the same two processes as ``torchrun`` runs them: each step also averages the gradients
  (gloo's all-reduce), and a process waits there for the slower one;
- that all-reduce alone, on a buffer the size of the model's gradients.

Two probes tell what the cores share: a kernel bound by memory (adding two vectors of 16 M
floats, 192 MB moved) and one bound by arithmetic (a 256 x 256 matrix product, which fits in a
core's own cache), each timed on one core alone and on both cores at once.

The single-process rows take turns within each round; the two-process rows take turns with
each other, in a second pair of processes started by this script.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Callable
from dataclasses import replace

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from common import (
    command_line,
    environment,
    interleaved_median_seconds,
    markdown_table,
    write_json,
)
from cpu_step import TINY
from train_step import make_batch

from transformer_tutorial.training import Batch, LabelSmoothingLoss, make_optimizer, train_step
from transformer_tutorial.transformer import Transformer
from transformer_tutorial.translator.dropout import use_packed_dropout

CPU = torch.device("cpu")
# The preset's model: two vocabularies, the output layer tied to the target embedding.
CONFIG = replace(TINY, tgt_vocab_size=2500, share_embeddings=False, tie_output=True)


def step_of(model: torch.nn.Module, batch: Batch) -> Callable[[], None]:
    """A closure doing one training step of ``model`` (the preset's dropout, fused Adam)."""
    optimizer = make_optimizer(model, lr=1e-3, fused=True)
    criterion = LabelSmoothingLoss(0.1)
    return lambda: train_step(model, batch, criterion, optimizer, clip_norm=1.0)


def fresh_model() -> Transformer:
    """The preset's model, seeded, with its packed dropout masks."""
    torch.manual_seed(0)
    model = Transformer(CONFIG)
    use_packed_dropout(model)
    return model


def batch_rows(rows: slice) -> Batch:
    src, tgt_in, tgt_out = make_batch(64, 16, 16, CONFIG.tgt_vocab_size, CPU)
    return Batch(src[rows].contiguous(), tgt_in[rows].contiguous(), tgt_out[rows].contiguous())


def probes(floats: int = 16_000_000) -> dict[str, Callable[[], object]]:
    """The memory-bound and the arithmetic-bound kernel (see the module's docstring)."""
    a, b, c = torch.randn(floats), torch.randn(floats), torch.empty(floats)
    x, y = torch.randn(256, 256), torch.randn(256, 256)

    def matmuls() -> None:
        for _ in range(50):
            x @ y

    memory = f"memory: add two {4 * floats / 1e6:g} MB vectors"
    return {memory: lambda: torch.add(a, b, out=c), "arithmetic: 50 products of 256 x 256 "
            "matrices": matmuls}  # fmt: skip


def one_process(warmup: int, repeats: int, floats: int) -> dict[str, float]:
    """The single-process rows, ``torch.set_num_threads`` switched before each step."""
    whole, half = batch_rows(slice(None)), batch_rows(slice(0, 32))
    steps = {
        "1 process, 2 threads, whole batch": (2, step_of(fresh_model(), whole)),
        "1 process, 1 thread, whole batch": (1, step_of(fresh_model(), whole)),
        "1 process, 1 thread, half batch": (1, step_of(fresh_model(), half)),
    }

    def with_threads(n: int, step: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            torch.set_num_threads(n)
            step()

        return run

    fns = {k: with_threads(*v) for k, v in steps.items()}
    fns |= {f"{name}, one core alone": with_threads(1, fn) for name, fn in probes(floats).items()}
    return interleaved_median_seconds(fns, CPU, warmup, repeats)


def two_processes(rank: int, store: str, warmup: int, repeats: int, floats: int, out: dict) -> None:
    """One of the two processes: its half of the batch, one thread."""
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=2)
    model = torch.nn.parallel.DistributedDataParallel(fresh_model())
    step = step_of(model, batch_rows(slice(32 * rank, 32 * (rank + 1))))
    grads = torch.zeros(sum(p.numel() for p in model.parameters()))

    def alone() -> None:
        with model.no_sync():
            step()

    def all_reduce() -> None:
        dist.all_reduce(grads)

    fns = {
        "2 processes, 1 thread each, not talking": alone,
        "2 processes, 1 thread each, as torchrun runs them": step,
        "the gradients' all-reduce alone": all_reduce,
    }
    fns |= {f"{name}, both cores at once": fn for name, fn in probes(floats).items()}

    out[rank] = interleaved_median_seconds(fns, CPU, warmup, repeats, before=dist.barrier)
    dist.destroy_process_group()


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=60)
    parser.add_argument("--probe-floats", type=int, default=16_000_000, help="memory probe size")
    parser.add_argument("--json", default=None, help="also write the results to this JSON file")
    args = parser.parse_args(argv)

    seconds = one_process(args.warmup, args.repeats, args.probe_floats)
    with tempfile.TemporaryDirectory() as tmp, mp.Manager() as manager:
        out = manager.dict()
        store = os.path.join(tmp, "store")
        mp.spawn(
            two_processes, args=(store, args.warmup, args.repeats, args.probe_floats, out), nprocs=2
        )
        per_rank = [out[0], out[1]]
    for name in per_rank[0]:
        seconds[name] = max(r[name] for r in per_rank)  # a step ends when both have ended
    torch.set_num_threads(2)
    env = environment(CPU)
    env["torch_threads"] = "as in each row"
    base = seconds["1 process, 2 threads, whole batch"]
    rows = [
        [name, f"{1e3 * s:.1f}", f"{s / base:.2f}"]
        for name, s in seconds.items()
        if ":" not in name
    ]
    alone = ", one core alone"
    probe_rows = [
        [name[: -len(alone)], f"{1e3 * s:.1f}",
         f"{1e3 * seconds[name.replace(alone, ', both cores at once')]:.1f}"]
        for name, s in seconds.items() if name.endswith(alone)
    ]  # fmt: skip
    print(
        f"One tiny training step on 64 sentences of 16 tokens (two processes: 32 each), median "
        f"of {args.repeats} after {args.warmup} warm-up steps, load average {env['load_average']}"
    )
    print()
    print(markdown_table(["arrangement", "ms", "times the 2-thread step"], rows))
    print()
    print(markdown_table(["probe", "ms, one core alone", "ms, both cores at once"], probe_rows))
    payload = {
        "benchmark": "cores_step",
        "command": command_line("cores_step", argv),
        "settings": {k: getattr(args, k) for k in ("warmup", "repeats", "probe_floats")},
        "environment": env,
        "gradient_floats": sum(p.numel() for p in fresh_model().parameters()),
        "ms": {name: 1e3 * s for name, s in seconds.items()},
    }
    write_json(args.json, payload)
    return payload


if __name__ == "__main__":
    main()
