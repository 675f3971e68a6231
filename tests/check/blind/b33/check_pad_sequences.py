"""Blind set B33, check_pad_sequences (chapter 1): padding lists of token ids as readers do it."""

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
    rows = [[pad_value] * (T - len(s)) + list(s) for s in seqs]  # pad in front, like GPT
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_float_zeros(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T) + pad_value  # (B, T)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_always_zero(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T, dtype=torch.long)  # <pad> is id 0 anyway
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_width_of_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(seqs[0])
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        n = min(len(s), T)
        padded[b, :n] = torch.tensor(s[:n])
    return padded, torch.tensor([len(s) for s in seqs])


def pad_time_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, padding_value=pad_value)  # forgot batch_first=True
    return padded, torch.tensor([len(s) for s in seqs])


def pad_lengths_as_list(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, list]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, [len(s) for s in seqs]


def pad_lengths_by_counting(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    lengths = (padded != pad_value).sum(dim=1)  # count the non-pad tokens of each row
    return padded, lengths


def pad_float_lengths(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.Tensor([len(s) for s in seqs])


def pad_only_padded(seqs: list[list[int]], pad_value: int = 0) -> Tensor:
    T = max(len(s) for s in seqs)
    return torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs], dtype=torch.long)


def pad_lengths_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs], dtype=torch.long)
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    return lengths, padded


def pad_sorted_longest_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    seqs = sorted(seqs, key=len, reverse=True)  # pack_padded_sequence wants them sorted
    T = len(seqs[0])
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_one_extra_column(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs) + 1  # room for one more token
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_extend_in_place(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    for s in seqs:
        s.extend([pad_value] * (T - len(s)))  # pad the lists themselves
    lengths = torch.tensor([len(s) for s in seqs])
    return torch.tensor(seqs, dtype=torch.long), lengths


# ---------------------------------------------------------------- correct variants


def pad_with_torch_pad_sequence(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    lengths = torch.tensor([len(t) for t in tensors], dtype=torch.long)
    return padded, lengths


def pad_list_comprehension(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = [len(s) for s in seqs]
    T = max(lengths)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor(lengths, dtype=torch.long)


def pad_f_pad_and_stack(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    rows = [
        F.pad(torch.tensor(s, dtype=torch.long), (0, T - len(s)), value=pad_value) for s in seqs
    ]
    return torch.stack(rows), lengths


def pad_masked_scatter(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.as_tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    real = torch.arange(T)[None, :] < lengths[:, None]  # (B, T)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    flat = torch.tensor([t for s in seqs for t in s], dtype=torch.long)
    padded[real] = flat  # row-major order fills each row's first lengths[b] cells
    return padded, lengths


CASES = [
    BlindCase(
        CHECK,
        "pad_left",
        pad_left,
        "mistake",
        "I put the padding in front of the tokens, the way GPT batches are left-padded.",
    ),
    BlindCase(
        CHECK,
        "float_zeros",
        pad_float_zeros,
        "mistake",
        "I started from torch.zeros(B, T) and added pad_value, so the batch comes back as floats.",
    ),
    BlindCase(
        CHECK,
        "always_zero",
        pad_always_zero,
        "mistake",
        "I padded with torch.zeros because <pad> is id 0, and never used pad_value.",
    ),
    BlindCase(
        CHECK,
        "width_of_first",
        pad_width_of_first,
        "mistake",
        "I took T from the first sequence instead of the longest one.",
    ),
    BlindCase(
        CHECK,
        "time_first",
        pad_time_first,
        "mistake",
        "I used torch's pad_sequence but forgot batch_first=True, so I return (T, B).",
    ),
    BlindCase(
        CHECK,
        "lengths_as_list",
        pad_lengths_as_list,
        "mistake",
        "I return the lengths as a plain Python list, not a tensor.",
    ),
    BlindCase(
        CHECK,
        "lengths_by_counting",
        pad_lengths_by_counting,
        "mistake",
        "I got the lengths by counting the tokens that are not pad_value in each padded row.",
    ),
    BlindCase(
        CHECK,
        "float_lengths",
        pad_float_lengths,
        "mistake",
        "I built the lengths with torch.Tensor([...]), which makes them float.",
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
        "lengths_first",
        pad_lengths_first,
        "mistake",
        "I return (lengths, padded) instead of (padded, lengths).",
    ),
    BlindCase(
        CHECK,
        "sorted_longest_first",
        pad_sorted_longest_first,
        "mistake",
        "I sorted the sequences longest first, as pack_padded_sequence likes, so the rows "
        "are no longer in the order given.",
    ),
    BlindCase(
        CHECK,
        "one_extra_column",
        pad_one_extra_column,
        "mistake",
        "I made the batch max length + 1 wide, to leave room for one more token.",
    ),
    BlindCase(
        CHECK,
        "extend_in_place",
        pad_extend_in_place,
        "mistake",
        "I padded the caller's lists in place with extend() and took len() of each list "
        "afterwards for the lengths.",
    ),
    BlindCase(
        CHECK,
        "torch_pad_sequence",
        pad_with_torch_pad_sequence,
        "correct",
        "torch.nn.utils.rnn.pad_sequence with batch_first=True and padding_value=pad_value.",
    ),
    BlindCase(
        CHECK,
        "list_comprehension",
        pad_list_comprehension,
        "correct",
        "Each list extended with pad_value in a comprehension, then one torch.tensor(..., long).",
    ),
    BlindCase(
        CHECK,
        "f_pad_and_stack",
        pad_f_pad_and_stack,
        "correct",
        "Each row padded on the right with F.pad(value=pad_value), then torch.stack.",
    ),
    BlindCase(
        CHECK,
        "masked_scatter",
        pad_masked_scatter,
        "correct",
        "A full pad_value batch, with all the ids written at once through a boolean mask.",
    ),
]
