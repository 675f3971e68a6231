"""The training command's options: presets, the parser, and how ``--resume`` fills them in."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from ..data import PAIRS
from .schedule import SCHEDULES

# Presets: a model and a schedule. Every value can be overridden by its own flag.
PRESETS: dict[str, dict[str, Any]] = {
    # A CPU run of minutes: chapter 14's model, for 3 epochs. Chosen on the validation set
    # for a 15-minute budget (chapter 16): a rate that falls to zero at the end, small batches
    # (ahead in a screen; level with 2,000 tokens at the full 15 minutes), dropout 0.1 (ahead of
    # none by 1.1 to 1.2 validation BLEU with beam search, two seeds each, in runs of 4,600 steps;
    # less in the recorded runs, which slower hours cut to 3,700-3,800), and a length penalty
    # that makes beam search's outputs about as long as the references. A vocabulary for each
    # language (4,000 German, 2,500 English byte pairs) was ahead of one shared 4,000 by 2.1 to
    # 2.2 validation BLEU, two seeds each, with 9-14% more steps (16-21% more passes) in the time.
    "tiny": {"vocab_size": 4000, "target_vocab_size": 2500, "d_model": 128, "layers": 2,
             "heads": 4, "d_ff": 512, "dropout": 0.1, "norm_first": True, "max_tokens": 1000,
             "warmup": 100, "lr_factor": 0.5, "lr_schedule": "linear", "label_smoothing": 0.1,
             "length_penalty": 1.4, "epochs": 3},
    # The paper's base model (N=6, d_model=512, d_ff=2048, h=8, post-norm) on one or more GPUs.
    # Multi30k is small (about 60 steps per epoch at this budget), so it gets stronger dropout
    # and a shorter warm-up than the paper's WMT settings; peak rate 7.8e-4 at step 800. One
    # vocabulary for both languages, as in the paper (not measured against two on a GPU).
    "base": {"vocab_size": 8000, "target_vocab_size": 0, "d_model": 512, "layers": 6,
             "heads": 8, "d_ff": 2048, "dropout": 0.3, "norm_first": False, "max_tokens": 8000,
             "warmup": 800, "lr_factor": 0.5, "lr_schedule": "inverse-sqrt",
             "label_smoothing": 0.1, "length_penalty": 0.6, "epochs": 40},
}  # fmt: skip
MAX_LEN = 256  # position-table rows; longer sentences are cut (Multi30k's longest is far shorter)
PROG = "python -m transformer_tutorial.train"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Train the book's Transformer translator (German→English on Multi30k by "
        "default).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    add_run_options(p)
    budget = p.add_argument_group("time budget (the first limit reached stops training)")
    for name, kind in (("epochs", int), ("max-steps", int), ("max-minutes", float)):
        budget.add_argument(f"--{name}", type=kind)
    add_model_options(p.add_argument_group("model and optimisation (default: the preset's)"))
    add_output_options(p.add_argument_group("evaluation and output"))
    return p


def add_run_options(p: argparse.ArgumentParser) -> None:
    """Where the run lives, what it trains on, and the machine it runs on."""
    add = p.add_argument
    add("--run-dir", type=Path, default=Path("runs/latest"), help="where everything goes")
    add("--data-dir", type=Path, help="the data files (default: $TRANSFORMER_TUTORIAL_DATA or "
        "the cache)")  # fmt: skip
    add("--preset", choices=sorted(PRESETS), help="model and schedule (default: tiny)")
    add("--pair", choices=sorted(PAIRS), help="source-target languages (default: de-en)")
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


def add_model_options(group: argparse._ArgumentGroup) -> None:
    """Every value of a preset, each overridable by its own flag."""
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
        group.add_argument(f"--{name}", type=kind)
    group.add_argument(
        "--lr-schedule",
        choices=SCHEDULES,
        help="after the warm-up: inverse-sqrt = the paper's decay; linear = fall to zero when "
        "the budget (--max-steps, --max-minutes or --epochs) is spent",
    )
    group.add_argument(
        "--norm-first",
        action=argparse.BooleanOptionalAction,
        help="pre-norm blocks (default: the preset's)",
    )
    group.add_argument(
        "--target-vocab-size",
        type=int,
        help="give the target language a vocabulary of its own with this many entries (the "
        "source's is --vocab-size); 0 = one vocabulary of --vocab-size shared by both "
        "languages (default: the preset's)",
    )
    group.add_argument("--clip-norm", type=float, default=1.0)
    group.add_argument(
        "--dropout-masks",
        choices=["packed", "torch"],
        default="packed",
        help="how dropout masks are drawn on a CPU: packed = four from each 64-bit random "
        "number, a third of the cost (translator/dropout.py); torch = nn.Dropout's own",
    )


def add_output_options(group: argparse._ArgumentGroup) -> None:
    """Evaluation, checkpoints, logs and the files written at the end."""
    add = group.add_argument
    add("--beam-size", type=int, default=4, help="beam size for the test BLEU")
    add("--length-penalty", type=float,
        help="alpha of beam search's length penalty (default: the preset's; the translate "
        "command uses the run's)")  # fmt: skip
    add("--val-bleu-sentences", type=int,
        help="translate only the first N validation sentences for the epoch BLEU")  # fmt: skip
    add("--checkpoint-every", type=int, default=500, help="steps between checkpoints")
    add("--keep-checkpoints", type=int, default=2)
    add("--log-every", type=int, default=10)
    add("--samples", type=int, default=10)
    add("--attention-samples", type=int, default=3)
    add("--no-progress", action="store_true", help="no progress bars")
    add("--train-sentences", type=int,
        help="use only the first N training pairs (quick experiments, tests)")  # fmt: skip


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


# What a run *is*: a resumed run keeps these, and saying otherwise on the command line is an error
# (the rest -- budget, device, evaluation and output -- may change from one resume to the next).
FIXED_ON_RESUME = (
    "preset", "pair", "seed", "vocab_size", "d_model", "layers", "heads", "d_ff", "dropout",
    "max_tokens", "warmup", "lr_factor", "lr_schedule", "label_smoothing", "norm_first", "clip_norm",
    "train_sentences", "target_vocab_size",
)  # fmt: skip
# What a run saved before an option existed was trained with: it resumes with that, not with
# the preset's value of today.
BEFORE_THE_OPTION = {"target_vocab_size": 0}  # one vocabulary shared by both languages


def resolve_args(args: argparse.Namespace, explicit: set[str] | None = None) -> argparse.Namespace:
    """Fill unset options: on ``--resume`` from the run's ``args.json`` (except the options given
    again on the command line), then from the preset; then check every value."""
    explicit = explicit or set()
    saved_path = Path(args.run_dir) / "args.json"
    if args.resume and saved_path.is_file():
        saved = read_saved_args(saved_path)
        for key, value in BEFORE_THE_OPTION.items():  # a run saved before the option existed
            if saved.get(key) is None:
                saved[key] = value
        for key, value in saved.items():
            if key in FIXED_ON_RESUME and key in explicit and getattr(args, key) != value:
                flag = "--" + key.replace("_", "-")
                raise ValueError(
                    f"{flag} {getattr(args, key)} differs from this run's {value} ({saved_path}); "
                    f"a resumed run keeps its model and data. Leave {flag} out, or start a new "
                    "run in another --run-dir."
                )
            if key not in NOT_RESTORED and key not in explicit and hasattr(args, key):
                setattr(args, key, value)
    args.preset = args.preset or "tiny"
    args.pair = args.pair or "de-en"
    args.seed = 0 if args.seed is None else args.seed
    for key, value in PRESETS[args.preset].items():
        if key != "epochs" and getattr(args, key, None) is None:
            setattr(args, key, value)
    if args.max_steps is None and args.max_minutes is None and args.epochs is None:
        args.epochs = PRESETS[args.preset]["epochs"]  # no budget given: the preset's epochs
    check_values(args)
    return args


def read_saved_args(path: Path) -> dict[str, Any]:
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise ValueError(
            f"{path} is damaged ({err}); the run's options cannot be restored. Give them again "
            "on the command line (the same as the run was started with) and delete the file."
        ) from None
    if not isinstance(saved, dict):
        raise ValueError(f"{path} does not hold the run's options; delete it and give them again.")
    return saved


def check_values(args: argparse.Namespace) -> None:
    """Refuse values that would mean something odd (a zero budget, NaN, an empty data set)."""
    at_least_one = ("max_steps", "epochs", "checkpoint_every", "log_every", "beam_size",
                    "max_tokens", "train_sentences", "keep_checkpoints", "samples")  # fmt: skip
    for name in at_least_one:
        value = getattr(args, name)
        if value is not None and value < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {value}.")
    checks = {  # NaN and infinity fail every one of these
        "max_minutes": (lambda v: v > 0, "a positive number of minutes"),
        "length_penalty": (lambda v: 0 <= v <= 10, "between 0 and 10"),
        "clip_norm": (lambda v: v > 0, "positive"),
        "lr_factor": (lambda v: v > 0, "positive"),
        "dropout": (lambda v: 0 <= v < 1, "at least 0 and below 1"),
        "label_smoothing": (lambda v: 0 <= v < 1, "at least 0 and below 1"),
        "target_vocab_size": (lambda v: v >= 0, "0 (one vocabulary for both languages) or a size"),
    }
    for name, (ok, words) in checks.items():
        value = getattr(args, name)
        if value is not None and not (math.isfinite(value) and ok(value)):
            raise ValueError(f"--{name.replace('_', '-')} must be {words}, got {value}.")


def jsonable(args: argparse.Namespace) -> dict[str, Any]:
    return {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}
