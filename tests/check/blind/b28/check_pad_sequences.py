"""Blind set B28, check_pad_sequences (chapter 1): padding lists of token ids as readers do it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_pad_sequences"


# ---------------------------------------------------------------- mistakes


def pad_returns_only_batch(seqs: list[list[int]], pad_value: int = 0) -> Tensor:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded  # the lengths can be recomputed later


def pad_width_of_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(seqs[0])  # every row as wide as the first sentence
    rows = [s[:T] + [pad_value] * (T - len(s[:T])) for s in seqs]
    lengths = torch.tensor([min(len(s), T) for s in seqs], dtype=torch.long)
    return torch.tensor(rows, dtype=torch.long), lengths


def pad_time_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = torch.nn.utils.rnn.pad_sequence(tensors, padding_value=pad_value)  # (T, B)
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    return padded, lengths


def pad_sorted_by_length(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    # longest first, as pack_padded_sequence likes it
    seqs = sorted(seqs, key=len, reverse=True)
    T = len(seqs[0])
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def pad_lengths_from_batch(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    lengths = (padded != pad_value).sum(dim=1)  # count the non-pad ids, as the mask does
    return padded, lengths


def pad_extends_inputs(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    for s in seqs:
        s.extend([pad_value] * (T - len(s)))  # pad each list where it is
    return torch.tensor(seqs, dtype=torch.long), lengths


def pad_lengths_after_padding(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    lengths = torch.tensor([len(r) for r in rows], dtype=torch.long)
    return torch.tensor(rows, dtype=torch.long), lengths


def pad_float_zeros(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T) + pad_value
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_extra_column(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs) + 1  # room for the <eos> at the end
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def pad_default_minus_100(seqs: list[list[int]], pad_value: int = -100) -> tuple[Tensor, Tensor]:
    # -100 is what cross_entropy ignores, so I made it the default
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def pad_lengths_column(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    lengths = torch.tensor([[len(s)] for s in seqs], dtype=torch.long)  # (B, 1) to broadcast
    return padded, lengths


def pad_lengths_list(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, list[int]]:
    T = max(len(s) for s in seqs)
    padded = torch.tensor([s + [pad_value] * (T - len(s)) for s in seqs], dtype=torch.long)
    return padded, [len(s) for s in seqs]


# ---------------------------------------------------------------- correct variants


def pad_with_torch_utility(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.as_tensor(s, dtype=torch.long) for s in seqs]
    padded = torch.nn.utils.rnn.pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    lengths = torch.tensor([t.numel() for t in tensors], dtype=torch.long)
    return padded, lengths


def pad_with_f_pad(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.int64)
    T = int(lengths.max())
    rows = [
        F.pad(torch.tensor(s, dtype=torch.int64), (0, T - len(s)), value=pad_value) for s in seqs
    ]
    return torch.stack(rows), lengths


def pad_pure_python(
    seqs: list[list[int]], pad_value: int = 0, max_len: int | None = None
) -> tuple[Tensor, Tensor]:
    """Lists first, one tensor at the end; an optional max_len cuts and fixes the width."""
    cut = [list(s)[:max_len] if max_len is not None else list(s) for s in seqs]
    width = max_len if max_len is not None else max(len(s) for s in cut)
    rows = [s + [pad_value] * (width - len(s)) for s in cut]
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in cut])


def pad_with_mask_where(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs])
    T = int(lengths.max())
    real = torch.arange(T)[None, :] < lengths[:, None]  # (B, T)
    flat = torch.tensor([i for s in seqs for i in s], dtype=torch.long)
    padded = torch.full(real.shape, pad_value, dtype=torch.long)
    padded[real] = flat  # row-major order fills each row from the left
    return padded, lengths


CASES = [
    BlindCase(
        CHECK,
        "returns_only_batch",
        pad_returns_only_batch,
        "mistake",
        "I returned just the padded batch, not the pair (padded, lengths).",
    ),
    BlindCase(
        CHECK,
        "width_of_first_sequence",
        pad_width_of_first,
        "mistake",
        "I took T from the first sentence, so longer sentences later in the list get cut.",
    ),
    BlindCase(
        CHECK,
        "pad_sequence_time_first",
        pad_time_first,
        "mistake",
        "I used torch's pad_sequence but forgot batch_first=True, so I get (T, B).",
    ),
    BlindCase(
        CHECK,
        "sorted_by_length",
        pad_sorted_by_length,
        "mistake",
        "I sorted the sentences longest first before padding, so the rows are no longer in "
        "the order they came in.",
    ),
    BlindCase(
        CHECK,
        "lengths_counted_from_batch",
        pad_lengths_from_batch,
        "mistake",
        "I counted the lengths as the ids that differ from pad_value, so a real token equal "
        "to the pad value is not counted.",
    ),
    BlindCase(
        CHECK,
        "extends_input_lists",
        pad_extends_inputs,
        "mistake",
        "I padded by extending the caller's lists in place; the result is right once, but the "
        "lists I was given are now padded too.",
    ),
    BlindCase(
        CHECK,
        "lengths_after_padding",
        pad_lengths_after_padding,
        "mistake",
        "I measured the lengths after padding the rows, so every length is T.",
    ),
    BlindCase(
        CHECK,
        "float_batch",
        pad_float_zeros,
        "mistake",
        "I started from torch.zeros(B, T) + pad_value, so the batch comes out float.",
    ),
    BlindCase(
        CHECK,
        "extra_column",
        pad_extra_column,
        "mistake",
        "I made the batch one column wider than the longest sentence, for an <eos>.",
    ),
    BlindCase(
        CHECK,
        "default_pad_minus_100",
        pad_default_minus_100,
        "mistake",
        "I made -100 the default pad_value, the index cross_entropy ignores, instead of 0.",
    ),
    BlindCase(
        CHECK,
        "lengths_as_column",
        pad_lengths_column,
        "mistake",
        "I returned the lengths as a (B, 1) column so they broadcast later.",
    ),
    BlindCase(
        CHECK,
        "lengths_as_list",
        pad_lengths_list,
        "mistake",
        "I returned the lengths as a Python list instead of a tensor.",
    ),
    BlindCase(
        CHECK,
        "torch_pad_sequence",
        pad_with_torch_utility,
        "correct",
        "torch.nn.utils.rnn.pad_sequence with batch_first=True and padding_value.",
    ),
    BlindCase(
        CHECK,
        "f_pad_then_stack",
        pad_with_f_pad,
        "correct",
        "Each row padded on the right with F.pad, then stacked.",
    ),
    BlindCase(
        CHECK,
        "pure_python_with_max_len",
        pad_pure_python,
        "correct",
        "Padded as Python lists and turned into a tensor at the end; an extra max_len argument "
        "that defaults to None.",
    ),
    BlindCase(
        CHECK,
        "boolean_index_fill",
        pad_with_mask_where,
        "correct",
        "A batch full of pad_value, and all the ids written at once through the mask of real "
        "positions.",
    ),
]
