"""What the training command adds to chapter 14's loop: the callbacks of a long run.

``LogTraining`` writes ``train`` records, ``TimeBudget`` stops at ``--max-minutes``,
``Validate`` measures the validation loss and BLEU after every pass, ``SaveCheckpoints`` writes
a checkpoint every ``--checkpoint-every`` steps and after every pass. Under ``torchrun`` only
process 0 writes files; every process takes part in the decisions (stop, save) together.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer

from ..data import LanguagePair
from ..decoding import translate
from ..runtime import Runtime
from ..training import Callback, LabelSmoothingLoss, LoopPosition, evaluate_loss, make_batches
from ..transformer import Transformer, TransformerConfig
from .checkpoint import read_meta, save_checkpoint, write_text_atomic
from .report import score
from .schedule import BudgetProgress
from .vocab import TokenizerPair


class MetricsLog:
    """Appends JSON lines to ``metrics.jsonl`` (process 0 only), flushing each line.

    A resumed run first drops what the interrupted one logged after its checkpoint (those steps
    are done again) and any ``test`` record (the evaluation is done again), so that the log reads
    like one uninterrupted run. A new run starts an empty log.
    """

    def __init__(self, path: Path, enabled: bool, resume_from: Path | None) -> None:
        self.path, self.enabled = path, enabled
        if enabled and path.exists():
            kept = []
            if resume_from is not None:
                step = read_meta(resume_from)["step"]
                kept = [r for r in self.read() if r["kind"] != "test" and r["step"] <= step]
            write_text_atomic(path, "".join(json.dumps(r) + "\n" for r in kept))

    def read(self) -> list[dict[str, Any]]:
        """The records; a last line cut short (the process died while writing it) is dropped."""
        lines = self.path.read_text(encoding="utf-8").splitlines() if self.path.exists() else []
        lines = [line for line in lines if line.strip()]
        records = []
        for number, line in enumerate(lines, start=1):
            try:
                records.append(json.loads(line))
            except ValueError:
                if number < len(lines):
                    raise ValueError(
                        f"{self.path}, line {number}, is not a JSON record; delete that line "
                        "and continue with --resume."
                    ) from None
        return records

    def write(self, record: dict[str, Any]) -> None:
        if self.enabled:
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(json.dumps(record) + "\n")


class LogTraining(Callback):
    """A ``train`` record every ``--log-every`` steps and after the first: loss, learning rate,
    gradient norm, and target tokens per second (all processes) since the previous record."""

    def __init__(self, every: int, metrics: MetricsLog, start: float) -> None:
        self.every, self.metrics, self.start = every, metrics, start
        self.last_time, self.last_tokens = time.perf_counter(), None

    def on_step(self, record: dict, position: LoopPosition) -> None:
        if self.last_tokens is None:  # the first step of this process's run
            self.last_tokens = position.train_tokens - record["tokens"]
        if position.step % self.every and position.step != 1:
            return
        now = time.perf_counter()
        speed = (position.train_tokens - self.last_tokens) / max(now - self.last_time, 1e-9)
        keys = ("step", "epoch", "loss", "lr", "grad_norm", "tokens")
        entry = {"kind": "train", **{k: record[k] for k in keys}, "tokens_per_s": speed}
        self.metrics.write(entry | {"elapsed_s": now - self.start})
        self.last_time, self.last_tokens = now, position.train_tokens


class TimeBudget(Callback):
    """Stops every process once ``minutes`` have passed since ``start`` (``None``: never), and
    tells the schedule's ``progress`` the time spent, the same number on every process (the
    slowest one's), so that all processes take the same learning rate."""

    def __init__(
        self,
        minutes: float | None,
        rt: Runtime,
        start: float,
        progress: BudgetProgress | None = None,
    ) -> None:
        self.minutes, self.rt, self.start, self.progress = minutes, rt, start, progress

    def on_step(self, record: dict, position: LoopPosition) -> bool:
        elapsed = self.rt.max_over_ranks(time.perf_counter() - self.start)  # seconds
        if self.progress is not None:
            self.progress.elapsed_s = elapsed
        return self.minutes is not None and elapsed >= 60 * self.minutes


class Validate(Callback):
    """After every pass: the validation loss (cross-entropy per target token) and the BLEU of
    greedy translations of the first ``sentences`` validation pairs, as a ``val`` record."""

    def __init__(
        self,
        rt: Runtime,
        model: Transformer,
        tokenizer: Tokenizer | TokenizerPair,
        val_ids: list,
        val_pairs: list[tuple[str, str]],
        metrics: MetricsLog,
        start: float,
        pair: LanguagePair,
        max_tokens: int = 4000,
        sentences: int | None = None,
    ) -> None:
        self.rt, self.model, self.tokenizer, self.pair = rt, model, tokenizer, pair
        self.metrics, self.start = metrics, start
        self.batches = make_batches(val_ids, max_tokens=max_tokens, shuffle=False)
        self.pairs = val_pairs[:sentences]

    def loss(self) -> float:
        batches = [b.to(self.rt.device) for b in self.batches]
        return evaluate_loss(self.model, batches, LabelSmoothingLoss(0.0))

    def on_epoch_end(self, position: LoopPosition) -> None:
        self.measure(position.step, position.epoch)  # the passes completed: 1 after the first

    def at_end(self, position: LoopPosition, epochs: float) -> None:
        """Measure the final model too, unless the last pass ended at this very step (a run
        stopped by its time or step budget ends within a pass; ``epochs`` is then fractional)."""
        done = [r["step"] for r in self.metrics.read() if r["kind"] == "val"]
        if not done or done[-1] != position.step:
            self.measure(position.step, round(epochs, 2))
        self.rt.barrier()

    def measure(self, step: int, epoch: float) -> None:
        if self.rt.is_main:
            elapsed = time.perf_counter() - self.start  # when training stopped for this
            record = {"kind": "val", "step": step, "epoch": epoch, "val_loss": self.loss()}
            with self.rt.autocast():
                hyps = translate(self.model, self.tokenizer, [s for s, _ in self.pairs])
            record["val_bleu"] = score(self.pair, hyps, [t for _, t in self.pairs])[0].score
            self.metrics.write(record | {"elapsed_s": elapsed})
        self.rt.barrier()


class SaveCheckpoints(Callback):
    """A checkpoint every ``--checkpoint-every`` steps and after every pass, holding the loop
    position, so that ``--resume`` continues exactly (see ``checkpoint.py``)."""

    def __init__(
        self,
        args: argparse.Namespace,
        rt: Runtime,
        model: Transformer,
        config: TransformerConfig,
        tokenizer: Tokenizer | TokenizerPair,
        training_state: Callable[[], dict[str, Any]],
        start: float,
    ) -> None:
        self.args, self.rt, self.model, self.config = args, rt, model, config
        self.tokenizer, self.training_state, self.start = tokenizer, training_state, start
        self.saved_at: int | None = None

    def on_step(self, record: dict, position: LoopPosition) -> None:
        if position.step % self.args.checkpoint_every == 0:
            self.save(position)

    def on_epoch_end(self, position: LoopPosition) -> None:
        self.save_unless_saved(position)

    def save_unless_saved(self, position: LoopPosition) -> None:
        if self.saved_at != position.step:
            self.save(position)

    def save(self, position: LoopPosition) -> None:
        if self.rt.is_main:
            meta = dataclasses.asdict(position) | {
                "seed": self.args.seed,
                "preset": self.args.preset,
                "length_penalty": self.args.length_penalty,  # the translate command's default
                "elapsed_s": time.perf_counter() - self.start,  # --max-minutes counts on
            }
            save_checkpoint(
                self.args.run_dir / "checkpoints",
                self.model,
                self.config,
                self.tokenizer,
                step=position.step,
                training_state=self.training_state(),
                meta=meta,
                keep_last=self.args.keep_checkpoints,
            )
        self.saved_at = position.step
        self.rt.barrier()
