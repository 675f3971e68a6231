"""Train a German→English Transformer on Multi30k from the command line.

Hand-written (not generated from a notebook). The pieces it runs are the book's: the tokenizer,
batching, loss, schedule and training step of chapter 14 (``training``), the model of chapter 13
(``transformer``), the decoders and BLEU of chapter 15 (``decoding``).

Usage::

    python -m transformer_tutorial.train --preset tiny --run-dir runs/tiny          # CPU, minutes
    python -m transformer_tutorial.train --preset base --run-dir runs/base          # one GPU
    torchrun --nproc_per_node=4 -m transformer_tutorial.train --preset base --run-dir runs/base4
    python -m transformer_tutorial.train --run-dir runs/tiny --resume               # continue

Data: Multi30k (task 1, raw) from ``--data-dir``, else ``$TRANSFORMER_TUTORIAL_DATA``, else the
cache; the loader downloads the official files when it can and says what to do when it cannot.

Several processes (``torchrun``): every process builds the same token-budget batches (same seed);
``--max-tokens`` is the budget of the *global* batch, and process ``r`` of ``W`` takes the
sentences ``r, r + W, r + 2W, ...`` of it, a disjoint shard. Each divides its summed loss by the
target-token count of the global batch, and DistributedDataParallel averages the gradients, so
one step equals one single-process step on the global batch (up to rounding). Backend: NCCL on
CUDA, gloo on the CPU.

Files in the run directory (the closing chapter reads them; keep this list in sync):

``args.json``
    The resolved arguments (preset values filled in).
``tokenizer.json``
    The tokenizer, trained on the training split only.
``metrics.jsonl``
    One JSON object per line, appended as training goes; ``"kind"`` says which:

    - ``{"kind": "train", "step", "epoch", "loss", "lr", "grad_norm", "tokens", "tokens_per_s",
      "elapsed_s"}`` every ``--log-every`` steps (``loss``: label-smoothed, per target token,
      of that step's global batch on process 0's shard; ``tokens_per_s``: target tokens of all
      processes per second since the previous record);
    - ``{"kind": "val", "step", "epoch", "val_loss", "val_bleu", "elapsed_s"}`` after every epoch
      (``val_loss``: cross-entropy per target token; ``val_bleu``: sacrebleu BLEU of greedy
      translations of the validation set);
    - ``{"kind": "test", "step", "test_bleu", "beam_size", "elapsed_s"}`` once at the end.
``checkpoints/``
    ``step-NNNNNN/`` directories and a ``latest`` pointer (see ``checkpoint.py``); the last one
    is the final model, usable with ``python -m transformer_tutorial.translate --checkpoint RUN``.
``results.json``
    ``{"test_bleu", "sacrebleu_signature", "beam_size", "length_penalty", "test_set",
    "test_sentences", "val_bleu", "val_loss", "steps", "epochs", "train_tokens", "wall_time_s",
    "command", "git_commit", "hardware": {"device", "cpu", "cpu_cores", "gpu", "world_size"},
    "torch_version", "precision", "config", "args", "finished_at"}``.
``samples.json``
    ``[{"source", "reference", "hypothesis"}, ...]``: the first ``--samples`` test sentences.
``attention.json``
    ``[{"source", "hypothesis", "source_tokens", "target_tokens",
    "encoder_self_attention", "decoder_cross_attention"}, ...]`` for the first
    ``--attention-samples`` test sentences. ``source_tokens`` are the encoder's input pieces
    (ending in ``<eos>``), ``target_tokens`` the decoder's input (``<bos>`` and the model's own
    beam-search output). ``encoder_self_attention[l][h][i][j]`` is the weight with which source
    position ``i`` attends to source position ``j`` in head ``h`` of encoder layer ``l``;
    ``decoder_cross_attention[l][h][t][j]`` the weight with which target position ``t``
    attends to source position ``j``. Weights are rounded to 4 decimals; each row sums to 1.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import platform
import shlex
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch
from torch import nn

from .checkpoint import (
    CheckpointError,
    latest_checkpoint,
    load_training_state,
    load_weights,
    read_meta,
    save_checkpoint,
    write_text_atomic,
)
from .data import DataNotFoundError, load_multi30k
from .decoding import corpus_bleu, translate
from .training import (
    BOS_ID,
    EOS_ID,
    LabelSmoothingLoss,
    collate,
    encode,
    encode_pairs,
    evaluate_loss,
    make_batches,
    make_optimizer,
    noam_scheduler,
    token_budget_batches,
    train_step,
    train_tokenizer,
)
from .transformer import Transformer, TransformerConfig, count_parameters

# Presets: a model and a schedule. Every value can be overridden by its own flag.
PRESETS: dict[str, dict[str, Any]] = {
    # A CPU run of minutes: the model and schedule of chapter 14's notebook run, for 3 epochs.
    "tiny": dict(
        vocab_size=4000,
        d_model=128,
        layers=2,
        heads=4,
        d_ff=512,
        dropout=0.1,
        norm_first=True,
        max_tokens=2000,
        warmup=100,
        lr_factor=0.5,
        label_smoothing=0.1,
        epochs=3,
    ),
    # The paper's base model (N=6, d_model=512, d_ff=2048, h=8, post-norm) on one or more GPUs.
    # Multi30k is small (about 60 steps per epoch at this budget), so it gets stronger dropout and
    # a shorter warm-up than the paper's WMT settings.
    "base": dict(
        vocab_size=8000,
        d_model=512,
        layers=6,
        heads=8,
        d_ff=2048,
        dropout=0.3,
        norm_first=False,
        max_tokens=8000,
        warmup=800,
        lr_factor=0.5,  # peak rate 7.8e-4 at step 800, about the paper's 7.0e-4
        label_smoothing=0.1,
        epochs=40,
    ),
}
MAX_LEN = 256  # position-table rows; longer sentences are cut (Multi30k's longest is far shorter)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m transformer_tutorial.train",
        description="Train a German→English Transformer on Multi30k (the book's translator).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument(
        "--run-dir", type=Path, default=Path("runs/latest"), help="where everything goes"
    )
    p.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="folder with the Multi30k files (default: $TRANSFORMER_TUTORIAL_DATA or the cache)",
    )
    p.add_argument(
        "--preset", choices=sorted(PRESETS), default=None, help="model and schedule (default: tiny)"
    )
    p.add_argument(
        "--resume", action="store_true", help="continue from the run's latest checkpoint"
    )
    p.add_argument("--device", choices=["auto", "cuda", "mps", "cpu"], default="auto")
    p.add_argument(
        "--precision",
        choices=["auto", "fp32", "bf16", "fp16"],
        default="auto",
        help="autocast dtype; auto = bf16 on CUDA GPUs that support it, fp16 on older "
        "ones, fp32 elsewhere",
    )
    p.add_argument("--compile", action="store_true", help="torch.compile the model for training")
    p.add_argument(
        "--no-fused-attention",
        action="store_true",
        help="use the explicit attention path instead of scaled_dot_product_attention",
    )
    p.add_argument("--seed", type=int, default=None, help="(default: 0)")
    budget = p.add_argument_group("time budget (the first limit reached stops training)")
    budget.add_argument("--epochs", type=int, default=None)
    budget.add_argument("--max-steps", type=int, default=None)
    budget.add_argument("--max-minutes", type=float, default=None)
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
        model.add_argument(f"--{name}", type=kind, default=None)
    model.add_argument(
        "--norm-first",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="pre-norm blocks (default: the preset's)",
    )
    model.add_argument("--clip-norm", type=float, default=1.0)
    ev = p.add_argument_group("evaluation and output")
    ev.add_argument("--beam-size", type=int, default=4, help="beam size for the test BLEU")
    ev.add_argument("--length-penalty", type=float, default=0.6)
    ev.add_argument(
        "--val-bleu-sentences",
        type=int,
        default=None,
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
        default=None,
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
    if args.preset is None:
        args.preset = "tiny"
    if args.seed is None:
        args.seed = 0
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


# --- processes and devices ----------------------------------------------------------------------


@dataclasses.dataclass
class Runtime:
    device: torch.device
    rank: int
    world_size: int
    amp_dtype: torch.dtype | None

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1


def pick_device(name: str, local_rank: int = 0) -> torch.device:
    """``auto`` picks CUDA, then Apple's MPS, then the CPU; an explicit choice must exist."""
    has_mps = getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "mps" if has_mps else "cpu"
    if name == "cuda":
        if not torch.cuda.is_available():
            raise ValueError("--device cuda: no CUDA GPU is visible; use --device auto or cpu.")
        return torch.device("cuda", local_rank % torch.cuda.device_count())
    if name == "mps" and not has_mps:
        raise ValueError("--device mps: Apple's MPS backend is not available; use auto or cpu.")
    return torch.device(name)


def pick_precision(name: str, device: torch.device) -> torch.dtype | None:
    if name == "auto":
        if device.type != "cuda":
            return None
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if name == "fp16" and device.type != "cuda":
        raise ValueError("--precision fp16 needs a CUDA GPU (use bf16 or fp32 elsewhere).")
    return {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}[name]


def setup_runtime(args: argparse.Namespace) -> Runtime:
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = pick_device(args.device, local_rank)
    if world_size > 1:
        import torch.distributed as dist

        backend = "nccl" if device.type == "cuda" else "gloo"
        if device.type == "cuda":
            torch.cuda.set_device(device)
        dist.init_process_group(backend=backend)
    return Runtime(device, rank, world_size, pick_precision(args.precision, device))


def barrier(rt: Runtime) -> None:
    if rt.distributed:
        import torch.distributed as dist

        dist.barrier()


def any_rank(rt: Runtime, flag: bool) -> bool:
    """True on every process when ``flag`` is true on at least one (so all stop together)."""
    if not rt.distributed:
        return flag
    import torch.distributed as dist

    t = torch.tensor([1.0 if flag else 0.0], device=rt.device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return bool(t.item())


# --- records ------------------------------------------------------------------------------------


def hardware(rt: Runtime) -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    gpu = torch.cuda.get_device_name(rt.device) if rt.device.type == "cuda" else None
    return {
        "device": str(rt.device),
        "cpu": cpu,
        "cpu_cores": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "gpu": gpu,
        "world_size": rt.world_size,
    }


def git_commit() -> str | None:
    """The commit of the checkout this package runs from (with ``-dirty`` for local changes)."""
    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=here,
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return commit + ("-dirty" if dirty else "")


def command_line(rt: Runtime) -> str:
    launcher = (
        f"torchrun --nproc_per_node={rt.world_size} -m transformer_tutorial.train"
        if rt.distributed
        else "python -m transformer_tutorial.train"
    )
    return " ".join([launcher, *map(shlex.quote, sys.argv[1:])])


class MetricsLog:
    """Appends JSON lines to ``metrics.jsonl`` (process 0 only), flushing each line."""

    def __init__(self, path: Path, enabled: bool, resume_step: int | None) -> None:
        self.path, self.enabled = path, enabled
        if enabled and resume_step is not None and path.exists():
            # Drop what the interrupted run logged after its last checkpoint: those steps are
            # done again, and the log should read like one uninterrupted run.
            kept = [
                line
                for line in path.read_text(encoding="utf-8").splitlines()
                if line.strip() and json.loads(line).get("step", 0) <= resume_step
            ]
            write_text_atomic(path, "".join(line + "\n" for line in kept))
        elif enabled and resume_step is None and path.exists():
            path.unlink()

    def read(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        lines = self.path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def write(self, record: dict[str, Any]) -> None:
        if self.enabled:
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(json.dumps(record) + "\n")
                f.flush()


# --- attention maps for the closing chapter -------------------------------------------------------


@torch.no_grad()
def attention_maps(model: Transformer, src: torch.Tensor, tgt_in: torch.Tensor) -> dict[str, list]:
    """Encoder self-attention and decoder cross-attention weights of one teacher-forced pass.

    Every attention call of the chosen sub-layers is routed, for this one pass, through the
    explicit path with ``need_weights=True`` (the model's own ``attend`` method; nothing is
    copied), and the weights are collected.

    Shape:
        src ``(1, S)``, tgt_in ``(1, T)``; returns lists of shape ``(L, H, S, S)`` and
        ``(L, H, T, S)``.
    """
    encoder_weights: list[torch.Tensor] = []
    cross_weights: list[torch.Tensor] = []
    patched = []

    def record(module: nn.Module, store: list) -> None:
        original = module.attend

        def attend(query, k, v, mask=None, need_weights=False, fused=False):
            out, weights = original(query, k, v, mask=mask, need_weights=True, fused=False)
            store.append(weights[0])  # (H, T_q, T_k)
            return out, (weights if need_weights else None)

        module.attend = attend  # an instance attribute shadows the method for this pass only
        patched.append(module)

    for layer in model.encoder.layers:
        record(layer.self_attn, encoder_weights)
    for layer in model.decoder.layers:
        record(layer.cross_attn, cross_weights)
    was_training = model.training
    try:
        model.eval()
        model(src, tgt_in)
    finally:
        for module in patched:
            del module.attend
        model.train(was_training)

    def rounded(ws: list[torch.Tensor]) -> list:
        return torch.stack(ws).float().cpu().round(decimals=4).tolist()

    return {
        "encoder_self_attention": rounded(encoder_weights),
        "decoder_cross_attention": rounded(cross_weights),
    }


# --- the run ------------------------------------------------------------------------------------


def _kill_hook(step: int) -> None:
    """For the tests: die with SIGKILL right after this step (as a crash or ``kill -9`` would)."""
    target = os.environ.get("TRANSFORMER_TUTORIAL_TEST_KILL_AT_STEP")
    if target is not None and int(target) == step:
        os.kill(os.getpid(), signal.SIGKILL)


def _step_seed(seed: int, step: int, rank: int) -> int:
    # Dropout draws depend only on (seed, step, rank), so a resumed run repeats them exactly
    # without saving generator states, and the processes of one run draw different masks.
    return (seed * 1_000_003 + step * 7919 + rank * 104_729) % (2**63)


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


def run(args: argparse.Namespace) -> dict[str, Any]:
    rt = setup_runtime(args)
    start_time = time.perf_counter()
    run_dir: Path = args.run_dir
    ckpt_dir = run_dir / "checkpoints"
    if rt.is_main:
        run_dir.mkdir(parents=True, exist_ok=True)
    barrier(rt)

    resume_from = latest_checkpoint(ckpt_dir) if args.resume and ckpt_dir.is_dir() else None
    if args.resume and resume_from is None:
        raise CheckpointError(
            f"--resume: {ckpt_dir} holds no complete checkpoint; start without --resume."
        )
    if not args.resume and ckpt_dir.is_dir() and latest_checkpoint(ckpt_dir) is not None:
        raise ValueError(
            f"{run_dir} already holds a run; pass --resume to continue it or choose another "
            "--run-dir."
        )

    train_pairs = load_multi30k("train", data_dir=args.data_dir)
    if args.train_sentences is not None:
        train_pairs = train_pairs[: args.train_sentences]
    val_pairs = load_multi30k("val", data_dir=args.data_dir)
    test_pairs = load_multi30k("test", data_dir=args.data_dir)

    # The tokenizer: trained once by process 0 on the training split, read by all.
    from tokenizers import Tokenizer

    tok_path = run_dir / "tokenizer.json"
    if resume_from is not None:
        tokenizer = Tokenizer.from_file(str(resume_from / "tokenizer.json"))
    else:
        if rt.is_main:
            tokenizer = train_tokenizer([s for p in train_pairs for s in p], args.vocab_size)
            tmp = tok_path.with_suffix(".tmp")
            tokenizer.save(str(tmp))
            os.replace(tmp, tok_path)
        barrier(rt)
        tokenizer = Tokenizer.from_file(str(tok_path))
    train_ids = encode_pairs(tokenizer, train_pairs, max_len=MAX_LEN)
    val_ids = encode_pairs(tokenizer, val_pairs, max_len=MAX_LEN)

    config = build_config(args, tokenizer.get_vocab_size())
    torch.manual_seed(args.seed)
    model = Transformer(config).to(rt.device)
    optimizer = make_optimizer(model, lr=args.lr_factor)
    scheduler = noam_scheduler(optimizer, d_model=args.d_model, warmup=args.warmup)
    scaler = torch.amp.GradScaler("cuda") if rt.amp_dtype == torch.float16 else None

    step, epoch, batch_in_epoch, train_tokens = 0, 0, 0, 0
    if resume_from is not None:
        load_weights(model, resume_from / "model.safetensors")
        state = load_training_state(resume_from)
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        if scaler is not None and state.get("scaler"):
            scaler.load_state_dict(state["scaler"])
        meta = read_meta(resume_from)
        step, epoch = meta["step"], meta["epoch"]
        batch_in_epoch, train_tokens = meta["batch_in_epoch"], meta.get("train_tokens", 0)
    if rt.is_main:
        (run_dir / "args.json").write_text(
            json.dumps(
                {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}, indent=2
            ),
            encoding="utf-8",
        )
    metrics = MetricsLog(run_dir / "metrics.jsonl", rt.is_main, step if resume_from else None)

    train_model: nn.Module = model
    if args.compile:
        train_model = torch.compile(train_model)
    if rt.distributed:
        from torch.nn.parallel import DistributedDataParallel as DDP

        train_model = DDP(
            train_model, device_ids=[rt.device.index] if rt.device.type == "cuda" else None
        )

    criterion = LabelSmoothingLoss(args.label_smoothing)
    plain = LabelSmoothingLoss(0.0)
    val_batches = make_batches(val_ids, max_tokens=max(args.max_tokens, 4000), shuffle=False)

    def save(tag_epoch: int, tag_batch: int) -> None:
        if rt.is_main:
            save_checkpoint(
                ckpt_dir,
                model,
                config,
                tokenizer,
                step=step,
                training_state={
                    "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(),
                    "scaler": scaler.state_dict() if scaler is not None else {},
                },
                meta={
                    "epoch": tag_epoch,
                    "batch_in_epoch": tag_batch,
                    "train_tokens": train_tokens,
                    "seed": args.seed,
                    "preset": args.preset,
                },
                keep_last=args.keep_checkpoints,
            )
        barrier(rt)

    def out_of_time() -> bool:
        over = (
            args.max_minutes is not None
            and (time.perf_counter() - start_time) / 60 >= args.max_minutes
        )
        return any_rank(rt, over)

    def validate() -> dict[str, Any]:
        record: dict[str, Any] = {"kind": "val", "step": step, "epoch": epoch}
        if rt.is_main:
            record["val_loss"] = evaluate_loss(model, [b.to(rt.device) for b in val_batches], plain)
            pairs = val_pairs[: args.val_bleu_sentences]
            with autocast():
                hyps = translate(model, tokenizer, [de for de, _ in pairs], beam_size=1)
            record["val_bleu"] = corpus_bleu(hyps, [en for _, en in pairs])[0].score
            record["elapsed_s"] = time.perf_counter() - start_time
            metrics.write(record)
        barrier(rt)
        return record

    def autocast():
        return torch.autocast(
            rt.device.type, dtype=rt.amp_dtype or torch.float32, enabled=rt.amp_dtype is not None
        )

    progress = None
    if rt.is_main and not args.no_progress:
        from tqdm.auto import tqdm

        progress = tqdm(total=args.max_steps, initial=step, unit="step", dynamic_ncols=True)

    if rt.is_main:
        print(
            f"{count_parameters(model):,} parameters, {len(train_ids)} training pairs, "
            f"device {rt.device}, {rt.world_size} process(es), precision "
            f"{rt.amp_dtype or 'fp32'}",
            file=sys.stderr,
        )

    saved_at = step if resume_from is not None else -1
    last_log_time, last_log_tokens = time.perf_counter(), train_tokens
    stop = (args.max_steps is not None and step >= args.max_steps) or (
        args.epochs is not None and epoch >= args.epochs
    )
    while not stop:
        batches = token_budget_batches(
            train_ids, args.max_tokens, shuffle=True, seed=args.seed + epoch
        )
        # Every process needs at least one sentence of each global batch.
        batches = [b for b in batches if len(b) >= rt.world_size]
        if progress is not None:
            progress.set_description(f"epoch {epoch + 1}")
        while batch_in_epoch < len(batches):
            global_batch = batches[batch_in_epoch]
            shard = global_batch[rt.rank :: rt.world_size]
            global_tokens = sum(len(train_ids[i][1]) + 1 for i in global_batch)
            batch = collate([train_ids[i] for i in shard]).to(rt.device)
            torch.manual_seed(_step_seed(args.seed, step, rt.rank))
            record = train_step(
                train_model,
                batch,
                criterion,
                optimizer,
                scheduler,
                clip_norm=args.clip_norm,
                # DDP averages the processes' gradients; dividing by global_tokens / W makes the
                # average the gradient of the global batch's mean loss.
                normalizer=global_tokens / rt.world_size,
                amp_dtype=rt.amp_dtype,
                scaler=scaler,
            )
            step += 1
            batch_in_epoch += 1
            train_tokens += global_tokens
            if rt.is_main and (step % args.log_every == 0 or step == 1):
                now = time.perf_counter()
                metrics.write(
                    {
                        "kind": "train",
                        "step": step,
                        "epoch": epoch,
                        "loss": record["loss"],
                        "lr": record["lr"],
                        "grad_norm": record["grad_norm"],
                        "tokens": global_tokens,
                        "tokens_per_s": (train_tokens - last_log_tokens)
                        / max(now - last_log_time, 1e-9),
                        "elapsed_s": now - start_time,
                    }
                )
                last_log_time, last_log_tokens = now, train_tokens
            if progress is not None:
                progress.update(1)
                progress.set_postfix(
                    loss=f"{record['loss']:.3f}",
                    lr=f"{record['lr']:.1e}",
                    tok_s=f"{train_tokens / max(time.perf_counter() - start_time, 1e-9):.0f}",
                )
            done = args.max_steps is not None and step >= args.max_steps
            timed_out = out_of_time()
            if step % args.checkpoint_every == 0 or done or timed_out:
                at_end = batch_in_epoch == len(batches)
                save(epoch + 1 if at_end else epoch, 0 if at_end else batch_in_epoch)
                saved_at = step
            _kill_hook(step)
            if done or timed_out:
                stop = True
                break
        if batch_in_epoch == len(batches):  # a full epoch: validate, checkpoint
            epoch += 1
            batch_in_epoch = 0
            validate()
            if saved_at != step:
                save(epoch, 0)
                saved_at = step
            if args.epochs is not None and epoch >= args.epochs:
                stop = True
    if progress is not None:
        progress.close()
    if saved_at != step:
        save(epoch, batch_in_epoch)

    results: dict[str, Any] = {}
    if rt.is_main:
        final_val_loss = evaluate_loss(model, [b.to(rt.device) for b in val_batches], plain)
        sources = [de for de, _ in test_pairs]
        references = [en for _, en in test_pairs]
        with autocast():
            hypotheses = translate(
                model,
                tokenizer,
                sources,
                beam_size=args.beam_size,
                length_penalty=args.length_penalty,
            )
        bleu, signature = corpus_bleu(hypotheses, references)
        wall = time.perf_counter() - start_time
        metrics.write(
            {
                "kind": "test",
                "step": step,
                "test_bleu": bleu.score,
                "beam_size": args.beam_size,
                "elapsed_s": wall,
            }
        )
        samples = [
            {"source": s, "reference": r, "hypothesis": h}
            for s, r, h in list(zip(sources, references, hypotheses, strict=True))[: args.samples]
        ]
        write_text_atomic(
            run_dir / "samples.json", json.dumps(samples, indent=2, ensure_ascii=False)
        )
        maps = []
        for source, hypothesis in list(zip(sources, hypotheses, strict=True))[
            : args.attention_samples
        ]:
            (src_ids,) = encode(tokenizer, [source])
            (hyp_ids,) = encode(tokenizer, [hypothesis])
            src_ids = src_ids[: MAX_LEN - 1] + [EOS_ID]
            tgt_ids = [BOS_ID] + hyp_ids[: MAX_LEN - 1]
            src_t = torch.tensor([src_ids], device=rt.device)
            tgt_t = torch.tensor([tgt_ids], device=rt.device)
            maps.append(
                {
                    "source": source,
                    "hypothesis": hypothesis,
                    "source_tokens": [tokenizer.id_to_token(i) for i in src_ids],
                    "target_tokens": [tokenizer.id_to_token(i) for i in tgt_ids],
                    **attention_maps(model, src_t, tgt_t),
                }
            )
        write_text_atomic(run_dir / "attention.json", json.dumps(maps, ensure_ascii=False))
        results = {
            "test_bleu": bleu.score,
            "sacrebleu_signature": signature,
            "bleu_detail": str(bleu),
            "beam_size": args.beam_size,
            "length_penalty": args.length_penalty,
            "test_set": "multi30k test2016 (test_2016_flickr), de->en",
            "test_sentences": len(test_pairs),
            "val_bleu": [r["val_bleu"] for r in metrics.read() if r["kind"] == "val"],
            "val_loss": final_val_loss,
            "steps": step,
            "epochs": epoch + batch_in_epoch / max(len(batches), 1),
            "train_tokens": train_tokens,
            "parameters": count_parameters(model),
            "wall_time_s": wall,
            "command": command_line(rt),
            "git_commit": git_commit(),
            "hardware": hardware(rt),
            "torch_version": torch.__version__,
            "precision": str(rt.amp_dtype or "fp32"),
            "config": dataclasses.asdict(config),
            "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
            "resumed": bool(args.resume),
            "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
        write_text_atomic(
            run_dir / "results.json", json.dumps(results, indent=2, ensure_ascii=False)
        )
        print(
            f"test BLEU {bleu.score:.2f} (beam {args.beam_size}, {signature}); "
            f"{step} steps in {wall / 60:.1f} min; results in {run_dir / 'results.json'}",
            file=sys.stderr,
        )
    barrier(rt)
    if rt.distributed:
        import torch.distributed as dist

        dist.destroy_process_group()
    return results


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
