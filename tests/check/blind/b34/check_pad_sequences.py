"""Blind set B34, check_pad_sequences (chapter 1): padding lists of token ids as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn.utils.rnn import pad_sequence

from .. import BlindCase

CHECK = "check_pad_sequences"


# ---------------------------------------------------------------- mistakes


def pad_first_length(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(seqs[0])  # the first one is the longest, I thought
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        s = s[:T]
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([min(len(s), T) for s in seqs], dtype=torch.long)


def pad_left(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        if s:
            padded[b, T - len(s) :] = torch.tensor(s)  # padding in front
    return padded, torch.tensor([len(s) for s in seqs])


def pad_ignores_value(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T, dtype=torch.long)  # pad is always 0 anyway
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_float_dtype(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), float(pad_value))  # float by default
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.float)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_time_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, padding_value=pad_value)  # forgot batch_first=True
    return padded, torch.tensor([len(s) for s in seqs])


def pad_no_lengths(seqs: list[list[int]], pad_value: int = 0) -> Tensor:
    T = max(len(s) for s in seqs)
    rows = [s + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.long)  # only the batch, lengths are in the mask


def pad_lengths_is_width(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [s + [pad_value] * (T - len(s)) for s in seqs]
    padded = torch.tensor(rows, dtype=torch.long)
    return padded, torch.full((len(seqs),), T, dtype=torch.long)  # every row is T long now


def pad_one_extra(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs) + 1  # room for an end marker
    rows = [s + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_lengths_count_nonpad(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [s + [pad_value] * (T - len(s)) for s in seqs]
    padded = torch.tensor(rows, dtype=torch.long)
    return padded, (padded != 0).sum(dim=1)  # count the non-zero ids


def pad_returns_swapped(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [s + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor([len(s) for s in seqs]), torch.tensor(rows, dtype=torch.long)


def pad_sorted(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    seqs = sorted(seqs, key=len, reverse=True)  # longest first, like pack_padded_sequence wants
    T = len(seqs[0])
    rows = [s + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_lengths_float(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [s + [pad_value] * (T - len(s)) for s in seqs]
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.float)
    return torch.tensor(rows, dtype=torch.long), lengths


# ---------------------------------------------------------------- correct variants


def pad_with_torch(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    return padded, torch.tensor([len(t) for t in tensors], dtype=torch.long)


def pad_with_f_pad(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    rows = [
        F.pad(torch.tensor(s, dtype=torch.long), (0, T - len(s)), value=pad_value) for s in seqs
    ]
    return torch.stack(rows), lengths


def pad_list_comprehension(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(map(len, seqs))
    padded = torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs])
    return padded.long(), torch.tensor(list(map(len, seqs))).long()


def pad_with_mask_scatter(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    mask = torch.arange(T)[None, :] < lengths[:, None]
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    padded[mask] = torch.tensor([t for s in seqs for t in s], dtype=torch.long)
    return padded, lengths


CASES = [
    BlindCase(
        CHECK,
        "first_is_longest",
        pad_first_length,
        "mistake",
        "I took the first sequence's length as the width of the batch",
    ),
    BlindCase(
        CHECK,
        "left_padding",
        pad_left,
        "mistake",
        "I put the padding before the tokens instead of after",
    ),
    BlindCase(
        CHECK,
        "ignores_pad_value",
        pad_ignores_value,
        "mistake",
        "I always padded with zeros and never used pad_value",
    ),
    BlindCase(
        CHECK,
        "float_batch",
        pad_float_dtype,
        "mistake",
        "my padded batch came out float32 because torch.full defaults to float",
    ),
    BlindCase(
        CHECK,
        "time_first",
        pad_time_first,
        "mistake",
        "I used pad_sequence but forgot batch_first=True, so I got (T, B)",
    ),
    BlindCase(
        CHECK,
        "no_lengths",
        pad_no_lengths,
        "mistake",
        "I returned only the padded batch, not the lengths",
    ),
    BlindCase(
        CHECK,
        "lengths_after_padding",
        pad_lengths_is_width,
        "mistake",
        "I returned the lengths of the padded rows, which are all T",
    ),
    BlindCase(
        CHECK,
        "one_extra_column",
        pad_one_extra,
        "mistake",
        "I made the batch one column wider than the longest sequence",
    ),
    BlindCase(
        CHECK,
        "lengths_count_nonzero",
        pad_lengths_count_nonpad,
        "mistake",
        "I counted the lengths as the ids different from 0 in the padded batch",
    ),
    BlindCase(
        CHECK,
        "returns_swapped",
        pad_returns_swapped,
        "mistake",
        "I returned (lengths, padded) in the wrong order",
    ),
    BlindCase(
        CHECK,
        "sorted_by_length",
        pad_sorted,
        "mistake",
        "I sorted the sequences longest first before padding them",
    ),
    BlindCase(
        CHECK, "float_lengths", pad_lengths_float, "mistake", "I made the lengths a float tensor"
    ),
    BlindCase(
        CHECK,
        "torch_pad_sequence",
        pad_with_torch,
        "correct",
        "I used torch's pad_sequence with batch_first=True",
    ),
    BlindCase(
        CHECK,
        "f_pad_each_row",
        pad_with_f_pad,
        "correct",
        "I padded each row with F.pad and stacked them",
    ),
    BlindCase(
        CHECK,
        "list_comprehension",
        pad_list_comprehension,
        "correct",
        "I padded the Python lists and made one tensor",
    ),
    BlindCase(
        CHECK,
        "mask_scatter",
        pad_with_mask_scatter,
        "correct",
        "I filled with pad_value and wrote all tokens through a boolean mask",
    ),
]
