"""Sequence checks: padding a batch and the padding mask (chapter 1)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import Tensor

from ..sequences import pad_sequences, padding_mask
from .engine import check
from .verdict import Verdict, Wrong

MISTAKES = {
    "pad-lengths-from-batch": "with pad_value={pad} your lengths are {got}, expected {want}: a "
    "length counted in the padded batch (its non-zero entries, or the entries other than 0) "
    "is wrong when the padding is not 0 or a token id is. Take each sequence's own length, "
    "len(s).",
}

# --- pad_sequences --------------------------------------------------------------------------------

# The longest sequence is in the middle, not first: a batch as wide as its first row is a mistake.
_SEQS = [[5, 6, 7], [8], [9, 10, 11, 12, 13], [14, 15]]


def _padded_and_lengths(result: object) -> tuple[Tensor, Tensor]:
    if not (isinstance(result, tuple) and len(result) == 2):
        raise Wrong(
            "return a pair (padded, lengths): the lengths of the rows are needed to build the "
            f"mask, and padding hides them. Yours returned {type(result).__name__}."
        )
    padded, lengths = result
    if not isinstance(padded, Tensor):
        raise Wrong(f"the padded batch should be a tensor, got {type(padded).__name__}.")
    if not isinstance(lengths, Tensor):
        raise Wrong(
            f"the lengths should be a tensor (B,) of dtype long, got {type(lengths).__name__}."
        )
    return padded, lengths


@check("pad_sequences", call="fn(seqs, pad_value=0)")
def check_pad_sequences(fn: Callable[..., tuple[Tensor, Tensor]]) -> Verdict:
    """``fn(seqs, pad_value=0) -> (padded, lengths)``: ``seqs`` is a list of ``B`` lists of token
    ids; ``padded`` ``(B, T)`` long, each row its ids then ``pad_value`` up to the longest length
    ``T``; ``lengths`` ``(B,)`` long, the real length of each row."""
    seqs: Sequence[list[int]] = [list(s) for s in _SEQS]
    B, T = len(seqs), max(len(s) for s in seqs)
    want, want_lengths = pad_sequences(seqs, pad_value=0)
    padded, lengths = _padded_and_lengths(fn([list(s) for s in seqs]))
    if tuple(padded.shape) == (T, B):
        raise Wrong(
            f"the batch has shape {tuple(padded.shape)} = (T, B): this book is batch first, "
            f"(B, T) = ({B}, {T}), one row per sequence."
        )
    if padded.dim() == 2 and padded.shape[0] == B and padded.shape[1] == len(seqs[0]) < T:
        raise Wrong(
            f"the batch is {padded.shape[1]} wide, the length of the first sequence; it must "
            f"be as wide as the longest one ({T}, the third here), or tokens are lost."
        )
    if tuple(padded.shape) != (B, T):
        raise Wrong(
            f"for {B} sequences of lengths {[len(s) for s in seqs]} the batch should have "
            f"shape (B, T) = ({B}, {T}), got {tuple(padded.shape)}."
        )
    if padded.dtype != torch.long:
        raise Wrong(
            f"the batch has dtype {padded.dtype}; token ids are integers, use torch.long "
            "(an nn.Embedding refuses floats)."
        )
    if tuple(lengths.shape) != (B,):
        raise Wrong(f"lengths should have shape (B,) = ({B},), got {tuple(lengths.shape)}.")
    if torch.equal(lengths.long(), torch.full((B,), T)):
        raise Wrong(
            f"every length is {T}, the padded width: lengths are the *real* lengths "
            f"{want_lengths.tolist()}, which the padding hides."
        )
    if not torch.equal(lengths.long(), want_lengths):
        raise Wrong(f"lengths should be {want_lengths.tolist()}, got {lengths.tolist()}.")
    if lengths.dtype != torch.long:
        raise Wrong(f"lengths have dtype {lengths.dtype}; use torch.long, as the mask expects.")
    left = torch.stack([torch.cat([want[b, len(s) :], want[b, : len(s)]]) for b, s in
                        enumerate(seqs)])  # fmt: skip
    if torch.equal(padded, left):
        raise Wrong(
            "the padding is on the left: put the tokens first and the padding after them "
            f"(right-padding), so row 1 is {want[1].tolist()}, not {left[1].tolist()}; the "
            "mask, the packed RNN of chapter 4 and the causal decoder all expect it there."
        )
    if not torch.equal(padded, want):
        raise Wrong(f"for {seqs} the batch should be\n{want}\nyours is\n{padded}")
    _expect_pad_value(fn, seqs, want, want_lengths)
    _expect_one_sequence(fn)
    return "right-padded, batch first, dtype long, with the real lengths and any pad value."


def _expect_pad_value(fn: Callable, seqs: list, want: Tensor, want_lengths: Tensor) -> None:
    """A pad id other than 0 must be used for the padding, and leave the lengths alone."""
    B, T = want.shape
    pad = 3  # a pad id other than 0: the argument must be used
    want3, _ = pad_sequences(seqs, pad_value=pad)
    padded3, lengths3 = _padded_and_lengths(fn([list(s) for s in seqs], pad_value=pad))
    if tuple(padded3.shape) == (B, T) and torch.equal(padded3, want):
        raise Wrong(
            f"with pad_value={pad} the padding is still 0: fill with the pad_value argument."
        )
    if tuple(padded3.shape) != (B, T) or not torch.equal(padded3, want3):
        raise Wrong(f"with pad_value={pad} the batch should be\n{want3}\nyours is\n{padded3}")
    if not torch.equal(lengths3.long(), want_lengths):
        raise Wrong.named(MISTAKES, "pad-lengths-from-batch", pad=pad, got=lengths3.tolist(),
                          want=want_lengths.tolist())  # fmt: skip


def _expect_one_sequence(fn: Callable) -> None:
    """A batch of one sequence is a (1, T) batch."""
    one, one_lengths = _padded_and_lengths(fn([[4, 5, 6]]))
    if one.tolist() != [[4, 5, 6]] or one_lengths.tolist() != [3]:
        raise Wrong(
            "one sequence alone should come back as a (1, 3) batch with lengths [3], got "
            f"{one.tolist()} and {one_lengths.tolist()}."
        )


# --- padding_mask ---------------------------------------------------------------------------------


@check("padding_mask", call="fn(lengths, max_len=None)")
def check_padding_mask(fn: Callable[..., Tensor]) -> Verdict:
    """``fn(lengths, max_len=None) -> (B, T)`` bool: True at the real tokens of each row (the
    first ``lengths[b]`` positions), False on padding; ``T = max_len``, or ``max(lengths)``."""
    lengths = torch.tensor([3, 1, 5, 2])
    B, T = len(lengths), int(lengths.max())
    want = padding_mask(lengths)
    got = fn(lengths.clone())
    if not isinstance(got, Tensor):
        raise Wrong(f"the mask should be a tensor (B, T) of bools, got {type(got).__name__}.")
    if tuple(got.shape) == (T, B) and tuple(got.shape) != (B, T):
        raise Wrong(
            f"the mask has shape {tuple(got.shape)} = (T, B); batch first: (B, T) = "
            f"({B}, {T}), one row per sequence."
        )
    if tuple(got.shape) != (B, T):
        raise Wrong(
            f"for lengths {lengths.tolist()} the mask should have shape ({B}, {T}), got "
            f"{tuple(got.shape)}."
        )
    if got.dtype != torch.bool:
        values = got.long() if not got.dtype.is_floating_point else got.round().long()
        if torch.equal(values, want.long()):
            raise Wrong(
                f"the mask has dtype {got.dtype}; make it torch.bool (compare, do not "
                "convert): masked_fill and indexing treat an integer mask differently."
            )
        raise Wrong(f"the mask should have dtype torch.bool, got {got.dtype}.")
    if torch.equal(got, ~want):
        raise Wrong(
            "mask polarity: yours is True on padding. In this book a padding mask is True "
            "at a *real token* (may be attended to, counted in a loss) and False on padding."
        )
    positions = torch.arange(T)
    if torch.equal(got, positions[None, :] <= lengths[:, None]):
        raise Wrong(
            "off by one: row b has lengths[b] real tokens, positions 0 .. lengths[b] - 1, so "
            "the test is `position < length`, not `<=`."
        )
    if not torch.equal(got, want):
        raise Wrong(f"for lengths {lengths.tolist()} the mask should be\n{want.int()}\n"
                    f"yours is\n{got.int()}")  # fmt: skip
    wide = fn(lengths.clone(), max_len=7)
    if isinstance(wide, Tensor) and tuple(wide.shape) == (B, T):
        raise Wrong(
            "max_len is ignored: with max_len=7 the mask must be 7 wide, as wide as a batch "
            "padded (or cut) to a fixed length, not as wide as the longest row."
        )
    if not (isinstance(wide, Tensor) and torch.equal(wide, padding_mask(lengths, 7))):
        raise Wrong(f"with max_len=7 the mask should be\n{padding_mask(lengths, 7).int()}")
    return "True at the real tokens, False on padding, (B, T) bool, and max_len is honoured."
