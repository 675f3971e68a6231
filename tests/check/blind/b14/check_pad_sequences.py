"""Blind set B14, check_pad_sequences (chapter 1): padding lists of token ids into a batch."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_pad_sequences"


# ---------------------------------------------------------------- mistakes


def pad_left(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [[pad_value] * (T - len(s)) + list(s) for s in seqs]  # padding first, tokens last
    return torch.tensor(rows), torch.tensor([len(s) for s in seqs])


def pad_float(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.float)  # default float dtype
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.float)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_ignores_value(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T, dtype=torch.long)  # zeros are the padding anyway
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_width_of_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(seqs[0])  # the batch is as wide as its first sentence
    rows = [list(s[:T]) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows), torch.tensor([len(s) for s in seqs])


def pad_lengths_list(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, list]:
    T = max(len(s) for s in seqs)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows), [len(s) for s in seqs]  # lengths as a plain list


def pad_time_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s) for s in seqs]
    padded = nn.utils.rnn.pad_sequence(tensors, padding_value=pad_value)  # (T, B): time first
    return padded, torch.tensor([len(s) for s in seqs])


def pad_lengths_of_padded(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    padded = torch.tensor(rows)
    return padded, torch.tensor([len(r) for r in rows])  # the rows' lengths after padding


def pad_lengths_float(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.float32)  # to average them later
    return torch.tensor(rows), lengths


def pad_returns_swapped(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor([len(s) for s in seqs]), torch.tensor(rows)  # (lengths, padded)


def pad_count_nonzero(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs])
    lengths = (padded != pad_value).sum(dim=1)  # count the tokens that are not padding
    return padded, lengths


def pad_only_batch(seqs: list[list[int]], pad_value: int = 0) -> Tensor:
    T = max(len(s) for s in seqs)
    return torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs])  # no lengths


# ---------------------------------------------------------------- correct variants


def pad_with_torch_helper(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.as_tensor(s, dtype=torch.long) for s in seqs]
    padded = nn.utils.rnn.pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    return padded, torch.tensor([len(t) for t in tensors], dtype=torch.long)


def pad_new_full(
    seqs: list[list[int]], pad_value: int = 0, max_len: int | None = None
) -> tuple[Tensor, Tensor]:
    """With an extra optional max_len, as in the book's full version."""
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max()) if max_len is None else max_len
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        n = min(len(s), T)
        padded[b, :n] = torch.tensor(list(s)[:n], dtype=torch.long)
    lengths = lengths.clamp(max=T)
    return padded, lengths


def pad_list_comprehension(seqs, pad_value=0):
    longest = max(map(len, seqs))
    rows = [[*s, *([pad_value] * (longest - len(s)))] for s in seqs]
    return torch.LongTensor(rows), torch.LongTensor([len(s) for s in seqs])


def pad_with_fpad(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = [len(s) for s in seqs]
    T = max(lengths)
    rows = [
        torch.nn.functional.pad(torch.tensor(s, dtype=torch.long), (0, T - len(s)), value=pad_value)
        for s in seqs
    ]
    return torch.stack(rows), torch.tensor(lengths)


CASES = [
    BlindCase(
        CHECK,
        "pad_left",
        pad_left,
        "mistake",
        "I put the padding before the tokens, so every row ends with its last token.",
    ),
    BlindCase(
        CHECK,
        "float_dtype",
        pad_float,
        "mistake",
        "I built the batch with torch.full and no dtype, so the ids came back as floats.",
    ),
    BlindCase(
        CHECK,
        "ignores_pad_value",
        pad_ignores_value,
        "mistake",
        "I started from torch.zeros, so the pad_value argument is never used.",
    ),
    BlindCase(
        CHECK,
        "width_of_first",
        pad_width_of_first,
        "mistake",
        "I made the batch as wide as the first sentence instead of the longest one.",
    ),
    BlindCase(
        CHECK,
        "lengths_as_list",
        pad_lengths_list,
        "mistake",
        "I returned the lengths as a Python list instead of a long tensor.",
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
        "lengths_after_padding",
        pad_lengths_of_padded,
        "mistake",
        "I measured the lengths on the padded rows, so every length is T.",
    ),
    BlindCase(
        CHECK,
        "lengths_float",
        pad_lengths_float,
        "mistake",
        "I returned the lengths as float32 so that I could average them.",
    ),
    BlindCase(
        CHECK,
        "returns_swapped",
        pad_returns_swapped,
        "mistake",
        "I returned (lengths, padded) instead of (padded, lengths).",
    ),
    BlindCase(
        CHECK,
        "lengths_count_nonpad",
        pad_count_nonzero,
        "mistake",
        "I counted the lengths as the tokens different from pad_value, which is wrong when a "
        "sentence itself contains that id.",
    ),
    BlindCase(
        CHECK,
        "no_lengths",
        pad_only_batch,
        "mistake",
        "I returned only the padded batch, without the lengths.",
    ),
    BlindCase(
        CHECK,
        "torch_pad_sequence",
        pad_with_torch_helper,
        "correct",
        "nn.utils.rnn.pad_sequence with batch_first=True and padding_value.",
    ),
    BlindCase(
        CHECK,
        "new_full_with_max_len",
        pad_new_full,
        "correct",
        "torch.full and a loop, with an extra optional max_len defaulting to None.",
    ),
    BlindCase(
        CHECK,
        "list_comprehension",
        pad_list_comprehension,
        "correct",
        "Rows padded as Python lists, then torch.LongTensor; no type hints.",
    ),
    BlindCase(
        CHECK,
        "f_pad_each_row",
        pad_with_fpad,
        "correct",
        "F.pad on each row's tensor to the longest length, then torch.stack.",
    ),
]
