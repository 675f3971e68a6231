"""Blind set B22, check_pad_sequences (chapter 1): padding lists of token ids as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn.utils.rnn import pad_sequence

from .. import BlindCase

CHECK = "check_pad_sequences"

# ---------------------------------------------------------------- mistakes


def pad_width_of_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(seqs[0])  # the batch is as wide as its first sentence
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : min(len(s), T)] = torch.tensor(s[:T], dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_left(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [[pad_value] * (T - len(s)) + list(s) for s in seqs]  # pad in front
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_zeros_always(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T, dtype=torch.long)  # <pad> is 0 anyway
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_float_batch(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T) + pad_value  # float32 by default
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.float)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_time_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, padding_value=pad_value)  # forgot batch_first=True
    return padded, torch.tensor([len(s) for s in seqs])


def pad_returns_lengths_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    lengths = torch.tensor([len(s) for s in seqs])
    return lengths, padded


def pad_lengths_are_width(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    lengths = torch.tensor([row.numel() for row in padded])  # length of each row
    return padded, lengths


def pad_extra_column(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs) + 1  # one more slot so every row ends with a pad
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_sorted_longest_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    seqs = sorted(seqs, key=len, reverse=True)  # as pack_padded_sequence likes it
    T = len(seqs[0])
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_lengths_last_index(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    lengths = torch.tensor([len(s) - 1 for s in seqs])  # index of the last real token
    return padded, lengths


def pad_lengths_as_list(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, list]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, [len(s) for s in seqs]


# ---------------------------------------------------------------- correct variants


def pad_with_pad_sequence(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.as_tensor(s, dtype=torch.long) for s in seqs]
    lengths = torch.tensor([len(t) for t in tensors], dtype=torch.long)
    return pad_sequence(tensors, batch_first=True, padding_value=pad_value), lengths


def pad_lists_then_tensor(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    longest = max(map(len, seqs))
    rows = [list(s) + [pad_value] * (longest - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor(
        list(map(len, seqs)), dtype=torch.long
    )


def pad_with_f_pad(
    seqs: list[list[int]], pad_value: int = 0, max_len: int | None = None
) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max()) if max_len is None else max_len
    rows = [
        F.pad(torch.tensor(s, dtype=torch.long), (0, T - len(s)), value=pad_value) for s in seqs
    ]
    return torch.stack(rows), lengths


def pad_by_mask(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    real = torch.arange(int(lengths.max()))[None, :] < lengths[:, None]  # (B, T)
    padded = torch.full(real.shape, pad_value, dtype=torch.long)
    padded[real] = torch.tensor([i for s in seqs for i in s], dtype=torch.long)
    return padded, lengths


CASES = [
    BlindCase(
        CHECK,
        "width_of_first",
        pad_width_of_first,
        "mistake",
        "I made the batch as wide as the first sequence, cutting the longer ones.",
    ),
    BlindCase(
        CHECK,
        "pad_left",
        pad_left,
        "mistake",
        "I put the padding in front of the tokens instead of after them.",
    ),
    BlindCase(
        CHECK,
        "zeros_always",
        pad_zeros_always,
        "mistake",
        "I filled with zeros and never used pad_value.",
    ),
    BlindCase(
        CHECK,
        "float_batch",
        pad_float_batch,
        "mistake",
        "I built the batch with torch.zeros, so it is float32, not long.",
    ),
    BlindCase(
        CHECK,
        "time_first",
        pad_time_first,
        "mistake",
        "I used pad_sequence but forgot batch_first=True, so I return (T, B).",
    ),
    BlindCase(
        CHECK,
        "lengths_first",
        pad_returns_lengths_first,
        "mistake",
        "I returned (lengths, padded) instead of (padded, lengths).",
    ),
    BlindCase(
        CHECK,
        "lengths_are_width",
        pad_lengths_are_width,
        "mistake",
        "I took the lengths from the padded rows, so every length is T.",
    ),
    BlindCase(
        CHECK,
        "extra_column",
        pad_extra_column,
        "mistake",
        "I made the batch one column wider than the longest sequence.",
    ),
    BlindCase(
        CHECK,
        "sorted_longest_first",
        pad_sorted_longest_first,
        "mistake",
        "I sorted the sequences longest first before padding, so the rows are reordered.",
    ),
    BlindCase(
        CHECK,
        "lengths_last_index",
        pad_lengths_last_index,
        "mistake",
        "I returned len - 1 (the index of the last token) as the lengths.",
    ),
    BlindCase(
        CHECK,
        "lengths_as_list",
        pad_lengths_as_list,
        "mistake",
        "I returned the lengths as a Python list, not a (B,) long tensor.",
    ),
    BlindCase(
        CHECK,
        "pad_sequence_batch_first",
        pad_with_pad_sequence,
        "correct",
        "torch's pad_sequence with batch_first=True and padding_value.",
    ),
    BlindCase(
        CHECK,
        "lists_then_tensor",
        pad_lists_then_tensor,
        "correct",
        "I padded the Python lists and converted them once.",
    ),
    BlindCase(
        CHECK,
        "f_pad_stack",
        pad_with_f_pad,
        "correct",
        "F.pad on each row then stack, with an optional max_len argument.",
    ),
    BlindCase(
        CHECK,
        "boolean_scatter",
        pad_by_mask,
        "correct",
        "I built a full pad tensor and wrote all ids at once through the real-token mask.",
    ),
]
