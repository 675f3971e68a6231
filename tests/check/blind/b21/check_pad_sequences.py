"""Blind set B21, check_pad_sequences (chapter 1): padding lists of token ids as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_pad_sequences"


# ---------------------------------------------------------------- mistakes


def pad_width_of_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(seqs[0])  # the width of the batch
    rows = [list(s[:T]) + [pad_value] * (T - len(s[:T])) for s in seqs]
    lengths = torch.tensor([len(s[:T]) for s in seqs], dtype=torch.long)
    return torch.tensor(rows, dtype=torch.long), lengths


def pad_left(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [[pad_value] * (T - len(s)) + list(s) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_zeros_always(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    padded = torch.zeros(len(seqs), int(lengths.max()), dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, lengths


def pad_float_batch(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    padded = torch.full((len(seqs), int(lengths.max())), pad_value, dtype=torch.float)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.float)
    return padded, lengths


def pad_lengths_as_list(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, list]:
    lengths = [len(s) for s in seqs]
    T = max(lengths)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), lengths


def pad_time_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    padded = torch.full((T, len(seqs)), pad_value, dtype=torch.long)  # (T, B) like nn.RNN
    for b, s in enumerate(seqs):
        padded[: len(s), b] = torch.tensor(s, dtype=torch.long)
    return padded, lengths


def pad_last_index(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    lengths = torch.tensor([len(s) - 1 for s in seqs], dtype=torch.long)  # where each row ends
    return torch.tensor(rows, dtype=torch.long), lengths


def pad_returns_lengths_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return lengths, torch.tensor(rows, dtype=torch.long)


def pad_room_for_eos(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs) + 1  # one more column so every row ends on a pad
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_int32_lengths(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.int32)
    return torch.tensor(rows, dtype=torch.long), lengths


def pad_sorted_by_length(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    seqs = sorted(seqs, key=len, reverse=True)  # longest first, as packing wants
    T = len(seqs[0])
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_extends_inputs(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    for s in seqs:
        s.extend([pad_value] * (T - len(s)))  # pad each list where it is
    return torch.tensor(seqs, dtype=torch.long), lengths


# ---------------------------------------------------------------- correct variants


def pad_with_torch_utils(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = torch.nn.utils.rnn.pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def pad_with_mask_scatter(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    mask = torch.arange(T)[None, :] < lengths[:, None]  # (B, T), row-major like the ids below
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    padded[mask] = torch.tensor([i for s in seqs for i in s], dtype=torch.long)
    return padded, lengths


def pad_each_row_with_F_pad(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [
        F.pad(torch.tensor(list(s), dtype=torch.long), (0, T - len(s)), value=pad_value)
        for s in seqs
    ]
    lengths = torch.as_tensor([len(s) for s in seqs]).long()
    return torch.stack(rows), lengths


def pad_python_lists(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = [len(s) for s in seqs]
    T = max(lengths)
    rows = []
    for s in seqs:
        row = [int(i) for i in s]
        while len(row) < T:
            row.append(pad_value)
        rows.append(row)
    return torch.LongTensor(rows), torch.LongTensor(lengths)


CASES = [
    BlindCase(
        CHECK,
        "width_of_first_sequence",
        pad_width_of_first,
        "mistake",
        "I took T from the first sequence, so longer ones later in the batch were cut.",
    ),
    BlindCase(
        CHECK,
        "pads_on_the_left",
        pad_left,
        "mistake",
        "I put the padding before the tokens (left padding).",
    ),
    BlindCase(
        CHECK,
        "ignores_pad_value",
        pad_zeros_always,
        "mistake",
        "I started from torch.zeros, so the padding is always 0 whatever pad_value says.",
    ),
    BlindCase(
        CHECK,
        "float_batch",
        pad_float_batch,
        "mistake",
        "I built the batch with torch.full(..., dtype=torch.float), so the ids come back float.",
    ),
    BlindCase(
        CHECK,
        "lengths_python_list",
        pad_lengths_as_list,
        "mistake",
        "I returned the lengths as a plain Python list instead of a tensor.",
    ),
    BlindCase(
        CHECK,
        "time_first",
        pad_time_first,
        "mistake",
        "I made the batch (T, B), time first as nn.RNN likes it, instead of batch first.",
    ),
    BlindCase(
        CHECK,
        "lengths_are_last_index",
        pad_last_index,
        "mistake",
        "For the lengths I stored the index of each row's last token (len - 1).",
    ),
    BlindCase(
        CHECK,
        "returns_lengths_first",
        pad_returns_lengths_first,
        "mistake",
        "I returned (lengths, padded) instead of (padded, lengths).",
    ),
    BlindCase(
        CHECK,
        "one_extra_column",
        pad_room_for_eos,
        "mistake",
        "I made the batch one column wider than the longest sequence so every row ends in a pad.",
    ),
    BlindCase(
        CHECK,
        "int32_lengths",
        pad_int32_lengths,
        "mistake",
        "I made the lengths torch.int32 instead of long.",
    ),
    BlindCase(
        CHECK,
        "sorted_by_length",
        pad_sorted_by_length,
        "mistake",
        "I sorted the sequences longest first before padding, so the rows come back reordered.",
    ),
    BlindCase(
        CHECK,
        "extends_input_lists",
        pad_extends_inputs,
        "mistake",
        "I padded by extending the caller's lists in place, so a second call on the same lists "
        "sees them already padded (wrong lengths, old pad value).",
    ),
    BlindCase(
        CHECK,
        "torch_pad_sequence",
        pad_with_torch_utils,
        "correct",
        "torch.nn.utils.rnn.pad_sequence with batch_first=True and padding_value.",
    ),
    BlindCase(
        CHECK,
        "mask_scatter",
        pad_with_mask_scatter,
        "correct",
        "A (B, T) mask from the lengths, then all ids written at once with padded[mask] = ...",
    ),
    BlindCase(
        CHECK,
        "F_pad_each_row",
        pad_each_row_with_F_pad,
        "correct",
        "F.pad on the right of each row with value=pad_value, then torch.stack.",
    ),
    BlindCase(
        CHECK,
        "python_lists",
        pad_python_lists,
        "correct",
        "Padded as Python lists with a while loop, then torch.LongTensor for both outputs.",
    ),
]
