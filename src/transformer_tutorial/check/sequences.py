"""Sequence checks: padding a batch and the padding mask (chapter 1)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import Tensor

from ..sequences import pad_sequences, padding_mask
from .engine import check
from .tensors import expect_kept, unpacks_to
from .verdict import Verdict, Wrong

MISTAKES = {
    "mask-right-aligned": "your mask marks the last lengths[b] positions of each row as real, "
    "as if the padding came first: the book pads on the right, so the real tokens are the "
    "first lengths[b] positions, positions < lengths[:, None].",
    "mask-max-len-plus-one": "with max_len=7 your mask is 8 wide: max_len is the width itself "
    "(positions 0 .. max_len - 1), torch.arange(max_len).",
    "pad-one-too-wide": "your batch is {width} columns wide, one more than the longest sequence "
    "({T}): the width T is the longest length, so the longest row has no padding.",
    "pad-pair-swapped": "you return (lengths, padded): the book's order is (padded, lengths), "
    "the batch first.",
    "mask-width-batch": "your mask is {shape}: its width is the batch size B = {B}; the width "
    "is the longest length, max(lengths) = {T} (or max_len when it is given).",
    "mask-extra-axis": "your mask has an extra axis, {shape}: return (B, T) = ({B}, {T}); the "
    "attention code adds the axes it needs.",
    "mask-shifted": "your mask is shifted one position to the right: row b is True at positions "
    "1 .. lengths[b]; it is True at 0 .. lengths[b] - 1 (positions count from 0).",
    "pad-lengths-minus-one": "each length is one less than its sequence's: {got} for {want}. A "
    "length is the number of tokens, len(s), not the index of the last one.",
    "pad-sorted": "your lengths are the right ones sorted, longest first ({got} for {want}): "
    "row b must be sequence b, in the order given, or the batch no longer lines up "
    "with its targets. (pack_padded_sequence sorts for itself: enforce_sorted=False.)",
    "pad-width-of-max-list": "the batch is {width} wide, the length of max(seqs), the largest "
    "list in Python's order (compared element by element, {largest}), not the longest: "
    "T = max(len(s) for s in seqs) = {T}.",
    "mask-one-too-wide": "your mask is {width} wide, one more than the longest length ({T}): the "
    "positions are 0 .. max(lengths) - 1, torch.arange(max(lengths)).",
    "mask-attention-shape": "your mask is {shape}, the shape attention broadcasts, (B, 1, 1, T): "
    "padding_mask returns (B, T) = ({B}, {T}); the attention code adds the axes it needs "
    "(mask[:, None, None, :]).",
    "mask-rows-sorted": "your mask's rows are the right rows in another order (sorted by length?): "
    "row b must describe sequence b, lengths[b] = {lengths}.",
    "pad-changed-input": "your function changed the lists it was given: {want} became {got}. "
    "The caller still needs its sequences as they were; pad copies of them (list(s) + "
    "[pad_value] * (T - len(s))), or write into a new tensor.",
    "pad-lengths-counted": "with pad_value=3 and the sequences {seqs} your lengths are {got}, "
    "expected {want}: they count the entries that differ from pad_value, so a real token equal "
    "to it is not counted. Take each length from its sequence, len(s), not from the padded "
    "tensor.",
    "pad-lengths-nonzero": "for the sequences {seqs} your lengths are {got}, expected {want}: "
    "they count the ids that are not 0, but 0 can be a real token id. Take each length from its "
    "sequence, len(s), not from the padded tensor.",
    "pad-lengths-from-batch": "with pad_value={pad} your lengths are {got}, expected {want}: a "
    "length counted in the padded batch (its non-zero entries, or the entries other than 0) "
    "is wrong when the padding is not 0 or a token id is. Take each sequence's own length, "
    "len(s).",
    "pad-no-lengths": "return a pair (padded, lengths): the lengths of the rows are needed to "
    "build the mask, and padding hides them. Yours returned {kind}.",
    "pad-time-first": "the batch has shape {shape} = (T, B): this book is batch first, (B, T) = "
    "({B}, {T}), one row per sequence.",
    "pad-first-width": "the batch is {width} wide, the length of the first sequence; it must be "
    "as wide as the longest one ({T}, the third here), or tokens are lost.",
    "pad-lengths-width": "every length is {T}, the padded width: lengths are the *real* lengths "
    "{want}, which the padding hides.",
    "pad-left": "the padding is on the left: put the tokens first and the padding after them "
    "(right-padding), so row 1 is {want}, not {got}; the mask, the packed RNN of chapter 4 and "
    "the causal decoder all expect it there.",
    "pad-value-ignored": "with pad_value={pad} the padding is still 0: fill with the pad_value "
    "argument.",
    "mask-time-first": "the mask has shape {shape} = (T, B); batch first: (B, T) = ({B}, {T}), "
    "one row per sequence.",
    "mask-ints": "the mask has dtype {dtype}; make it torch.bool (compare, do not convert): "
    "masked_fill and indexing treat an integer mask differently.",
    "mask-polarity": "mask polarity: yours is True on padding. In this book a padding mask is "
    "True at a *real token* (may be attended to, counted in a loss) and False on padding.",
    "mask-one-short": "each row hides its last real token: for lengths {lengths} yours has "
    "{got} True entries. Row b is True at positions 0 .. lengths[b] - 1: positions counted from "
    "1 (arange(1, T + 1)) compared with <, or positions compared with < lengths - 1, lose the "
    "last one.",
    "mask-width-first-row": "the mask has shape {shape}: for lengths {lengths} it is "
    "lengths[0] = {first} wide, the first row's length; it is as wide as the longest, "
    "max(lengths) = {T} (a batch need not be sorted longest first).",
    "mask-last-token-only": "only each row's last real position, lengths[b] - 1, is True: every "
    "position before lengths[b] is a real token, positions < lengths[:, None].",
    "mask-off-by-one": "off by one: row b has lengths[b] real tokens, positions 0 .. lengths[b] - "
    "1, so the test is `position < length`, not `position <= length` nor `position < length + 1`.",
    "mask-max-len-ignored": "with max_len=7 your mask is as wide as the longest row, not 7: "
    "max_len is ignored, or taken as a cap (min(max_len, max(lengths))). The mask is max_len "
    "wide, as wide as a batch padded (or cut) to a fixed length.",
}

MESSAGES = {
    "pad-not-a-pair": "return exactly the tuple (padded, lengths); yours returned a {kind}.",
    "pad-not-a-pair-of": "return exactly the tuple (padded, lengths); yours returned a {kind} "
    "of {size}.",
    "pad-batch-not-tensor": "the padded batch should be a tensor, got {kind}.",
    "pad-lengths-not-tensor": "the lengths should be a tensor (B,) of dtype long, got {kind}.",
    "pad-shape": "for {B} sequences of lengths {lengths} the batch should have shape (B, T) = "
    "({B}, {T}), got {shape}.",
    "pad-dtype": "the batch has dtype {dtype}; token ids are integers, use torch.long (an "
    "nn.Embedding refuses floats).",
    "pad-lengths-shape": "lengths should have shape (B,) = ({B},), got {shape}.",
    "pad-lengths-differ": "lengths should be {want}, got {got}.",
    "pad-lengths-dtype": "lengths have dtype {dtype}; use torch.long, as the mask expects.",
    "pad-differs": "for {seqs} the batch should be\n{want}\nyours is\n{got}",
    "pad-value-differs": "with pad_value={pad} the batch should be\n{want}\nyours is\n{got}",
    "pad-one-sequence": "one sequence alone should come back as a (1, 3) batch with lengths [3], "
    "got {got} and {lengths}.",
    "mask-not-tensor": "the mask should be a tensor (B, T) of bools, got {kind}.",
    "mask-shape": "for lengths {lengths} the mask should have shape ({B}, {T}), got {shape}.",
    "mask-dtype": "the mask should have dtype torch.bool, got {dtype}.",
    "mask-differs": "for lengths {lengths} the mask should be\n{want}\nyours is\n{got}\nThe "
    "first row that differs is row {b}: its sentence has {n} real tokens, so positions 0..{n} - 1 "
    "are True and the rest False; yours is True at {true}.",
    "mask-empty-row": "for lengths [2, 0, 3], with a row of length 0 (all padding), the mask "
    "should be\n{want}\nyours is\n{got}\nA row of length 0 has no real token: all False.",
    "mask-max-len-differs": "with max_len=7 the mask should be\n{want}",
}

# --- pad_sequences --------------------------------------------------------------------------------

# The longest sequence is in the middle, not first: a batch as wide as its first row is a mistake.
_SEQS = [
    [5, 6, 7],
    [14, 15],
    [9, 10, 11, 12, 13],
    [8],
]  # widths: first, max(), longest, last differ


def _padded_and_lengths(result: object) -> tuple[Tensor, Tensor]:
    if isinstance(result, Tensor):
        raise Wrong.named(MISTAKES, "pad-no-lengths", kind=type(result).__name__)
    if not unpacks_to(result, 2):  # a pair unpacks alike
        if isinstance(result, (tuple, list)):
            raise Wrong.differs(MESSAGES, "pad-not-a-pair-of", kind=type(result).__name__,
                                size=len(result))  # fmt: skip
        raise Wrong.differs(MESSAGES, "pad-not-a-pair", kind=type(result).__name__)
    padded, lengths = result
    if not isinstance(padded, Tensor):
        raise Wrong.differs(MESSAGES, "pad-batch-not-tensor", kind=type(padded).__name__)
    if not isinstance(lengths, Tensor):
        raise Wrong.differs(MESSAGES, "pad-lengths-not-tensor", kind=type(lengths).__name__)
    return padded, lengths


@check("pad_sequences", call="fn(seqs, pad_value=0)")
def check_pad_sequences(fn: Callable[..., tuple[Tensor, Tensor]]) -> Verdict:
    """``fn(seqs, pad_value=0) -> (padded, lengths)``: ``seqs`` is a list of ``B`` lists of token
    ids; ``padded`` ``(B, T)`` long, each row its ids then ``pad_value`` up to the longest length
    ``T``; ``lengths`` ``(B,)`` long, the real length of each row."""
    seqs: Sequence[list[int]] = [list(s) for s in _SEQS]
    B, T = len(seqs), max(len(s) for s in seqs)
    want, want_lengths = pad_sequences(seqs, pad_value=0)
    given = [list(s) for s in seqs]
    padded, lengths = _padded_and_lengths(fn(given))
    if given != seqs:
        raise Wrong.named(MISTAKES, "pad-changed-input", want=seqs, got=given)
    if padded.dim() == 1 and lengths.dim() == 2:
        raise Wrong.named(MISTAKES, "pad-pair-swapped")
    if tuple(padded.shape) == (B, T + 1):
        raise Wrong.named(MISTAKES, "pad-one-too-wide", width=T + 1, T=T)
    if tuple(padded.shape) == (T, B):
        raise Wrong.named(MISTAKES, "pad-time-first", shape=tuple(padded.shape), B=B, T=T)
    if padded.dim() == 2 and padded.shape[0] == B and padded.shape[1] == len(seqs[0]) < T:
        raise Wrong.named(MISTAKES, "pad-first-width", width=padded.shape[1], T=T)
    largest = max(seqs)
    if padded.dim() == 2 and padded.shape[1] == len(largest) != T:
        raise Wrong.named(MISTAKES, "pad-width-of-max-list", width=len(largest), T=T,
                          largest=largest)  # fmt: skip
    if tuple(padded.shape) != (B, T):
        raise Wrong.differs(MESSAGES, "pad-shape", B=B, T=T, lengths=[len(s) for s in seqs],
                             shape=tuple(padded.shape))  # fmt: skip
    if padded.dtype != torch.long:
        raise Wrong.differs(MESSAGES, "pad-dtype", dtype=padded.dtype)
    if tuple(lengths.shape) != (B,):
        raise Wrong.differs(MESSAGES, "pad-lengths-shape", B=B, shape=tuple(lengths.shape))
    if torch.equal(lengths.long(), torch.full((B,), T)):
        raise Wrong.named(MISTAKES, "pad-lengths-width", T=T, want=want_lengths.tolist())
    _expect_lengths(lengths, want_lengths)
    if lengths.dtype != torch.long:
        raise Wrong.differs(MESSAGES, "pad-lengths-dtype", dtype=lengths.dtype)
    left = torch.stack([torch.cat([want[b, len(s) :], want[b, : len(s)]]) for b, s in
                        enumerate(seqs)])  # fmt: skip
    if torch.equal(padded, left):
        raise Wrong.named(MISTAKES, "pad-left", want=want[1].tolist(), got=left[1].tolist())
    if not torch.equal(padded, want):
        raise Wrong.differs(MESSAGES, "pad-differs", seqs=seqs, want=want, got=padded)
    _expect_pad_value(fn, seqs, want, want_lengths)
    _expect_one_sequence(fn)
    _expect_lengths_from_sequences(fn)
    _expect_real_zero(fn)
    return "right-padded, batch first, dtype long, with the real lengths and any pad value."


def _expect_lengths(lengths: Tensor, want: Tensor) -> None:
    """The real lengths, in the order of the sequences; otherwise what they are."""
    got, right = lengths.long(), want.tolist()
    if torch.equal(got, want - 1):
        raise Wrong.named(MISTAKES, "pad-lengths-minus-one", got=got.tolist(), want=right)
    if got.tolist() == sorted(right, reverse=True) != right:
        raise Wrong.named(MISTAKES, "pad-sorted", got=got.tolist(), want=right)
    if not torch.equal(got, want):
        raise Wrong.differs(MESSAGES, "pad-lengths-differ", want=right, got=got.tolist())


def _expect_pad_value(fn: Callable, seqs: list, want: Tensor, want_lengths: Tensor) -> None:
    """A pad id other than 0 must be used for the padding, and leave the lengths alone."""
    B, T = want.shape
    pad = 3  # a pad id other than 0: the argument must be used
    want3, _ = pad_sequences(seqs, pad_value=pad)
    padded3, lengths3 = _padded_and_lengths(fn([list(s) for s in seqs], pad_value=pad))
    if tuple(padded3.shape) == (B, T) and torch.equal(padded3, want):
        raise Wrong.named(MISTAKES, "pad-value-ignored", pad=pad)
    if tuple(padded3.shape) != (B, T) or not torch.equal(padded3, want3):
        raise Wrong.differs(MESSAGES, "pad-value-differs", pad=pad, want=want3, got=padded3)
    if not torch.equal(lengths3.long(), want_lengths):
        raise Wrong.named(MISTAKES, "pad-lengths-from-batch", pad=pad, got=lengths3.tolist(),
                          want=want_lengths.tolist())  # fmt: skip


def _expect_lengths_from_sequences(fn: Callable) -> None:
    """A real token may equal the pad value: the lengths come from the sequences themselves."""
    seqs = [[5, 3, 7], [3], [9, 10, 3, 12]]  # id 3 is a real token here, and the pad value
    padded, lengths = _padded_and_lengths(fn([list(s) for s in seqs], pad_value=3))
    want = [len(s) for s in seqs]
    if lengths.tolist() != want:
        counted = (padded != 3).sum(-1).tolist() if padded.dim() == 2 else None
        if lengths.tolist() == counted:
            raise Wrong.named(MISTAKES, "pad-lengths-counted", seqs=seqs, got=lengths.tolist(),
                              want=want)  # fmt: skip
        raise Wrong.differs(MESSAGES, "pad-lengths-differ", want=want, got=lengths.tolist())


def _expect_real_zero(fn: Callable) -> None:
    """Token id 0 may be a real token: the default pad value must not make it padding."""
    seqs = [[5, 0, 7], [0], [9, 10, 0, 12]]
    want, want_lengths = pad_sequences(seqs)
    padded, lengths = _padded_and_lengths(fn([list(s) for s in seqs]))
    if lengths.tolist() != want_lengths.tolist():
        if lengths.tolist() == [sum(t != 0 for t in s) for s in seqs]:
            raise Wrong.named(MISTAKES, "pad-lengths-nonzero", seqs=seqs, got=lengths.tolist(),
                              want=want_lengths.tolist())  # fmt: skip
        raise Wrong.differs(MESSAGES, "pad-lengths-differ", want=want_lengths.tolist(),
                            got=lengths.tolist())  # fmt: skip
    if tuple(padded.shape) != tuple(want.shape) or not torch.equal(padded, want):
        raise Wrong.differs(MESSAGES, "pad-differs", seqs=seqs, want=want, got=padded)


def _expect_one_sequence(fn: Callable) -> None:
    """A batch of one sequence is a (1, T) batch."""
    one, one_lengths = _padded_and_lengths(fn([[4, 5, 6]]))
    if one.tolist() != [[4, 5, 6]] or one_lengths.tolist() != [3]:
        raise Wrong.differs(MESSAGES, "pad-one-sequence", got=one.tolist(),
                             lengths=one_lengths.tolist())  # fmt: skip


# --- padding_mask ---------------------------------------------------------------------------------


@check("padding_mask", call="fn(lengths, max_len=None)")
def check_padding_mask(fn: Callable[..., Tensor]) -> Verdict:
    """``fn(lengths, max_len=None) -> (B, T)`` bool: True at the real tokens of each row (the
    first ``lengths[b]`` positions), False on padding; ``T = max_len``, or ``max(lengths)``."""
    lengths = torch.tensor([3, 1, 6, 2])  # B = 4 is neither T = 6 nor T - 1 nor T + 1
    B, T = len(lengths), int(lengths.max())
    want = padding_mask(lengths)
    given = lengths.clone()
    got = fn(given)
    expect_kept({"lengths": given}, {"lengths": lengths})
    if not isinstance(got, Tensor):
        raise Wrong.differs(MESSAGES, "mask-not-tensor", kind=type(got).__name__)
    _expect_mask_shape(got, lengths)
    if got.dtype != torch.bool:
        values = got.long() if not got.dtype.is_floating_point else got.round().long()
        if torch.equal(values, want.long()):
            raise Wrong.named(MISTAKES, "mask-ints", dtype=got.dtype)
        raise Wrong.differs(MESSAGES, "mask-dtype", dtype=got.dtype)
    if torch.equal(got, ~want):
        raise Wrong.named(MISTAKES, "mask-polarity")
    positions = torch.arange(T)
    if torch.equal(got, positions[None, :] <= lengths[:, None]):
        raise Wrong.named(MISTAKES, "mask-off-by-one")
    if torch.equal(got, (positions[None, :] >= 1) & (positions[None, :] <= lengths[:, None])):
        raise Wrong.named(MISTAKES, "mask-shifted")
    if torch.equal(got, positions[None, :] < lengths[:, None] - 1):
        raise Wrong.named(MISTAKES, "mask-one-short", lengths=lengths.tolist(),
                          got=got.sum(-1).tolist())  # fmt: skip
    if torch.equal(got, positions[None, :] == lengths[:, None] - 1):
        raise Wrong.named(MISTAKES, "mask-last-token-only")
    if torch.equal(got, positions[None, :] >= T - lengths[:, None]):
        raise Wrong.named(MISTAKES, "mask-right-aligned")
    if not torch.equal(got, want) and sorted(got.tolist()) == sorted(want.tolist()):
        raise Wrong.named(MISTAKES, "mask-rows-sorted", lengths=lengths.tolist())
    if not torch.equal(got, want):
        b = int((got != want).any(-1).nonzero()[0])  # the first row that differs
        raise Wrong.differs(MESSAGES, "mask-differs", lengths=lengths.tolist(), want=want.int(),
                            got=got.int(), b=b, n=int(lengths[b]),
                            true=got[b].nonzero().flatten().tolist())  # fmt: skip
    wide = fn(lengths.clone(), max_len=7)
    if isinstance(wide, Tensor) and tuple(wide.shape) == (B, T):
        raise Wrong.named(MISTAKES, "mask-max-len-ignored")
    if isinstance(wide, Tensor) and tuple(wide.shape) == (B, 8):
        raise Wrong.named(MISTAKES, "mask-max-len-plus-one")
    if not (isinstance(wide, Tensor) and torch.equal(wide, padding_mask(lengths, 7))):
        raise Wrong.differs(MESSAGES, "mask-max-len-differs", want=padding_mask(lengths, 7).int())
    empty = torch.tensor([2, 0, 3])  # a row of length 0: all padding
    got = fn(empty.clone())
    if not (isinstance(got, Tensor) and torch.equal(got, padding_mask(empty))):
        raise Wrong.differs(MESSAGES, "mask-empty-row", want=padding_mask(empty).int(),
                            got=got.int() if isinstance(got, Tensor) else got)  # fmt: skip
    return "True at the real tokens, False on padding, (B, T) bool, and max_len is honoured."


def _expect_mask_shape(got: Tensor, lengths: Tensor) -> None:
    """The mask is (B, T), T the longest length; a shape that shows its slip is named."""
    B, T = len(lengths), int(lengths.max())
    if tuple(got.shape) == (T, B) and tuple(got.shape) != (B, T):
        raise Wrong.named(MISTAKES, "mask-time-first", shape=tuple(got.shape), B=B, T=T)
    if tuple(got.shape) == (B, B) and B != T:
        raise Wrong.named(MISTAKES, "mask-width-batch", shape=tuple(got.shape), B=B, T=T)
    if tuple(got.shape) == (B, T, 1):
        raise Wrong.named(MISTAKES, "mask-extra-axis", shape=tuple(got.shape), B=B, T=T)
    if tuple(got.shape) == (B, T + 1):
        raise Wrong.named(MISTAKES, "mask-one-too-wide", width=T + 1, T=T)
    if tuple(got.shape) == (B, int(lengths[0])) and int(lengths[0]) != T:
        raise Wrong.named(MISTAKES, "mask-width-first-row", shape=tuple(got.shape),
                          lengths=lengths.tolist(), first=int(lengths[0]), T=T)  # fmt: skip
    if tuple(got.shape) == (B, 1, 1, T):
        raise Wrong.named(MISTAKES, "mask-attention-shape", shape=tuple(got.shape), B=B, T=T)
    if tuple(got.shape) != (B, T):
        raise Wrong.differs(MESSAGES, "mask-shape", lengths=lengths.tolist(), B=B, T=T,
                             shape=tuple(got.shape))  # fmt: skip
