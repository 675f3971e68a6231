"""Blind set B19, check_pad_sequences (chapter 1): padding lists of token ids as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_pad_sequences"


# ---------------------------------------------------------------- mistakes


def pad_left(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [[pad_value] * (T - len(s)) + list(s) for s in seqs]  # padding first, tokens last
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_float_batch(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.float)  # default float tensor
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.float)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def pad_width_of_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(seqs[0])  # the batch is as wide as its first sequence
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        s = s[:T]
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def pad_always_zero(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T, dtype=torch.long)  # zeros are the padding
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_returns_lengths_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    padded = torch.full((len(seqs), int(lengths.max())), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return lengths, padded


def pad_time_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = torch.nn.utils.rnn.pad_sequence(tensors, padding_value=pad_value)  # (T, B)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_lengths_padded_width(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    lengths = torch.full((len(seqs),), padded.shape[1], dtype=torch.long)  # the length of a row
    return padded, lengths


def pad_float_lengths(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.float32)  # for averaging later
    return padded, lengths


def pad_extra_column(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs) + 1  # one more column, room for <eos>
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_sorted_by_length(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    seqs = sorted(seqs, key=len, reverse=True)  # longest first, as pack_padded_sequence likes
    T = len(seqs[0])
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_lengths_count_non_pad(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, (padded != 0).sum(dim=1)  # real tokens are the non-zero ones


# ---------------------------------------------------------------- correct variants


def pad_with_torch_utils(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.as_tensor(s, dtype=torch.long) for s in seqs]
    padded = torch.nn.utils.rnn.pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    return padded, torch.tensor([len(t) for t in tensors], dtype=torch.long)


def pad_with_f_pad(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor(list(map(len, seqs)))
    T = int(lengths.max())
    rows = [
        F.pad(torch.tensor(s, dtype=torch.int64), (0, T - len(s)), value=pad_value) for s in seqs
    ]
    return torch.stack(rows), lengths


def pad_python_lists(
    seqs: list[list[int]], pad_value: int = 0, max_len: int | None = None
) -> tuple[Tensor, Tensor]:
    """Pads the Python lists first, then one torch.tensor; an optional max_len with a default."""
    T = max_len if max_len is not None else max(len(s) for s in seqs)
    cut = [list(s)[:T] for s in seqs]
    rows = [s + [pad_value] * (T - len(s)) for s in cut]
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in cut]).long()


def pad_with_mask_scatter(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    mask = torch.arange(T)[None, :] < lengths[:, None]  # (B, T)
    padded = torch.full(mask.shape, pad_value, dtype=torch.long)
    padded[mask] = torch.tensor([i for s in seqs for i in s], dtype=torch.long)
    return padded, lengths


CASES = [
    BlindCase(CHECK, "pad_left", pad_left, "mistake", "I put the padding before the tokens."),
    BlindCase(
        CHECK,
        "float_batch",
        pad_float_batch,
        "mistake",
        "I built the batch with torch.full and a float dtype, so the ids come back as floats.",
    ),
    BlindCase(
        CHECK,
        "width_of_first",
        pad_width_of_first,
        "mistake",
        "I made the batch as wide as the first sequence, cutting longer ones.",
    ),
    BlindCase(
        CHECK,
        "always_zero_padding",
        pad_always_zero,
        "mistake",
        "I started from torch.zeros, so pad_value is never used.",
    ),
    BlindCase(
        CHECK,
        "returns_lengths_first",
        pad_returns_lengths_first,
        "mistake",
        "I return (lengths, padded) instead of (padded, lengths).",
    ),
    BlindCase(
        CHECK,
        "time_first",
        pad_time_first,
        "mistake",
        "I used nn.utils.rnn.pad_sequence without batch_first=True, so the batch is (T, B).",
    ),
    BlindCase(
        CHECK,
        "lengths_are_width",
        pad_lengths_padded_width,
        "mistake",
        "I returned the length of each padded row (all T) instead of the real lengths.",
    ),
    BlindCase(
        CHECK,
        "float_lengths",
        pad_float_lengths,
        "mistake",
        "I made the lengths float32 so that I could divide by them later.",
    ),
    BlindCase(
        CHECK,
        "extra_column",
        pad_extra_column,
        "mistake",
        "I made the batch one column wider than the longest sequence, to leave room for <eos>.",
    ),
    BlindCase(
        CHECK,
        "sorted_by_length",
        pad_sorted_by_length,
        "mistake",
        "I sorted the sequences longest first before padding, so the rows are reordered.",
    ),
    BlindCase(
        CHECK,
        "lengths_count_nonzero",
        pad_lengths_count_non_pad,
        "mistake",
        "I counted the lengths as the non-zero ids of each row, which is wrong when pad_value "
        "is not 0.",
    ),
    BlindCase(
        CHECK,
        "torch_pad_sequence",
        pad_with_torch_utils,
        "correct",
        "nn.utils.rnn.pad_sequence with batch_first=True and padding_value.",
    ),
    BlindCase(
        CHECK,
        "f_pad_rows",
        pad_with_f_pad,
        "correct",
        "Each row padded on the right with F.pad, then torch.stack.",
    ),
    BlindCase(
        CHECK,
        "python_lists_max_len",
        pad_python_lists,
        "correct",
        "Padded as Python lists, then one torch.tensor; an extra max_len=None argument.",
    ),
    BlindCase(
        CHECK,
        "mask_scatter",
        pad_with_mask_scatter,
        "correct",
        "A full batch of pad_value, the concatenated ids written through a boolean mask.",
    ),
]
