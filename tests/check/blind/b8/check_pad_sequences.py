"""Blind set B8, check_pad_sequences (chapter 1): padding lists of token ids into one batch."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn.utils.rnn import pad_sequence

from .. import BlindCase

CHECK = "check_pad_sequences"


# ---------------------------------------------------------------- mistakes


def pad_to_first_length(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(seqs[0])
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        s = s[:T]
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def pad_on_the_left(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [[pad_value] * (T - len(s)) + list(s) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def zeros_then_fill_float(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T) + pad_value
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_value_ignored(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def time_first_pad_sequence(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, padding_value=pad_value)  # batch_first left at its default
    return padded, torch.tensor([len(s) for s in seqs])


def lengths_by_counting_non_pad(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    lengths = (padded != pad_value).sum(dim=1)  # fails when a real token equals pad_value
    return padded, lengths


def lengths_int32(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.int32)


def returns_lengths_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return torch.tensor([len(s) for s in seqs]), padded


def extra_column_for_eos(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs) + 1  # room for <eos>
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def returns_padded_only(seqs: list[list[int]], pad_value: int = 0) -> Tensor:
    T = max(len(s) for s in seqs)
    return torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs], dtype=torch.long)


def lengths_as_python_list(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, list]:
    T = max(len(s) for s in seqs)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), [len(s) for s in seqs]


# ---------------------------------------------------------------- correct variants


def with_torch_pad_sequence(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.as_tensor(s, dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    return padded, torch.tensor([len(t) for t in tensors], dtype=torch.long)


def python_lists_then_tensor(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = [len(s) for s in seqs]
    T = max(lengths)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor(lengths, dtype=torch.long)


def f_pad_each_row(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    rows = [
        F.pad(torch.tensor(s, dtype=torch.long), (0, T - len(s)), value=pad_value) for s in seqs
    ]
    return torch.stack(rows), lengths


def full_then_masked_scatter(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    real = torch.arange(T)[None, :] < lengths[:, None]  # (B, T)
    ids = torch.tensor([t for s in seqs for t in s], dtype=torch.long)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    padded[real] = ids  # row-major order matches the concatenation
    return padded, lengths


CASES = [
    BlindCase(
        CHECK,
        "pad_to_first_length",
        pad_to_first_length,
        "mistake",
        "I took the width from the first sentence (len(seqs[0])) and cut longer ones to it",
    ),
    BlindCase(
        CHECK,
        "pad_on_the_left",
        pad_on_the_left,
        "mistake",
        "I put the padding in front of the tokens (left padding) instead of after them",
    ),
    BlindCase(
        CHECK,
        "zeros_then_fill_float",
        zeros_then_fill_float,
        "mistake",
        "I started from torch.zeros(B, T) + pad_value, so the batch is float32, not long",
    ),
    BlindCase(
        CHECK,
        "pad_value_ignored",
        pad_value_ignored,
        "mistake",
        "I always padded with zeros (torch.zeros) and never used pad_value",
    ),
    BlindCase(
        CHECK,
        "time_first_pad_sequence",
        time_first_pad_sequence,
        "mistake",
        "I used nn.utils.rnn.pad_sequence but forgot batch_first=True, so it is (T, B)",
    ),
    BlindCase(
        CHECK,
        "lengths_by_counting_non_pad",
        lengths_by_counting_non_pad,
        "mistake",
        "I computed the lengths as the count of entries != pad_value in each padded row, "
        "which undercounts when a real token id equals the pad value",
    ),
    BlindCase(
        CHECK,
        "lengths_int32",
        lengths_int32,
        "mistake",
        "I built the lengths tensor with dtype=torch.int32 instead of long",
    ),
    BlindCase(
        CHECK,
        "returns_lengths_first",
        returns_lengths_first,
        "mistake",
        "I returned (lengths, padded) instead of (padded, lengths)",
    ),
    BlindCase(
        CHECK,
        "extra_column_for_eos",
        extra_column_for_eos,
        "mistake",
        "I made the batch one column wider than the longest sentence, to leave room for <eos>",
    ),
    BlindCase(
        CHECK,
        "returns_padded_only",
        returns_padded_only,
        "mistake",
        "I returned only the padded tensor and forgot the lengths",
    ),
    BlindCase(
        CHECK,
        "lengths_as_python_list",
        lengths_as_python_list,
        "mistake",
        "I returned the lengths as a Python list instead of a (B,) long tensor",
    ),
    BlindCase(
        CHECK,
        "with_torch_pad_sequence",
        with_torch_pad_sequence,
        "correct",
        "nn.utils.rnn.pad_sequence with batch_first=True and padding_value=pad_value",
    ),
    BlindCase(
        CHECK,
        "python_lists_then_tensor",
        python_lists_then_tensor,
        "correct",
        "padded the Python lists first, then one torch.tensor(..., dtype=torch.long)",
    ),
    BlindCase(
        CHECK,
        "f_pad_each_row",
        f_pad_each_row,
        "correct",
        "F.pad on every row to the longest length, then torch.stack",
    ),
    BlindCase(
        CHECK,
        "full_then_masked_scatter",
        full_then_masked_scatter,
        "correct",
        "torch.full of pad_value, then all ids written at once through a boolean mask",
    ),
]
