"""Translate sentences with a trained checkpoint, from the command line (from the source language
of the run that trained it: German by default, Chinese or English with ``--pair``).

Usage::

    python -m transformer_tutorial.translate --checkpoint de-en "Ein Hund läuft über die Wiese."
    python -m transformer_tutorial.translate --checkpoint zh-en "我冷。"   # the shipped models
    python -m transformer_tutorial.translate --checkpoint runs/tiny "Ein Hund läuft im Schnee."
    python -m transformer_tutorial.translate --checkpoint runs/tiny --beam-size 4 < german.txt
    python -m transformer_tutorial.translate --checkpoint runs/tiny/checkpoints/step-001900 \
        --average 3 "Ein Hund läuft im Schnee."      # the mean of steps 1700, 1800 and 1900

Sentences come from the arguments or, when there are none, from standard input, one per line.
The output has one line per input line, in the same order; an empty input line gives an empty
output line. Sentences are decoded in batches (sorted by length), with the key/value cache, by
greedy search (``--beam-size 1``, the default) or beam search. A line's translation does not
depend on the other lines or on ``--batch-size``: each sentence may write at most its own source
length + 50 tokens.

Bad input never produces a traceback: a missing, corrupt or mismatched checkpoint, or standard
input that is not UTF-8, ends with a message on standard error and exit status 2. A line longer
than the model's position table is cut to fit, with a warning on standard error.
"""

from __future__ import annotations

import argparse
import sys

import torch

from ..decoding import output_limit, translate
from ..runtime import pick_device
from ..tokens import encode
from .checkpoint import CheckpointError, average_checkpoints, last_checkpoints

DEFAULT_LENGTH_PENALTY = 0.6  # the GNMT paper's alpha (chapter 15)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m transformer_tutorial.translate",
        description="Translate sentences with a checkpoint written by "
        "`python -m transformer_tutorial.train`.",
    )
    p.add_argument(
        "--checkpoint",
        required=True,
        help="a run directory, its checkpoints/ folder, one step-* checkpoint, or the name of a "
        "translator that ships with the package (de-en, zh-en)",
    )
    p.add_argument(
        "sentences",
        nargs="*",
        help="sentences in the source language (default: read standard input)",
    )
    p.add_argument(
        "--average",
        type=int,
        default=1,
        metavar="K",
        help="translate with the mean of the weights of this checkpoint and the K-1 saved before "
        "it (checkpoint averaging; pays for a checkpoint taken while the learning rate is high)",
    )
    p.add_argument("--beam-size", type=int, default=1, help="1 = greedy search")
    p.add_argument(
        "--length-penalty",
        type=float,
        help="alpha of beam search's length penalty (default: the one the run was evaluated "
        f"with, or {DEFAULT_LENGTH_PENALTY} for a checkpoint that does not record it)",
    )
    p.add_argument("--batch-size", type=int, default=64, help="at most this many sentences at once")
    p.add_argument(
        "--max-tokens",
        type=int,
        default=32000,
        help="bounds the memory of one batch: beam size x the sum, over its sentences, of source "
        "length + output limit (source length + 50) stays below this",
    )
    p.add_argument("--device", choices=["auto", "cuda", "mps", "cpu"], default="auto")
    return p


def check_length_penalty(alpha, what: str, hint: str = "") -> None:
    """``None`` (not given) or a number from 0 to 10; NaN, text and the like are errors."""
    if alpha is None:
        return
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 <= alpha <= 10:
        raise ValueError(f"{what} must be between 0 and 10, got {alpha!r}.{hint}")


def read_stdin() -> list[str]:
    """Lines of standard input, decoded strictly as UTF-8 (a bad byte is an error, not a '?')."""
    data = sys.stdin.buffer.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise ValueError(
            f"standard input is not valid UTF-8: byte 0x{data[err.start]:02x} on line {line} "
            f"cannot be decoded. Convert the file first, e.g. `iconv -f latin1 -t utf-8`."
        ) from None
    lines = text.removeprefix("\ufeff").split("\n")  # a byte-order mark is not text
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line does not start another
    return [line.removesuffix("\r") for line in lines]


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if min(args.average, args.beam_size, args.batch_size, args.max_tokens) < 1:
            raise ValueError(
                "--average, --beam-size, --batch-size and --max-tokens must be at least 1."
            )
        check_length_penalty(args.length_penalty, "--length-penalty")
        device = pick_device(args.device)
        model, config, tokenizer, meta = average_checkpoints(
            last_checkpoints(args.checkpoint, args.average), device
        )
        if args.length_penalty is None:
            args.length_penalty = meta.get("length_penalty", DEFAULT_LENGTH_PENALTY)
            check_length_penalty(
                args.length_penalty,
                "The length penalty recorded in the checkpoint's meta.json",
                " Give --length-penalty to choose one.",
            )
        if args.beam_size > config.tgt_vocab_size:
            raise ValueError(
                f"--beam-size must not exceed the vocabulary ({config.tgt_vocab_size})."
            )
        lines = args.sentences if args.sentences else read_stdin()
        stripped = [line.strip() for line in lines]
        todo = [i for i, line in enumerate(stripped) if line]
        limit = config.max_len - 1  # one position is kept for EOS
        lengths = {}
        for i, ids in zip(todo, encode(tokenizer, [stripped[i] for i in todo]), strict=True):
            lengths[i] = min(len(ids), limit) + 1  # with EOS, as the decoder reads it
            if len(ids) > limit:
                print(
                    f"warning: line {i + 1} has {len(ids)} tokens; the model reads at most "
                    f"{limit}, so it was cut to its first {limit} tokens.",
                    file=sys.stderr,
                )
        outputs = {}
        with torch.inference_mode():
            limits = output_limit(model, _stand_ins(lengths, config.pad_id), None).tolist()
            limits = limits if lengths else []
            positions = {i: n + m for (i, n), m in zip(lengths.items(), limits, strict=True)}
            for group in token_bounded_groups(positions, args):
                texts = [stripped[i] for i in group]
                options = {"beam_size": args.beam_size, "length_penalty": args.length_penalty}
                translations = translate(model, tokenizer, texts, batch_size=len(group), **options)
                outputs.update(zip(group, translations, strict=True))
    except (CheckpointError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    result = [outputs.get(i, "") for i in range(len(lines))]
    try:
        sys.stdout.write("".join(line + "\n" for line in result))
        sys.stdout.flush()
    except BrokenPipeError:  # e.g. piped into `head`
        return 0
    except OSError as err:  # e.g. a full disk
        print(f"error: could not write the translations ({err.strerror}).", file=sys.stderr)
        return 2
    return 0


def _stand_ins(lengths: dict[int, int], pad_id: int) -> torch.Tensor:
    """A padded batch with each line's length (its ids do not matter to the output limit)."""
    width = max(lengths.values(), default=1)
    rows = [[pad_id + 1] * n + [pad_id] * (width - n) for n in lengths.values()]
    return torch.tensor(rows or [[pad_id + 1]])  # (lines, width); one stand-in when empty


def token_bounded_groups(positions: dict[int, int], args: argparse.Namespace) -> list[list[int]]:
    """The lines (by index) in batches of similar length, each within ``--batch-size`` sentences
    and ``--max-tokens`` positions (beam x (source + output limit)); a line's translation does
    not depend on its batch, so this changes memory and speed, not the output."""
    groups, group, work = [], [], 0
    for i in sorted(positions, key=positions.__getitem__):
        cost = args.beam_size * positions[i]  # source + its output limit, per beam
        if cost > args.max_tokens:
            raise ValueError(
                f"line {i + 1} alone needs {cost:,} positions with --beam-size {args.beam_size}, "
                f"more than --max-tokens {args.max_tokens:,}; lower the beam size or raise "
                "--max-tokens (memory grows with it)."
            )
        if group and (work + cost > args.max_tokens or len(group) == args.batch_size):
            groups.append(group)
            group, work = [], 0
        group.append(i)
        work += cost
    return [*groups, group] if group else groups


if __name__ == "__main__":
    sys.exit(main())
