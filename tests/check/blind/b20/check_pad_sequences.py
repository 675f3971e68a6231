"""Blind set B20, check_pad_sequences (chapter 1): padding lists of token ids as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn.utils.rnn import pad_sequence

from .. import BlindCase

CHECK = "check_pad_sequences"


# ---------------------------------------------------------------- mistakes


def pad_left(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [[pad_value] * (T - len(s)) + list(s) for s in seqs]  # padding in front
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_ignores_pad_value(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T, dtype=torch.long)  # zeros are the padding
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_float_batch(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value)  # dtype inferred from the fill value...
    padded = padded.float()  # ... and made float so the model can read it
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_to_first_length(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(seqs[0])  # the width of the batch
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        s = s[:T]
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_time_major(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, padding_value=pad_value)  # PyTorch's helper
    return padded, torch.tensor([len(s) for s in seqs])


def pad_lengths_of_rows(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(r) for r in rows])


def pad_returns_lengths_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return lengths, padded


def pad_lengths_as_list(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, list]:
    T = max(len(s) for s in seqs)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), [len(s) for s in seqs]


def pad_extends_inputs(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    for s in seqs:
        s.extend([pad_value] * (T - len(s)))  # pad each list where it is
    return torch.tensor(seqs, dtype=torch.long), lengths


def pad_extra_column(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs) + 1  # one more so that every row ends with padding
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_sorted_by_length(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    seqs = sorted(seqs, key=len, reverse=True)  # longest first, as packing wants
    T = len(seqs[0])
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_no_lengths(seqs: list[list[int]], pad_value: int = 0) -> Tensor:
    T = max(len(s) for s in seqs)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.long)  # the lengths can be read off the padding


# ---------------------------------------------------------------- correct variants


def pad_with_torch_helper(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    lengths = torch.tensor([t.numel() for t in tensors], dtype=torch.long)
    return padded, lengths


def pad_with_f_pad(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.as_tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    rows = [
        F.pad(torch.as_tensor(s, dtype=torch.long), (0, T - len(s)), value=pad_value) for s in seqs
    ]
    return torch.stack(rows), lengths


def pad_with_where(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor(list(map(len, seqs)), dtype=torch.int64)
    T = int(lengths.max())
    flat = torch.tensor([i for s in seqs for i in s], dtype=torch.int64)
    real = torch.arange(T)[None, :] < lengths[:, None]  # (B, T)
    padded = torch.full(real.shape, pad_value, dtype=torch.int64)
    padded[real] = flat  # row-major order puts each list in its row
    return padded, lengths


def pad_list_copies(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    longest = 0
    for s in seqs:
        longest = max(longest, len(s))
    rows = []
    for s in seqs:
        row = list(s)  # a copy, the caller's list stays as it is
        while len(row) < longest:
            row.append(pad_value)
        rows.append(row)
    return torch.LongTensor(rows), torch.LongTensor([len(s) for s in seqs])


CASES = [
    BlindCase(CHECK, "pad_left", pad_left, "mistake", "I put the padding before the tokens."),
    BlindCase(
        CHECK,
        "ignores_pad_value",
        pad_ignores_pad_value,
        "mistake",
        "I started from torch.zeros, so the padding is always 0 whatever pad_value says.",
    ),
    BlindCase(
        CHECK,
        "float_batch",
        pad_float_batch,
        "mistake",
        "I turned the padded batch into floats.",
    ),
    BlindCase(
        CHECK,
        "width_of_first",
        pad_to_first_length,
        "mistake",
        "I took the width from the first sequence and cut the longer ones to it.",
    ),
    BlindCase(
        CHECK,
        "time_major",
        pad_time_major,
        "mistake",
        "I used torch's pad_sequence without batch_first=True, so the batch is (T, B).",
    ),
    BlindCase(
        CHECK,
        "lengths_after_padding",
        pad_lengths_of_rows,
        "mistake",
        "I measured the lengths on the padded rows, so every length is T.",
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
        "lengths_python_list",
        pad_lengths_as_list,
        "mistake",
        "I returned the lengths as a Python list, not a tensor.",
    ),
    BlindCase(
        CHECK,
        "extends_callers_lists",
        pad_extends_inputs,
        "mistake",
        "I padded the lists in place with extend, which changes the caller's lists.",
    ),
    BlindCase(
        CHECK,
        "extra_pad_column",
        pad_extra_column,
        "mistake",
        "I made the batch one wider than the longest sequence so every row ends in padding.",
    ),
    BlindCase(
        CHECK,
        "sorted_rows",
        pad_sorted_by_length,
        "mistake",
        "I sorted the sequences longest first before padding, so the rows change order.",
    ),
    BlindCase(
        CHECK,
        "no_lengths",
        pad_no_lengths,
        "mistake",
        "I returned only the padded batch, without the lengths.",
    ),
    BlindCase(
        CHECK,
        "torch_pad_sequence",
        pad_with_torch_helper,
        "correct",
        "I used torch.nn.utils.rnn.pad_sequence with batch_first=True and padding_value.",
    ),
    BlindCase(
        CHECK,
        "f_pad_rows",
        pad_with_f_pad,
        "correct",
        "I padded each row with F.pad and stacked the rows.",
    ),
    BlindCase(
        CHECK,
        "scatter_with_mask",
        pad_with_where,
        "correct",
        "I filled a full(pad_value) batch through a boolean mask of the real positions.",
    ),
    BlindCase(
        CHECK,
        "list_copies",
        pad_list_copies,
        "correct",
        "I padded copies of the lists with a while loop and built LongTensors.",
    ),
]
