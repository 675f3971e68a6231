"""Blind set B13, check_pad_sequences (chapter 1): padding lists of token ids as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_pad_sequences"


# ---------------------------------------------------------------- mistakes


def pad_width_of_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(seqs[0])  # the batch is as wide as its first sentence
    rows = [list(s[:T]) + [pad_value] * (T - len(s[:T])) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_left(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [[pad_value] * (T - len(s)) + list(s) for s in seqs]  # right-aligned tokens
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_zeros_always(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T, dtype=torch.long)  # <pad> is id 0 anyway
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_float_tensor(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.Tensor(rows), torch.tensor([len(s) for s in seqs])  # torch.Tensor of a list


def pad_time_major(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = nn.utils.rnn.pad_sequence(tensors, padding_value=pad_value)  # default layout
    return padded, torch.tensor([len(s) for s in seqs])


def pad_returns_lengths_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    padded = torch.full((len(seqs), int(lengths.max())), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return lengths, padded


def pad_extends_inputs(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    for s in seqs:
        s.extend([pad_value] * (T - len(s)))  # pad each list where it is
    lengths = torch.tensor([len(s) for s in seqs])  # measured after padding
    return torch.tensor(seqs, dtype=torch.long), lengths


def pad_sorted_longest_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    seqs = sorted(seqs, key=len, reverse=True)  # pack_padded_sequence wants them sorted
    T = len(seqs[0])
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_room_for_eos(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs) + 1  # one extra column so every row ends in padding
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_lengths_float(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.Tensor([len(s) for s in seqs])


# ---------------------------------------------------------------- correct variants


def pad_with_torch_utility(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.as_tensor(s, dtype=torch.long) for s in seqs]
    padded = nn.utils.rnn.pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    lengths = torch.tensor([t.numel() for t in tensors], dtype=torch.long)
    return padded, lengths


def pad_pure_python(
    seqs: list[list[int]], pad_value: int = 0, max_len: int | None = None
) -> tuple[Tensor, Tensor]:
    cut = [list(s)[:max_len] if max_len is not None else list(s) for s in seqs]
    T = max_len if max_len is not None else max(map(len, cut))
    rows = [s + [pad_value] * (T - len(s)) for s in cut]
    return torch.tensor(rows, dtype=torch.int64), torch.tensor(list(map(len, cut)))


def pad_fill_then_mask(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs]).long()
    T = int(lengths.max())
    flat = torch.tensor([tok for s in seqs for tok in s], dtype=torch.long)
    mask = torch.arange(T)[None, :] < lengths[:, None]  # (B, T)
    padded = torch.full(mask.shape, pad_value, dtype=torch.long)
    padded[mask] = flat  # row-major order matches the concatenation
    return padded, lengths


def pad_numpy(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    import numpy as np

    T = max(len(s) for s in seqs)
    arr = np.full((len(seqs), T), pad_value, dtype=np.int64)
    for b, s in enumerate(seqs):
        arr[b, : len(s)] = s
    return torch.from_numpy(arr), torch.from_numpy(np.array([len(s) for s in seqs], np.int64))


CASES = [
    BlindCase(
        CHECK,
        "width_of_first",
        pad_width_of_first,
        "mistake",
        "I made the batch as wide as the first sentence, so longer ones got cut.",
    ),
    BlindCase(
        CHECK,
        "pad_left",
        pad_left,
        "mistake",
        "I put the padding before the tokens (left padding).",
    ),
    BlindCase(
        CHECK,
        "zeros_ignore_pad_value",
        pad_zeros_always,
        "mistake",
        "I started from torch.zeros, since <pad> is 0, and never used pad_value.",
    ),
    BlindCase(
        CHECK,
        "float_tensor",
        pad_float_tensor,
        "mistake",
        "I built the batch with torch.Tensor(rows), which gives float32, not long ids.",
    ),
    BlindCase(
        CHECK,
        "time_major",
        pad_time_major,
        "mistake",
        "I used nn.utils.rnn.pad_sequence without batch_first=True, so it is (T, B).",
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
        "extend_inputs_then_measure",
        pad_extends_inputs,
        "mistake",
        "I padded the input lists in place with extend and measured the lengths after, "
        "so every length is T (and the caller's lists are changed).",
    ),
    BlindCase(
        CHECK,
        "sorted_longest_first",
        pad_sorted_longest_first,
        "mistake",
        "I sorted the sentences longest first as pack_padded_sequence likes, so the rows "
        "are no longer in the input order.",
    ),
    BlindCase(
        CHECK,
        "extra_column",
        pad_room_for_eos,
        "mistake",
        "I made the batch one column wider than the longest sentence.",
    ),
    BlindCase(
        CHECK,
        "lengths_float",
        pad_lengths_float,
        "mistake",
        "I made the lengths with torch.Tensor, so they are float32 instead of long.",
    ),
    BlindCase(
        CHECK,
        "torch_pad_sequence",
        pad_with_torch_utility,
        "correct",
        "nn.utils.rnn.pad_sequence(batch_first=True, padding_value=pad_value).",
    ),
    BlindCase(
        CHECK,
        "pure_python_max_len",
        pad_pure_python,
        "correct",
        "Padded Python lists turned into one tensor; an optional max_len with default.",
    ),
    BlindCase(
        CHECK,
        "boolean_scatter",
        pad_fill_then_mask,
        "correct",
        "A full pad_value tensor with the concatenated ids written through a length mask.",
    ),
    BlindCase(
        CHECK,
        "numpy",
        pad_numpy,
        "correct",
        "Built in NumPy (int64) and converted with torch.from_numpy.",
    ),
]
