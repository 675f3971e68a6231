"""Blind set B18, check_pad_sequences (chapter 1): padding lists of token ids as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_pad_sequences"


# ---------------------------------------------------------------- mistakes


def pad_left(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [[pad_value] * (T - len(s)) + list(s) for s in seqs]  # pad in front
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_width_of_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(seqs[0])  # all rows as wide as the first one
    rows = [list(s)[:T] + [pad_value] * (T - len(s)) for s in seqs]
    lengths = torch.tensor([min(len(s), T) for s in seqs], dtype=torch.long)
    return torch.tensor(rows, dtype=torch.long), lengths


def pad_float_batch(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    B, T = len(seqs), max(len(s) for s in seqs)
    padded = torch.full((B, T), float(pad_value))  # float32, torch.full's default
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_ignores_pad_value(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    B, T = len(seqs), max(len(s) for s in seqs)
    padded = torch.zeros(B, T, dtype=torch.long)  # <pad> is id 0 anyway
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def pad_time_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = torch.nn.utils.rnn.pad_sequence(tensors, padding_value=pad_value)  # (T, B)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def pad_sorted_by_length(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    seqs = sorted(seqs, key=len, reverse=True)  # longest first, as packing wants
    T = len(seqs[0])
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_float_lengths(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    lengths = torch.Tensor([len(s) for s in seqs])  # torch.Tensor makes float32
    return torch.LongTensor(rows), lengths


def pad_lengths_of_rows(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs])
    lengths = torch.tensor([len(row) for row in padded], dtype=torch.long)  # after padding
    return padded, lengths


def pad_returns_swapped(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs])
    lengths = torch.tensor([len(s) for s in seqs])
    return lengths, padded  # lengths first


def pad_extends_inputs(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    for s in seqs:
        s.extend([pad_value] * (T - len(s)))  # pads the caller's lists in place
    return torch.tensor(seqs, dtype=torch.long), lengths


def pad_one_extra_column(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs) + 1  # room for at least one <pad> in every row
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


# ---------------------------------------------------------------- correct variants


def pad_with_pad_sequence(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.as_tensor(s, dtype=torch.long) for s in seqs]
    padded = torch.nn.utils.rnn.pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    lengths = torch.tensor([t.numel() for t in tensors], dtype=torch.long)
    return padded, lengths


def pad_with_f_pad(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.int64)
    T = int(lengths.max().item())
    rows = [
        F.pad(torch.tensor(s, dtype=torch.int64), (0, T - len(s)), value=pad_value) for s in seqs
    ]
    return torch.stack(rows), lengths


def pad_with_mask_fill(
    seqs: list[list[int]], pad_value: int = 0, max_len: int | None = None
) -> tuple[Tensor, Tensor]:
    """Scatter the ids through a boolean mask; an optional max_len defaults to the longest."""
    lengths = torch.tensor([len(s) for s in seqs])
    T = int(lengths.max()) if max_len is None else max_len
    real = torch.arange(T)[None, :] < lengths[:, None]  # (B, T)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    padded[real] = torch.tensor([i for s in seqs for i in s], dtype=torch.long)
    return padded, lengths


def pad_python_lists(seqs, pad_value=0):
    longest = 0
    for s in seqs:
        longest = max(longest, len(s))
    rows, lengths = [], []
    for s in seqs:
        row = list(s)
        lengths.append(len(row))
        while len(row) < longest:
            row.append(pad_value)
        rows.append(row)
    return torch.LongTensor(rows), torch.LongTensor(lengths)


CASES = [
    BlindCase(
        CHECK,
        "pad_left",
        pad_left,
        "mistake",
        "I put the padding in front of the tokens, so every row ends at the last column.",
    ),
    BlindCase(
        CHECK,
        "width_of_first_sequence",
        pad_width_of_first,
        "mistake",
        "I took T from the first sequence, so longer sequences later in the list get cut.",
    ),
    BlindCase(
        CHECK,
        "float_batch",
        pad_float_batch,
        "mistake",
        "I made the batch with torch.full and a float fill, so the ids come back as float32.",
    ),
    BlindCase(
        CHECK,
        "ignores_pad_value",
        pad_ignores_pad_value,
        "mistake",
        "I started from torch.zeros since <pad> is 0, so another pad_value is never used.",
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
        "sorted_by_length",
        pad_sorted_by_length,
        "mistake",
        "I sorted the sequences longest first (as packing wants), which reorders the rows.",
    ),
    BlindCase(
        CHECK,
        "float_lengths",
        pad_float_lengths,
        "mistake",
        "I built the lengths with torch.Tensor(...), which gives float32 instead of long.",
    ),
    BlindCase(
        CHECK,
        "lengths_after_padding",
        pad_lengths_of_rows,
        "mistake",
        "I counted the lengths on the padded rows, so every length is T.",
    ),
    BlindCase(
        CHECK,
        "returns_lengths_first",
        pad_returns_swapped,
        "mistake",
        "I return (lengths, padded) instead of (padded, lengths).",
    ),
    BlindCase(
        CHECK,
        "extends_input_lists",
        pad_extends_inputs,
        "mistake",
        "I padded the given lists in place with extend, so the caller's sequences change.",
    ),
    BlindCase(
        CHECK,
        "one_extra_column",
        pad_one_extra_column,
        "mistake",
        "I made the batch one column wider than the longest sequence so every row ends in <pad>.",
    ),
    BlindCase(
        CHECK,
        "nn_pad_sequence",
        pad_with_pad_sequence,
        "correct",
        "nn.utils.rnn.pad_sequence with batch_first=True and padding_value.",
    ),
    BlindCase(
        CHECK,
        "f_pad_and_stack",
        pad_with_f_pad,
        "correct",
        "Each row padded on the right with F.pad, then torch.stack.",
    ),
    BlindCase(
        CHECK,
        "mask_scatter_with_max_len",
        pad_with_mask_fill,
        "correct",
        "A full batch of pad_value, the ids written through a boolean mask; an extra max_len "
        "argument that defaults to None.",
    ),
    BlindCase(
        CHECK,
        "python_lists",
        pad_python_lists,
        "correct",
        "Plain Python lists padded with a while loop, then torch.LongTensor; no type hints.",
    ),
]
