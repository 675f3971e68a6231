"""Blind set B26, check_pad_sequences (chapter 1): padding lists of token ids as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_pad_sequences"


# ---------------------------------------------------------------- mistakes


def pad_left(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [[pad_value] * (T - len(s)) + list(s) for s in seqs]  # pad in front
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_zeros_ignore_value(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T, dtype=torch.long)  # <pad> is id 0 anyway
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_width_of_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(seqs[0])  # the batch is as wide as its sentences
    rows = [list(s[:T]) + [pad_value] * (T - len(s)) for s in seqs]
    lengths = torch.tensor([min(len(s), T) for s in seqs])
    return torch.tensor(rows), lengths


def pad_float_zeros(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T) + pad_value  # float32 by default
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_time_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = nn.utils.rnn.pad_sequence(tensors, padding_value=pad_value)  # PyTorch's own helper
    return padded, torch.tensor([len(s) for s in seqs])


def pad_returns_only_batch(seqs: list[list[int]], pad_value: int = 0) -> Tensor:
    T = max(len(s) for s in seqs)
    return torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs])


def pad_lengths_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs])
    lengths = torch.tensor([len(s) for s in seqs])
    return lengths, padded


def pad_lengths_from_pad_ids(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs])
    lengths = (padded != pad_value).sum(dim=1)  # count the non-pad cells
    return padded, lengths


def pad_lengths_all_T(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs])
    lengths = torch.full((len(seqs),), padded.shape[1])  # every row is T long now
    return padded, lengths


def pad_one_extra_column(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs) + 1  # room for one pad after the longest one as well
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_extend_in_place(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs])
    T = int(lengths.max())
    for s in seqs:
        s.extend([pad_value] * (T - len(s)))  # fill each list up to T
    return torch.tensor(seqs, dtype=torch.long), lengths


def pad_sorted_longest_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    seqs = sorted(seqs, key=len, reverse=True)  # pack_padded_sequence wants them sorted
    T = len(seqs[0])
    padded = torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs])
    return padded, torch.tensor([len(s) for s in seqs])


def pad_lengths_int32(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.int32)


# ---------------------------------------------------------------- correct variants


def pad_with_torch_helper(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.as_tensor(s, dtype=torch.long) for s in seqs]
    padded = nn.utils.rnn.pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    lengths = torch.tensor([t.numel() for t in tensors], dtype=torch.long)
    return padded, lengths


def pad_python_lists(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    longest = 0
    for s in seqs:
        longest = max(longest, len(s))
    rows = []
    for s in seqs:
        row = list(s)
        while len(row) < longest:
            row.append(pad_value)
        rows.append(row)
    padded = torch.tensor(rows, dtype=torch.long).reshape(len(seqs), longest)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def pad_with_mask_scatter(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    real = torch.arange(T)[None, :] < lengths[:, None]  # (B, T)
    flat = torch.tensor([tok for s in seqs for tok in s], dtype=torch.long)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    padded[real] = flat  # row-major order fills each row's first cells
    return padded, lengths


def pad_each_then_stack(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(map(len, seqs))
    rows = [
        F.pad(torch.tensor(s, dtype=torch.long), (0, T - len(s)), value=pad_value) for s in seqs
    ]
    return torch.stack(rows), torch.tensor(list(map(len, seqs)))


CASES = [
    BlindCase(CHECK, "pad_left", pad_left, "mistake", "I put the padding before the tokens."),
    BlindCase(
        CHECK,
        "zeros_ignore_pad_value",
        pad_zeros_ignore_value,
        "mistake",
        "I started from torch.zeros, since <pad> is id 0, and never used pad_value.",
    ),
    BlindCase(
        CHECK,
        "width_of_first_sequence",
        pad_width_of_first,
        "mistake",
        "I took T from the first sequence, so longer ones later in the list got cut.",
    ),
    BlindCase(
        CHECK,
        "float_zeros",
        pad_float_zeros,
        "mistake",
        "I built the batch with torch.zeros(B, T) + pad_value, which is float32, not long.",
    ),
    BlindCase(
        CHECK,
        "time_first",
        pad_time_first,
        "mistake",
        "I used nn.utils.rnn.pad_sequence and forgot batch_first=True, so I get (T, B).",
    ),
    BlindCase(
        CHECK,
        "returns_only_batch",
        pad_returns_only_batch,
        "mistake",
        "I return the padded tensor only and forgot the lengths.",
    ),
    BlindCase(
        CHECK,
        "lengths_first",
        pad_lengths_first,
        "mistake",
        "I return (lengths, padded) instead of (padded, lengths).",
    ),
    BlindCase(
        CHECK,
        "lengths_from_pad_ids",
        pad_lengths_from_pad_ids,
        "mistake",
        "I counted the lengths as the cells that are not pad_value, which is wrong when a real "
        "token has the same id as the padding.",
    ),
    BlindCase(
        CHECK,
        "lengths_all_T",
        pad_lengths_all_T,
        "mistake",
        "I return the lengths after padding, T for every row, not the real lengths.",
    ),
    BlindCase(
        CHECK,
        "one_extra_column",
        pad_one_extra_column,
        "mistake",
        "I made the batch max length + 1 wide so that every row ends with a pad.",
    ),
    BlindCase(
        CHECK,
        "extend_lists_in_place",
        pad_extend_in_place,
        "mistake",
        "I padded the caller's lists in place with extend, so they stay padded afterwards.",
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
        "lengths_int32",
        pad_lengths_int32,
        "mistake",
        "I made the lengths an int32 tensor instead of long.",
    ),
    BlindCase(
        CHECK,
        "torch_pad_sequence_batch_first",
        pad_with_torch_helper,
        "correct",
        "nn.utils.rnn.pad_sequence with batch_first=True and padding_value=pad_value.",
    ),
    BlindCase(
        CHECK,
        "python_lists",
        pad_python_lists,
        "correct",
        "Plain Python loops build padded copies of the lists, then one torch.tensor.",
    ),
    BlindCase(
        CHECK,
        "mask_scatter",
        pad_with_mask_scatter,
        "correct",
        "A (B, T) mask of real cells from the lengths, and all the ids written through it.",
    ),
    BlindCase(
        CHECK,
        "pad_each_then_stack",
        pad_each_then_stack,
        "correct",
        "F.pad on each row to the longest length, then torch.stack.",
    ),
]
