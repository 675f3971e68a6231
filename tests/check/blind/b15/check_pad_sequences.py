"""Blind set B15, check_pad_sequences (chapter 1): padding lists of token ids into a batch."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_pad_sequences"


# ---------------------------------------------------------------- mistakes


def pad_left(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [[pad_value] * (T - len(s)) + list(s) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_ignores_value(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_first_width(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(seqs[0])  # the batch is as wide as its first sentence
    rows = [list(s[:T]) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_float(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value)  # dtype inferred... as float
    padded = padded.float()
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.float)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_time_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    padded = nn.utils.rnn.pad_sequence([torch.tensor(s) for s in seqs], padding_value=pad_value)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_swapped_return(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor([len(s) for s in seqs]), torch.tensor(rows)


def pad_lengths_are_width(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    padded = torch.tensor(rows)
    return padded, torch.full((len(seqs),), padded.shape[1], dtype=torch.long)


def pad_lengths_list(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, list]:
    T = max(len(s) for s in seqs)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows), [len(s) for s in seqs]


def pad_lengths_int32(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows), torch.tensor([len(s) for s in seqs], dtype=torch.int32)


def pad_only_padded(seqs: list[list[int]], pad_value: int = 0) -> Tensor:
    T = max(len(s) for s in seqs)
    return torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs])


def pad_one_extra(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs) + 1  # room for an end token
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows), torch.tensor([len(s) for s in seqs])


# ---------------------------------------------------------------- correct variants


def pad_with_torch(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.as_tensor(s, dtype=torch.long) for s in seqs]
    padded = nn.utils.rnn.pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    return padded, torch.tensor([len(t) for t in tensors], dtype=torch.long)


def pad_with_max_len(
    seqs: list[list[int]], pad_value: int = 0, max_len: int | None = None
) -> tuple[Tensor, Tensor]:
    """An extra optional max_len (default None) that cuts the rows."""
    cut = [list(s)[:max_len] if max_len is not None else list(s) for s in seqs]
    lengths = torch.tensor([len(s) for s in cut], dtype=torch.long)
    T = max_len if max_len is not None else int(lengths.max())
    padded = torch.full((len(cut), T), pad_value, dtype=torch.long)
    for b, s in enumerate(cut):
        if s:
            padded[b, : len(s)] = torch.tensor(s)
    return padded, lengths


def pad_masked_scatter(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    real = torch.arange(T)[None, :] < lengths[:, None]
    flat = torch.tensor([t for s in seqs for t in s], dtype=torch.long)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    padded[real] = flat
    return padded, lengths


CASES = [
    BlindCase(
        CHECK,
        "left_padding",
        pad_left,
        "mistake",
        "I put the padding before the tokens, on the left.",
    ),
    BlindCase(
        CHECK,
        "ignores_pad_value",
        pad_ignores_value,
        "mistake",
        "I filled with torch.zeros, so pad_value is never used.",
    ),
    BlindCase(
        CHECK,
        "width_of_first",
        pad_first_width,
        "mistake",
        "I made the batch as wide as the first sentence, cutting longer ones.",
    ),
    BlindCase(CHECK, "float_ids", pad_float, "mistake", "My padded batch is float, not long."),
    BlindCase(
        CHECK,
        "time_first",
        pad_time_first,
        "mistake",
        "I used pad_sequence without batch_first=True, so I return (T, B).",
    ),
    BlindCase(
        CHECK,
        "returns_lengths_first",
        pad_swapped_return,
        "mistake",
        "I return (lengths, padded) instead of (padded, lengths).",
    ),
    BlindCase(
        CHECK,
        "lengths_are_width",
        pad_lengths_are_width,
        "mistake",
        "My lengths are the padded width for every row, not the real lengths.",
    ),
    BlindCase(
        CHECK,
        "lengths_python_list",
        pad_lengths_list,
        "mistake",
        "I return the lengths as a Python list, not a tensor.",
    ),
    BlindCase(
        CHECK,
        "lengths_int32",
        pad_lengths_int32,
        "mistake",
        "My lengths tensor is int32 instead of long.",
    ),
    BlindCase(
        CHECK,
        "only_padded",
        pad_only_padded,
        "mistake",
        "I return only the padded batch and forgot the lengths.",
    ),
    BlindCase(
        CHECK,
        "one_column_too_many",
        pad_one_extra,
        "mistake",
        "I made the batch one wider than the longest sentence, to leave room for <eos>.",
    ),
    BlindCase(
        CHECK,
        "torch_pad_sequence",
        pad_with_torch,
        "correct",
        "nn.utils.rnn.pad_sequence with batch_first=True and padding_value.",
    ),
    BlindCase(
        CHECK,
        "optional_max_len",
        pad_with_max_len,
        "correct",
        "An extra max_len argument with default None; torch.full then a loop.",
    ),
    BlindCase(
        CHECK,
        "boolean_scatter",
        pad_masked_scatter,
        "correct",
        "All ids flattened and written through a boolean mask of the real positions.",
    ),
]
