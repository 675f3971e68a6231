"""Blind cases for check_pad_sequences (chapter 1), written from the chapter's text only."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_pad_sequences"


# ---- mistakes -------------------------------------------------------------------------------


def width_of_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(seqs[0])  # I assumed the batch comes sorted, longest first
    rows = []
    for s in seqs:
        s = list(s)[:T]
        rows.append(s + [pad_value] * (T - len(s)))
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def left_padding(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [[pad_value] * (T - len(s)) + list(s) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def float_batch(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs])
    padded = torch.zeros(len(seqs), int(lengths.max()))  # float32 by default
    padded.fill_(pad_value)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.float32)
    return padded, lengths


def pad_value_ignored(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    padded = torch.zeros(len(seqs), int(lengths.max()), dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, lengths


def time_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = nn.utils.rnn.pad_sequence(tensors, padding_value=pad_value)  # batch_first forgotten
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def lengths_as_list(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, list[int]]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, [len(s) for s in seqs]


def lengths_counted_from_batch(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    lengths = (padded != 0).sum(dim=1)  # counted the non-zero ids, assuming padding is 0
    return padded, lengths


# ---- reader's slip ------------------------------------------------------------------------------


def only_the_batch(seqs: list[list[int]], pad_value: int = 0) -> Tensor:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded  # forgot the lengths


# ---- correct variants ---------------------------------------------------------------------------


def with_torch_pad_sequence(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.as_tensor(list(s), dtype=torch.long) for s in seqs]
    padded = nn.utils.rnn.pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    lengths = torch.tensor([len(t) for t in tensors], dtype=torch.long)
    return padded, lengths


def pure_python_rows(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    longest = 0
    for s in seqs:
        longest = max(longest, len(s))
    rows = [list(s) + [pad_value] * (longest - len(s)) for s in seqs]
    padded = torch.tensor(rows, dtype=torch.long).reshape(len(seqs), longest)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def masked_scatter_version(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.int64)
    T = int(lengths.max())
    real = torch.arange(T)[None, :] < lengths[:, None]  # (B, T)
    flat = torch.tensor([i for s in seqs for i in s], dtype=torch.int64)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.int64)
    padded[real] = flat  # row-major order fills each row's first positions
    return padded, lengths


CASES = [
    BlindCase(
        CHECK,
        "width_of_first",
        width_of_first,
        "mistake",
        "I took the batch width from the first sequence, thinking the batch was sorted longest first, and cut the longer ones",
    ),
    BlindCase(
        CHECK,
        "left_padding",
        left_padding,
        "mistake",
        "I put the padding before the tokens instead of after them",
    ),
    BlindCase(
        CHECK,
        "float_batch",
        float_batch,
        "mistake",
        "I built the batch with torch.zeros, so the ids come back as float32 instead of long",
    ),
    BlindCase(
        CHECK,
        "pad_value_ignored",
        pad_value_ignored,
        "mistake",
        "I always padded with zeros and never used pad_value",
    ),
    BlindCase(
        CHECK,
        "time_first",
        time_first,
        "mistake",
        "I used nn.utils.rnn.pad_sequence without batch_first=True, so the batch comes back (T, B)",
    ),
    BlindCase(
        CHECK,
        "lengths_as_list",
        lengths_as_list,
        "mistake",
        "I returned the lengths as a Python list instead of a (B,) long tensor",
    ),
    BlindCase(
        CHECK,
        "lengths_counted_from_batch",
        lengths_counted_from_batch,
        "mistake",
        "I counted the lengths as the non-zero entries of each padded row, which is wrong for another pad value or a real id 0",
    ),
    BlindCase(
        CHECK,
        "only_the_batch",
        only_the_batch,
        "mistake",
        "I returned only the padded batch and forgot to return the lengths",
    ),
    BlindCase(
        CHECK,
        "with_torch_pad_sequence",
        with_torch_pad_sequence,
        "correct",
        "I used nn.utils.rnn.pad_sequence with batch_first=True and padding_value",
    ),
    BlindCase(
        CHECK,
        "pure_python_rows",
        pure_python_rows,
        "correct",
        "I padded Python lists first and turned them into one long tensor at the end",
    ),
    BlindCase(
        CHECK,
        "masked_scatter_version",
        masked_scatter_version,
        "correct",
        "I filled a pad_value batch through a boolean mask of the real positions with all ids concatenated",
    ),
]
