"""Blind set B6, check_pad_sequences (chapter 1): padding lists of token ids as readers do it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_pad_sequences"


# ---------------------------------------------------------------- mistakes


def pad_max_of_lists(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    longest = max(seqs)  # the longest list... (max compares lists item by item, not by length)
    padded = torch.full((len(seqs), len(longest)), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        n = min(len(s), len(longest))
        padded[b, :n] = torch.tensor(s[:n])
    return padded, torch.tensor([len(s) for s in seqs])


def pad_on_the_left(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [[pad_value] * (T - len(s)) + list(s) for s in seqs]  # Keras' default, padding="pre"
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_always_zero(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T, dtype=torch.long)  # <pad> is id 0 anyway
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_float_batch(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T).fill_(pad_value)  # torch.zeros: float32
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.float)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_time_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = torch.nn.utils.rnn.pad_sequence(tensors, padding_value=pad_value)  # (T, B)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_lengths_minus_one(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    last = []
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
        last.append(len(s) - 1)  # index of the last real token
    return padded, torch.tensor(last)


def pad_lengths_after_padding(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [list(s) for s in seqs]
    for row in rows:
        row.extend([pad_value] * (T - len(row)))
    lengths = torch.tensor([len(row) for row in rows])  # measured after the padding was added
    return torch.tensor(rows, dtype=torch.long), lengths


def pad_sorted_longest_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    seqs = sorted(seqs, key=len, reverse=True)  # pack_padded_sequence likes them sorted
    T = len(seqs[0])
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_returns_lengths_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs])
    padded = torch.full((len(seqs), int(lengths.max())), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return lengths, padded  # the lengths first, as they are computed first


def pad_only_the_batch(seqs: list[list[int]], pad_value: int = 0) -> Tensor:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded  # the lengths can be read off the padding later


# ---------------------------------------------------------------- correct variants


def pad_with_torch_utility(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.as_tensor(s, dtype=torch.long) for s in seqs]
    padded = torch.nn.utils.rnn.pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    lengths = torch.tensor([len(t) for t in tensors], dtype=torch.long)
    return padded, lengths


def pad_python_rows(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(map(len, seqs))
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]  # new lists, inputs untouched
    return torch.tensor(rows, dtype=torch.long), torch.tensor(list(map(len, seqs)))


def pad_each_then_stack(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    rows = [
        F.pad(torch.tensor(s, dtype=torch.long), (0, T - len(s)), value=pad_value) for s in seqs
    ]
    return torch.stack(rows), lengths


CASES = [
    BlindCase(
        CHECK,
        "width_from_max_of_lists",
        pad_max_of_lists,
        "mistake",
        "I took the width from max(seqs), which picks the list with the largest first ids, not "
        "the longest one, so longer rows get cut.",
    ),
    BlindCase(
        CHECK,
        "padding_before_tokens",
        pad_on_the_left,
        "mistake",
        "I put the padding before the tokens (Keras' padding='pre') instead of after them.",
    ),
    BlindCase(
        CHECK,
        "pad_value_ignored",
        pad_always_zero,
        "mistake",
        "I started from torch.zeros and never used pad_value, so the padding is always 0.",
    ),
    BlindCase(
        CHECK,
        "float_batch",
        pad_float_batch,
        "mistake",
        "I built the batch with torch.zeros(B, T), which is float32, so the ids come back as "
        "floats instead of long.",
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
        "lengths_minus_one",
        pad_lengths_minus_one,
        "mistake",
        "I returned the index of each row's last token (length - 1) as the lengths.",
    ),
    BlindCase(
        CHECK,
        "lengths_after_padding",
        pad_lengths_after_padding,
        "mistake",
        "I padded the lists first and measured their lengths afterwards, so every length is T.",
    ),
    BlindCase(
        CHECK,
        "sorted_by_length",
        pad_sorted_longest_first,
        "mistake",
        "I sorted the sequences longest first before padding, so the rows are no longer in "
        "the order they came in.",
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
        "returns_batch_only",
        pad_only_the_batch,
        "mistake",
        "I returned only the padded batch and not the lengths.",
    ),
    BlindCase(
        CHECK,
        "torch_pad_sequence_batch_first",
        pad_with_torch_utility,
        "correct",
        "nn.utils.rnn.pad_sequence with batch_first=True and padding_value=pad_value, lengths "
        "from the tensors.",
    ),
    BlindCase(
        CHECK,
        "python_rows",
        pad_python_rows,
        "correct",
        "Each row padded as a new Python list, then one torch.tensor(..., dtype=long).",
    ),
    BlindCase(
        CHECK,
        "f_pad_then_stack",
        pad_each_then_stack,
        "correct",
        "Each sequence right-padded with F.pad to the longest length, then stacked.",
    ),
]
