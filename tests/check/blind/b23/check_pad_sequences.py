"""Blind set B23, check_pad_sequences (chapter 1): padding lists of token ids as readers do it."""

from __future__ import annotations

import itertools

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_pad_sequences"


# ---------------------------------------------------------------- mistakes


def pad_time_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = torch.nn.utils.rnn.pad_sequence(tensors, padding_value=pad_value)  # PyTorch does it
    return padded, torch.tensor([len(s) for s in seqs])


def pad_left(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [[pad_value] * (T - len(s)) + list(s) for s in seqs]  # pad in front, tokens at the end
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_float_zeros(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T) + pad_value  # (B, T)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_ignores_pad_value(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T, dtype=torch.long)  # <pad> is id 0 anyway
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_lexicographic_max(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(max(seqs))  # the longest sequence
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        n = min(len(s), T)
        padded[b, :n] = torch.tensor(s[:n])
    return padded, torch.tensor([len(s) for s in seqs])


def pad_lengths_all_T(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    lengths = torch.tensor([padded.shape[1]] * len(seqs))  # the length of each padded row
    return padded, lengths


def pad_returns_swapped(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs])
    padded = torch.full((len(seqs), int(lengths.max())), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return lengths, padded


def pad_lengths_float(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.Tensor([len(s) for s in seqs])  # (B,)


def pad_one_extra_column(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs) + 1  # room for one <pad> after the longest, too
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


def pad_aliased_rows(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [[pad_value] * T] * len(seqs)  # B rows of T pads
    for b, s in enumerate(seqs):
        rows[b][: len(s)] = s
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_extends_input(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs])
    T = int(lengths.max())
    for s in seqs:
        s.extend([pad_value] * (T - len(s)))  # make every list T long
    return torch.tensor(seqs, dtype=torch.long), lengths


def pad_first_row_width(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(seqs[0])
    rows = [(list(s) + [pad_value] * T)[:T] for s in seqs]  # fill up, then cut to the width
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


# ---------------------------------------------------------------- correct variants


def pad_with_torch_utils(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.as_tensor(s, dtype=torch.long) for s in seqs]
    padded = torch.nn.utils.rnn.pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    lengths = torch.tensor([t.numel() for t in tensors], dtype=torch.long)
    return padded, lengths


def pad_with_f_pad(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor(list(map(len, seqs)), dtype=torch.long)
    T = int(lengths.max())
    rows = [
        F.pad(torch.tensor(s, dtype=torch.long), (0, T - len(s)), value=pad_value) for s in seqs
    ]
    return torch.stack(rows), lengths


def pad_zip_longest(
    seqs: list[list[int]], pad_value: int = 0, max_len: int | None = None
) -> tuple[Tensor, Tensor]:
    if max_len is not None:
        seqs = [s[:max_len] for s in seqs]
    columns = list(itertools.zip_longest(*seqs, fillvalue=pad_value))  # (T, B)
    padded = torch.tensor(columns, dtype=torch.long).T.contiguous()  # (B, T)
    if max_len is not None and padded.shape[1] < max_len:
        padded = F.pad(padded, (0, max_len - padded.shape[1]), value=pad_value)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def pad_masked_scatter(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    real = torch.arange(T)[None, :] < lengths[:, None]  # (B, T)
    padded = torch.full(real.shape, pad_value, dtype=torch.long)
    padded[real] = torch.tensor([tok for s in seqs for tok in s], dtype=torch.long)  # row-major
    return padded, lengths


CASES = [
    BlindCase(
        CHECK,
        "time_first",
        pad_time_first,
        "mistake",
        "I used torch's pad_sequence and forgot batch_first=True, so I got (T, B)",
    ),
    BlindCase(
        CHECK,
        "pad_left",
        pad_left,
        "mistake",
        "I put the padding in front of the tokens instead of after them",
    ),
    BlindCase(
        CHECK,
        "float_zeros",
        pad_float_zeros,
        "mistake",
        "I started from torch.zeros, so the batch came out float instead of long",
    ),
    BlindCase(
        CHECK,
        "ignores_pad_value",
        pad_ignores_pad_value,
        "mistake",
        "I always filled with 0 since <pad> is id 0, ignoring pad_value",
    ),
    BlindCase(
        CHECK,
        "lexicographic_max",
        pad_lexicographic_max,
        "mistake",
        "I took len(max(seqs)) as the width; max compares lists, it is not the longest",
    ),
    BlindCase(
        CHECK,
        "lengths_all_T",
        pad_lengths_all_T,
        "mistake",
        "I returned the width of the padded rows as every length",
    ),
    BlindCase(
        CHECK,
        "returns_swapped",
        pad_returns_swapped,
        "mistake",
        "I returned (lengths, padded) instead of (padded, lengths)",
    ),
    BlindCase(
        CHECK,
        "lengths_float",
        pad_lengths_float,
        "mistake",
        "I built the lengths with torch.Tensor(...), which makes them float",
    ),
    BlindCase(
        CHECK,
        "one_extra_column",
        pad_one_extra_column,
        "mistake",
        "I made the batch one column wider than the longest sequence",
    ),
    BlindCase(
        CHECK,
        "sorted_by_length",
        pad_sorted_by_length,
        "mistake",
        "I sorted the sequences longest first before padding, so the rows are reordered",
    ),
    BlindCase(
        CHECK,
        "aliased_rows",
        pad_aliased_rows,
        "mistake",
        "I made the rows with [[pad] * T] * B, so every row is the same list",
    ),
    BlindCase(
        CHECK,
        "extends_input",
        pad_extends_input,
        "mistake",
        "I padded by extending the caller's lists in place",
    ),
    BlindCase(
        CHECK,
        "first_row_width",
        pad_first_row_width,
        "mistake",
        "I took the width from the first sequence and cut the others to it",
    ),
    BlindCase(
        CHECK,
        "torch_utils",
        pad_with_torch_utils,
        "correct",
        "torch.nn.utils.rnn.pad_sequence with batch_first=True and padding_value",
    ),
    BlindCase(
        CHECK,
        "f_pad_stack",
        pad_with_f_pad,
        "correct",
        "F.pad on each row to the longest length, then torch.stack",
    ),
    BlindCase(
        CHECK,
        "zip_longest",
        pad_zip_longest,
        "correct",
        "itertools.zip_longest gives the columns, then I transpose; optional max_len",
    ),
    BlindCase(
        CHECK,
        "masked_scatter",
        pad_masked_scatter,
        "correct",
        "a full pad tensor and the flattened tokens written at the True cells of a mask",
    ),
]
