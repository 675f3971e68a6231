"""Blind set B12, check_pad_sequences (chapter 1): padding lists of token ids into a batch."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_pad_sequences"


# ---------------------------------------------------------------- mistakes


def pad_width_of_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(seqs[0])  # the first sentence sets the width
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        n = min(len(s), T)
        padded[b, :n] = torch.tensor(s[:n])
    return padded, torch.tensor([len(s) for s in seqs])


def pad_left(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [[pad_value] * (T - len(s)) + list(s) for s in seqs]  # padding first
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_ignores_value(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T, dtype=torch.long)  # zeros are the padding
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_float(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), float(pad_value))  # float32 by default
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.float)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_time_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s) for s in seqs]
    padded = nn.utils.rnn.pad_sequence(tensors, padding_value=pad_value)  # (T, B)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_lengths_all_T(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    lengths = (padded == padded).sum(1)  # the length of every row
    return padded, lengths


def pad_lengths_plus_one(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    lengths = []
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
        lengths.append(len(s) + 1)  # counted the end of the sentence as well
    return padded, torch.tensor(lengths)


def pad_sorted(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    seqs = sorted(seqs, key=len, reverse=True)  # longest first, as packing wants
    T = len(seqs[0])
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_returns_swapped(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs])
    padded = torch.full((len(seqs), int(lengths.max())), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return lengths, padded


def pad_count_nonpad(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, (padded != 0).sum(dim=1)  # count what is not padding (id 0)


# ---------------------------------------------------------------- correct variants


def pad_with_torch(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.as_tensor(s, dtype=torch.long) for s in seqs]
    padded = nn.utils.rnn.pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    return padded, torch.tensor([t.numel() for t in tensors], dtype=torch.long)


def pad_python_lists(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(map(len, seqs))
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.LongTensor(rows), torch.LongTensor([len(s) for s in seqs])


def pad_by_mask(seqs: list[list[int]], pad_value: int = 0, max_len: int | None = None) -> tuple:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max()) if max_len is None else max_len
    keep = torch.arange(T)[None, :] < lengths[:, None]  # (B, T)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    padded[keep] = torch.tensor([t for s in seqs for t in s], dtype=torch.long)
    return padded, lengths


CASES = [
    BlindCase(
        CHECK,
        "width_of_first",
        pad_width_of_first,
        "mistake",
        "I used the length of the first sentence as the batch width.",
    ),
    BlindCase(
        CHECK,
        "pad_left",
        pad_left,
        "mistake",
        "I put the padding before the tokens instead of after them.",
    ),
    BlindCase(
        CHECK,
        "ignores_pad_value",
        pad_ignores_value,
        "mistake",
        "I started from torch.zeros, so pad_value is never written.",
    ),
    BlindCase(
        CHECK,
        "float_batch",
        pad_float,
        "mistake",
        "I built the batch with torch.full and a float fill, so it comes back float32.",
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
        "lengths_all_T",
        pad_lengths_all_T,
        "mistake",
        "I computed the lengths from the padded rows, so every length is T.",
    ),
    BlindCase(
        CHECK,
        "lengths_plus_one",
        pad_lengths_plus_one,
        "mistake",
        "I added one to every length, counting an end token that is not there.",
    ),
    BlindCase(
        CHECK,
        "sorted_rows",
        pad_sorted,
        "mistake",
        "I sorted the sentences longest-first before padding, so the rows changed order.",
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
        "lengths_count_nonzero",
        pad_count_nonpad,
        "mistake",
        "I counted the lengths as the entries that are not 0, which is wrong for another "
        "pad value.",
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
        "python_lists",
        pad_python_lists,
        "correct",
        "Padded Python lists first, then one torch.LongTensor.",
    ),
    BlindCase(
        CHECK,
        "boolean_scatter",
        pad_by_mask,
        "correct",
        "A boolean mask of the real positions and one scatter of all tokens; an extra "
        "max_len argument with a default.",
    ),
]
