"""Train the book's German→English Transformer on Multi30k from the command line.

The pieces are the book's: the tokenizer, batching, loss, schedule and the one training loop of
chapter 14 (``training.train_loop``), the model of chapter 13, the decoders and BLEU of chapter 15.
This module adds what a long run needs, as the loop's callbacks: metrics, checkpoints, a time
budget, validation after each pass. The files it writes are listed in ``translator/__init__.py``.

Usage::

    python -m transformer_tutorial.train --preset tiny --run-dir runs/tiny          # CPU, minutes
    python -m transformer_tutorial.train --preset base --run-dir runs/base          # one GPU
    torchrun --nproc_per_node=4 -m transformer_tutorial.train --preset base --run-dir runs/base4
    python -m transformer_tutorial.train --run-dir runs/tiny --resume               # continue

Several processes (``torchrun``): every process builds the same token-budget batches;
``--max-tokens`` is the budget of the *global* batch, process ``r`` of ``W`` trains on its
sentences ``r, r + W, ...``, and DistributedDataParallel averages the gradients, so one step
equals one single-process step on the global batch (up to rounding).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

import torch
from tokenizers import Tokenizer

from ..data import DataNotFoundError, load_multi30k
from ..training import (
    Callback,
    LabelSmoothingLoss,
    LoopPosition,
    encode_pairs,
    make_optimizer,
    noam_scheduler,
    token_budget_batches,
    train_loop,
    train_tokenizer,
)
from ..transformer import Transformer, TransformerConfig, count_parameters
from .callbacks import LogTraining, MetricsLog, SaveCheckpoints, TimeBudget, Validate
from .checkpoint import (
    CheckpointError,
    latest_checkpoint,
    load_training_state,
    load_weights,
    read_meta,
    write_text_atomic,
)
from .report import RunSummary, report
from .runenv import Runtime, setup_runtime

# Presets: a model and a schedule. Every value can be overridden by its own flag.
PRESETS: dict[str, dict[str, Any]] = {
    # A CPU run of minutes: chapter 14's model and schedule, for 3 epochs.
    "tiny": {"vocab_size": 4000, "d_model": 128, "layers": 2, "heads": 4, "d_ff": 512,
             "dropout": 0.1, "norm_first": True, "max_tokens": 2000, "warmup": 100,
             "lr_factor": 0.5, "label_smoothing": 0.1, "epochs": 3},
    # The paper's base model (N=6, d_model=512, d_ff=2048, h=8, post-norm) on one or more GPUs.
    # Multi30k is small (about 60 steps per epoch at this budget), so it gets stronger dropout
    # and a shorter warm-up than the paper's WMT settings; peak rate 7.8e-4 at step 800.
    "base": {"vocab_size": 8000, "d_model": 512, "layers": 6, "heads": 8, "d_ff": 2048,
             "dropout": 0.3, "norm_first": False, "max_tokens": 8000, "warmup": 800,
             "lr_factor": 0.5, "label_smoothing": 0.1, "epochs": 40},
}  # fmt: skip
MAX_LEN = 256  # position-table rows; longer sentences are cut (Multi30k's longest is far shorter)
PROG = "python -m transformer_tutorial.train"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Train a German→English Transformer on Multi30k (the book's translator).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    add = p.add_argument
    add("--run-dir", type=Path, default=Path("runs/latest"), help="where everything goes")
    add(
        "--data-dir",
        type=Path,
        help="the Multi30k files (default: $TRANSFORMER_TUTORIAL_DATA or the cache)",
    )
    add("--preset", choices=sorted(PRESETS), help="model and schedule (default: tiny)")
    add("--resume", action="store_true", help="continue from the run's latest checkpoint")
    add("--device", choices=["auto", "cuda", "mps", "cpu"], default="auto")
    add(
        "--precision",
        choices=["auto", "fp32", "bf16", "fp16"],
        default="auto",
        help="autocast dtype; auto = bf16 on CUDA GPUs that support it, fp16 on older ones, "
        "fp32 elsewhere",
    )
    add("--compile", action="store_true", help="torch.compile the model for training")
    add(
        "--no-fused-attention",
        action="store_true",
        help="use the explicit attention path instead of scaled_dot_product_attention",
    )
    add("--seed", type=int, help="(default: 0)")
    budget = p.add_argument_group("time budget (the first limit reached stops training)")
    for name, kind in (("epochs", int), ("max-steps", int), ("max-minutes", float)):
        budget.add_argument(f"--{name}", type=kind)
    model = p.add_argument_group("model and optimisation (default: the preset's)")
    for name, kind in (
        ("vocab-size", int),
        ("d-model", int),
        ("layers", int),
        ("heads", int),
        ("d-ff", int),
        ("dropout", float),
        ("max-tokens", int),
        ("warmup", int),
        ("lr-factor", float),
        ("label-smoothing", float),
    ):
        model.add_argument(f"--{name}", type=kind)
    model.add_argument(
        "--norm-first",
        action=argparse.BooleanOptionalAction,
        help="pre-norm blocks (default: the preset's)",
    )
    model.add_argument("--clip-norm", type=float, default=1.0)
    ev = p.add_argument_group("evaluation and output")
    ev.add_argument("--beam-size", type=int, default=4, help="beam size for the test BLEU")
    ev.add_argument("--length-penalty", type=float, default=0.6)
    ev.add_argument(
        "--val-bleu-sentences",
        type=int,
        help="translate only the first N validation sentences for the epoch BLEU",
    )
    ev.add_argument("--checkpoint-every", type=int, default=500, help="steps between checkpoints")
    ev.add_argument("--keep-checkpoints", type=int, default=2)
    ev.add_argument("--log-every", type=int, default=10)
    ev.add_argument("--samples", type=int, default=10)
    ev.add_argument("--attention-samples", type=int, default=3)
    ev.add_argument("--no-progress", action="store_true", help="no progress bars")
    ev.add_argument(
        "--train-sentences",
        type=int,
        help="use only the first N training pairs (quick experiments, tests)",
    )
    return p


# With --resume every option comes from the run's args.json unless it is given again; these
# few describe the machine rather than the run, and are never taken from the file.
NOT_RESTORED = ("run_dir", "resume", "data_dir", "device", "no_progress")


def explicit_options(parser: argparse.ArgumentParser, argv: list[str] | None) -> set[str]:
    """The destinations of the options given on the command line (not left at their default)."""
    probe = argparse.ArgumentParser(add_help=False)
    for action in parser._actions:  # the same options, with no defaults at all
        if action.option_strings and action.dest != "help":
            kwargs = {"dest": action.dest, "default": argparse.SUPPRESS}
            if isinstance(action, argparse.BooleanOptionalAction | argparse._StoreTrueAction):
                probe.add_argument(*action.option_strings, action=type(action), **kwargs)
            else:
                probe.add_argument(*action.option_strings, nargs=action.nargs, **kwargs)
    known, _ = probe.parse_known_args(argv)
    return set(vars(known))


def resolve_args(args: argparse.Namespace, explicit: set[str] | None = None) -> argparse.Namespace:
    """Fill unset options: on ``--resume`` from the run's ``args.json`` (except the options given
    again on the command line), then from the preset."""
    saved_path = Path(args.run_dir) / "args.json"
    if args.resume and saved_path.is_file():
        saved = json.loads(saved_path.read_text(encoding="utf-8"))
        for key, value in saved.items():
            if key not in NOT_RESTORED and key not in (explicit or set()) and hasattr(args, key):
                setattr(args, key, value)
    args.preset = args.preset or "tiny"
    args.seed = 0 if args.seed is None else args.seed
    for key, value in PRESETS[args.preset].items():
        if key != "epochs" and getattr(args, key, None) is None:
            setattr(args, key, value)
    if args.max_steps is None and args.max_minutes is None and args.epochs is None:
        args.epochs = PRESETS[args.preset]["epochs"]  # no budget given: the preset's epochs
    for name in ("max_steps", "epochs", "checkpoint_every", "log_every", "beam_size", "max_tokens"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {value}.")
    return args


def jsonable(args: argparse.Namespace) -> dict[str, Any]:
    return {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}


# --- the run, step by step ------------------------------------------------------------------


def run(args: argparse.Namespace) -> dict[str, Any]:
    rt = setup_runtime(args.device, args.precision)
    try:
        start = time.perf_counter()
        resume_from = prepare_run_dir(args, rt)
        pairs = {split: load_multi30k(split, data_dir=args.data_dir) for split in SPLITS}
        pairs["train"] = pairs["train"][: args.train_sentences]
        tokenizer = load_or_train_tokenizer(args, rt, pairs["train"], resume_from)
        train_ids = encode_pairs(tokenizer, pairs["train"], max_len=MAX_LEN)
        val_ids = encode_pairs(tokenizer, pairs["val"], max_len=MAX_LEN)
        t = Training.build(args, rt, build_config(args, tokenizer.get_vocab_size()))
        if resume_from is not None:
            t.restore(resume_from)
        if rt.is_main:
            write_text_atomic(args.run_dir / "args.json", json.dumps(jsonable(args), indent=2))
        metrics = MetricsLog(args.run_dir / "metrics.jsonl", rt.is_main, resume_from)
        validate = Validate(
            rt,
            t.model,
            tokenizer,
            val_ids,
            pairs["val"],
            metrics,
            start,
            max(args.max_tokens, 4000),
            args.val_bleu_sentences,
        )
        save = SaveCheckpoints(args, rt, t.model, t.model.config, tokenizer, t.state)
        callbacks = [
            LogTraining(args.log_every, metrics, start),
            TimeBudget(args.max_minutes, rt, start),
            validate,
            save,
        ]
        announce(rt, t.model, len(train_ids))
        t.loop(train_ids, callbacks)
        save.save_unless_saved(t.position)
        results = {}
        if rt.is_main:
            batches = epoch_batches(args, train_ids, t.position.epoch, rt.world_size)
            val_bleu = [r["val_bleu"] for r in metrics.read() if r["kind"] == "val"]
            epochs = t.position.epoch + t.position.batch_in_epoch / max(batches, 1)
            summary = RunSummary(t.position, epochs, val_bleu, validate.loss(), start)
            results = report(args, rt, t.model, tokenizer, pairs["test"], summary)
            metrics.write(
                {
                    "kind": "test",
                    "step": t.position.step,
                    "test_bleu": results["test_bleu"],
                    "beam_size": args.beam_size,
                    "elapsed_s": results["wall_time_s"],
                }
            )
        rt.barrier()
        return results
    finally:
        rt.close()


SPLITS = ("train", "val", "test")


def prepare_run_dir(args: argparse.Namespace, rt: Runtime) -> Path | None:
    """Create the run directory; return the checkpoint to resume from (``None``: a new run)."""
    ckpt_dir = args.run_dir / "checkpoints"
    if rt.is_main:
        args.run_dir.mkdir(parents=True, exist_ok=True)
    rt.barrier()
    latest = latest_checkpoint(ckpt_dir) if ckpt_dir.is_dir() else None
    if args.resume and latest is None:
        raise CheckpointError(
            f"--resume: {ckpt_dir} holds no complete checkpoint; start without --resume."
        )
    if not args.resume and latest is not None:
        raise ValueError(
            f"{args.run_dir} already holds a run; pass --resume to continue it or choose "
            "another --run-dir."
        )
    return latest


def load_or_train_tokenizer(
    args: argparse.Namespace, rt: Runtime, train_pairs: list, resume_from: Path | None
) -> Tokenizer:
    """The run's tokenizer: the checkpoint's, or trained by process 0 on the training split."""
    if resume_from is not None:
        return Tokenizer.from_file(str(resume_from / "tokenizer.json"))
    path = args.run_dir / "tokenizer.json"
    if rt.is_main:
        tokenizer = train_tokenizer([s for pair in train_pairs for s in pair], args.vocab_size)
        write_text_atomic(path, tokenizer.to_str())
    rt.barrier()
    return Tokenizer.from_file(str(path))


def build_config(args: argparse.Namespace, vocab_size: int) -> TransformerConfig:
    return TransformerConfig(
        src_vocab_size=vocab_size,
        tgt_vocab_size=vocab_size,
        d_model=args.d_model,
        num_heads=args.heads,
        num_encoder_layers=args.layers,
        num_decoder_layers=args.layers,
        d_ff=args.d_ff,
        dropout=args.dropout,
        max_len=MAX_LEN,
        norm_first=args.norm_first,
        share_embeddings=True,  # one joint vocabulary (chapter 14)
        tie_output=True,
        fused_attention=not args.no_fused_attention,
    )


@dataclasses.dataclass
class Training:
    """The model and everything its training state consists of."""

    args: argparse.Namespace
    rt: Runtime
    model: Transformer
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LRScheduler
    scaler: torch.amp.GradScaler | None
    position: LoopPosition

    @classmethod
    def build(cls, args: argparse.Namespace, rt: Runtime, config: TransformerConfig) -> Training:
        torch.manual_seed(args.seed)
        model = Transformer(config).to(rt.device)
        optimizer = make_optimizer(model, lr=args.lr_factor)
        scheduler = noam_scheduler(optimizer, d_model=args.d_model, warmup=args.warmup)
        scaler = torch.amp.GradScaler("cuda") if rt.amp_dtype == torch.float16 else None
        return cls(args, rt, model, optimizer, scheduler, scaler, LoopPosition())

    def state(self) -> dict[str, Any]:
        """What a checkpoint's ``state.pt`` holds besides the weights."""
        return {
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "scaler": self.scaler.state_dict() if self.scaler is not None else {},
        }

    def restore(self, checkpoint: Path) -> None:
        """Continue from a checkpoint: weights, optimizer, schedule and loop position."""
        load_weights(self.model, checkpoint / "model.safetensors")
        state = load_training_state(checkpoint)
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        if self.scaler is not None and state.get("scaler"):
            self.scaler.load_state_dict(state["scaler"])
        meta = read_meta(checkpoint)
        fields = [f.name for f in dataclasses.fields(LoopPosition)]
        self.position = LoopPosition(**{name: meta.get(name, 0) for name in fields})

    def loop(self, train_ids: list, callbacks: list[Callback]) -> None:
        """Chapter 14's loop, on the model as it is trained: compiled if asked, under DDP with
        several processes."""
        args, rt = self.args, self.rt
        model = torch.compile(self.model) if args.compile else self.model
        if rt.distributed:
            device_ids = [rt.device.index] if rt.device.type == "cuda" else None
            model = torch.nn.parallel.DistributedDataParallel(model, device_ids=device_ids)
        train_loop(
            model,
            train_ids,
            max_tokens=args.max_tokens,
            criterion=LabelSmoothingLoss(args.label_smoothing),
            optimizer=self.optimizer,
            scheduler=self.scheduler,
            clip_norm=args.clip_norm,
            max_steps=args.max_steps,
            max_epochs=args.epochs,
            seed=args.seed,
            device=rt.device,
            progress=rt.is_main and not args.no_progress,
            callbacks=callbacks,
            position=self.position,
            rank=rt.rank,
            world_size=rt.world_size,
            amp_dtype=rt.amp_dtype,
            scaler=self.scaler,
        )


def epoch_batches(args: argparse.Namespace, train_ids: list, epoch: int, world_size: int) -> int:
    """How many batches the loop makes of pass ``epoch`` (to report fractional epochs)."""
    batches = token_budget_batches(train_ids, args.max_tokens, shuffle=True, seed=args.seed + epoch)
    return sum(len(b) >= world_size for b in batches)


def announce(rt: Runtime, model: Transformer, n_pairs: int) -> None:
    if rt.is_main:
        print(
            f"{count_parameters(model):,} parameters, {n_pairs} training pairs, device "
            f"{rt.device}, {rt.world_size} process(es), precision {rt.amp_dtype or 'fp32'}",
            file=sys.stderr,
        )


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        resolve_args(args, explicit_options(parser, argv))
        run(args)
    except (DataNotFoundError, CheckpointError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; continue with --resume", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
