"""Train the book's translator from the command line: German→English on Multi30k by default,
Chinese↔English on Tatoeba's pairs with ``--pair zh-en`` or ``--pair en-zh``.

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
import errno
import json
import signal
import sys
import time
from pathlib import Path
from typing import Any

import torch
from tokenizers import Tokenizer

from ..data import PAIRS, DataNotFoundError, LanguagePair
from ..runtime import Runtime, setup_runtime
from ..tokens import train_tokenizer
from ..training import (
    Callback,
    LabelSmoothingLoss,
    LoopPosition,
    make_optimizer,
    token_budget_batches,
    train_loop,
)
from ..transformer import Transformer, TransformerConfig, count_parameters
from .callbacks import LogTraining, MetricsLog, SaveCheckpoints, TimeBudget, Validate
from .checkpoint import (
    CheckpointError,
    load_training_state,
    load_weights,
    read_meta,
    write_text_atomic,
)
from .dropout import use_packed_dropout
from .options import MAX_LEN, build_parser, explicit_options, jsonable, resolve_args
from .report import RunSummary, report
from .rundir import prepare_run_dir, release_run_dirs
from .schedule import BudgetProgress, make_scheduler
from .vocab import TokenizerPair, encode_translation_pairs, source_tokenizer, target_tokenizer

# --- the run, step by step ------------------------------------------------------------------


def run(args: argparse.Namespace) -> dict[str, Any]:
    rt = setup_runtime(args.device, args.precision)
    try:
        start = time.perf_counter()
        resume_from = prepare_run_dir(args, rt)
        pair = PAIRS[args.pair]
        pairs = {split: pair.load(split, data_dir=args.data_dir) for split in SPLITS}
        pairs["train"] = pairs["train"][: args.train_sentences]
        tokenizer = load_or_train_tokenizer(args, rt, pair, pairs["train"], resume_from)
        train_ids = encode_translation_pairs(tokenizer, pairs["train"], max_len=MAX_LEN)
        val_ids = encode_translation_pairs(tokenizer, pairs["val"], max_len=MAX_LEN)
        progress = None
        if args.lr_schedule == "linear":
            epochs = None if args.epochs is None else epoch_steps(args, train_ids, rt.world_size)
            progress = BudgetProgress(args.max_steps, args.max_minutes, epochs)
        t = Training.build(args, rt, build_config(args, tokenizer), progress)
        if resume_from is not None:
            start -= t.restore(resume_from)  # times count on from the interrupted run's
        if progress is not None:
            progress.elapsed_s = time.perf_counter() - start
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
            pair,
            max_tokens=max(args.max_tokens, 4000),
            sentences=args.val_bleu_sentences,
        )
        save = SaveCheckpoints(args, rt, t.model, t.model.config, tokenizer, t.state, start)
        callbacks = [
            LogTraining(args.log_every, metrics, start),
            TimeBudget(args.max_minutes, rt, start, progress),
            validate,
            save,
        ]
        announce(rt, t.model, len(train_ids))
        t.loop(train_ids, callbacks)
        save.save_unless_saved(t.position)
        batches = epoch_batches(args, train_ids, t.position.epoch, rt.world_size)
        epochs = t.position.epoch + t.position.batch_in_epoch / max(batches, 1)
        validate.at_end(t.position, epochs)
        results = {}
        if rt.is_main:
            val_bleu = [r["val_bleu"] for r in metrics.read() if r["kind"] == "val"]
            summary = RunSummary(t.position, epochs, val_bleu, validate.loss(), start)
            results = report(args, rt, t.model, tokenizer, pair, pairs["test"], summary)
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
        release_run_dirs()


SPLITS = ("train", "val", "test")


def load_or_train_tokenizer(
    args: argparse.Namespace,
    rt: Runtime,
    pair: LanguagePair,
    train_pairs: list,
    resume_from: Path | None,
) -> Tokenizer | TokenizerPair:
    """The run's tokenizer: the checkpoint's, or trained by process 0 on the training split;
    with a ``--target-vocab-size`` above 0, a ``TokenizerPair`` (a vocabulary for each language)."""
    folder = resume_from if resume_from is not None else args.run_dir
    files = {"source": folder / "tokenizer.json"}  # the shared one with --target-vocab-size 0
    if args.target_vocab_size:
        files["target"] = folder / "target_tokenizer.json"
    if resume_from is None and rt.is_main:
        sides = {"source": [s for s, _ in train_pairs], "target": [t for _, t in train_pairs]}
        for side, path in files.items():
            texts = sides[side] if len(files) == 2 else sides["source"] + sides["target"]
            size = args.target_vocab_size if side == "target" else args.vocab_size
            tokenizer = train_tokenizer(texts, size, normalization=pair.normalization)
            write_text_atomic(path, tokenizer.to_str())
    rt.barrier()
    loaded = {side: Tokenizer.from_file(str(path)) for side, path in files.items()}
    return TokenizerPair(**loaded) if len(loaded) == 2 else loaded["source"]


def build_config(
    args: argparse.Namespace, tokenizer: Tokenizer | TokenizerPair
) -> TransformerConfig:
    return TransformerConfig(
        src_vocab_size=source_tokenizer(tokenizer).get_vocab_size(),
        tgt_vocab_size=target_tokenizer(tokenizer).get_vocab_size(),
        d_model=args.d_model,
        num_heads=args.heads,
        num_encoder_layers=args.layers,
        num_decoder_layers=args.layers,
        d_ff=args.d_ff,
        dropout=args.dropout,
        max_len=MAX_LEN,
        norm_first=args.norm_first,
        share_embeddings=not isinstance(tokenizer, TokenizerPair),  # one joint vocabulary
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
    def build(
        cls,
        args: argparse.Namespace,
        rt: Runtime,
        config: TransformerConfig,
        progress: BudgetProgress | None = None,
    ) -> Training:
        torch.manual_seed(args.seed)
        model = Transformer(config).to(rt.device)
        if args.dropout_masks == "packed":
            use_packed_dropout(model)  # the same dropout, cheaper masks on a CPU
        # PyTorch's fused Adam: one kernel for the whole update, about a third of the for-each
        # update's time for the tiny model on a CPU; the same arithmetic up to rounding.
        fused = rt.device.type in ("cpu", "cuda")
        optimizer = make_optimizer(model, lr=args.lr_factor, fused=fused)
        scheduler = make_scheduler(args.lr_schedule, optimizer, args.d_model, args.warmup, progress)
        scaler = torch.amp.GradScaler("cuda") if rt.amp_dtype == torch.float16 else None
        return cls(args, rt, model, optimizer, scheduler, scaler, LoopPosition())

    def state(self) -> dict[str, Any]:
        """What a checkpoint's ``state.pt`` holds besides the weights."""
        return {
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "scaler": self.scaler.state_dict() if self.scaler is not None else {},
        }

    def restore(self, checkpoint: Path) -> float:
        """Continue from a checkpoint: weights, optimizer, schedule and loop position; return
        the run's elapsed time (s) when the checkpoint was saved."""
        load_weights(self.model, checkpoint / "model.safetensors")
        state = load_training_state(checkpoint)
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        if self.scaler is not None and state.get("scaler"):
            self.scaler.load_state_dict(state["scaler"])
        meta = read_meta(checkpoint)
        fields = [f.name for f in dataclasses.fields(LoopPosition)]
        self.position = LoopPosition(**{name: meta.get(name, 0) for name in fields})
        return float(meta.get("elapsed_s", 0.0))

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


def epoch_steps(args: argparse.Namespace, train_ids: list, world_size: int) -> int:
    """The steps that ``--epochs`` passes take (the linear schedule's step budget)."""
    return sum(epoch_batches(args, train_ids, e, world_size) for e in range(args.epochs))


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
    signal.signal(signal.SIGTERM, _terminate)  # what schedulers send: stop as Ctrl-C does
    # SIGINT (Ctrl-C) is left as Python set it up: KeyboardInterrupt, or ignored when the
    # process inherited it ignored. A shell starts a script's background job (`train ... &`)
    # that way so that Ctrl-C in the terminal does not reach it; whoever started the training
    # so asked for that, and SIGTERM (`kill PID`) still stops it. So an ignore is honoured.
    try:
        resolve_args(args, explicit_options(parser, argv))
        run(args)
    except (DataNotFoundError, CheckpointError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except (OSError, RuntimeError) as err:
        message = explain_system_error(err)
        if message is None:
            raise
        print(f"error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; continue with --resume", file=sys.stderr)
        return 130
    return 0


def _terminate(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def explain_system_error(err: OSError | RuntimeError) -> str | None:
    """A message for the machine's ordinary refusals (full disk, no permission); ``None`` for
    anything else, which is a bug and keeps its traceback."""
    text = str(err)
    if isinstance(err, RuntimeError) and "PytorchStreamWriter failed" not in text:
        return None  # torch.save's way of saying that a write failed
    where = getattr(err, "filename", None) or "a file of the run"
    if getattr(err, "errno", None) == errno.ENOSPC or isinstance(err, RuntimeError):
        return (
            f"could not write {where}: no space left on the device ({text.splitlines()[0]}). "
            "Free some space, then continue with --resume."
        )
    if isinstance(err, PermissionError) or getattr(err, "errno", None) == errno.EROFS:
        return f"cannot write {where} ({err.strerror}); choose a --run-dir you can write to."
    if isinstance(err, NotADirectoryError | FileExistsError):
        return f"{where} is in the way ({err.strerror}); choose another --run-dir."
    return None


if __name__ == "__main__":
    sys.exit(main())
