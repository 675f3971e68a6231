"""Blind set B29, check_pad_sequences (chapter 1): padding lists of token ids as readers do it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn.utils.rnn import pad_sequence

from .. import BlindCase

CHECK = "check_pad_sequences"


# ---------------------------------------------------------------- mistakes


def pad_width_of_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(seqs[0])  # the batch comes sorted, longest first
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : min(len(s), T)] = torch.tensor(s[:T], dtype=torch.long)
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    return padded, lengths


def pad_on_the_left(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [[pad_value] * (T - len(s)) + list(s) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_with_zeros_always(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs])
    padded = torch.zeros(len(seqs), int(lengths.max()), dtype=torch.long)  # <pad> is id 0
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, lengths


def pad_float_batch(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs])
    padded = torch.zeros(len(seqs), int(lengths.max())) + pad_value
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, lengths


def pad_time_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, padding_value=pad_value)  # the default layout of nn.RNN
    return padded, torch.tensor([len(t) for t in tensors])


def pad_lengths_from_pad_ids(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs], dtype=torch.long)
    lengths = (padded != pad_value).sum(dim=1)  # count what is not padding
    return padded, lengths


def pad_returns_only_batch(seqs: list[list[int]], pad_value: int = 0) -> Tensor:
    T = max(len(s) for s in seqs)
    return torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs], dtype=torch.long)


def pad_returns_lengths_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs], dtype=torch.long)
    return torch.tensor([len(s) for s in seqs]), padded


def pad_lengths_last_index(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    lengths = torch.zeros(len(seqs), dtype=torch.long)
    for b, s in enumerate(seqs):
        for t, token in enumerate(s):
            padded[b, t] = token
            lengths[b] = t  # where the sequence ends
    return padded, lengths


def pad_one_extra_column(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs])
    T = int(lengths.max()) + 1  # room for a pad after every row
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, lengths


def pad_extend_in_place(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    for s in seqs:
        s.extend([pad_value] * (T - len(s)))
    lengths = torch.tensor([len(s) for s in seqs])
    return torch.tensor(seqs, dtype=torch.long), lengths


def pad_sorted_by_length(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    seqs = sorted(seqs, key=len, reverse=True)  # pack_padded_sequence wants them sorted
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_default_ignore_index(seqs: list[list[int]], pad_value: int = -100) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)  # -100: what the loss skips
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


# ---------------------------------------------------------------- correct variants


def pad_with_torch_utility(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.as_tensor(s, dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, batch_first=True, padding_value=pad_value)  # (B, T)
    lengths = torch.tensor([t.numel() for t in tensors], dtype=torch.long)  # (B,)
    return padded, lengths


def pad_python_lists(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = [len(s) for s in seqs]
    T = max(lengths)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]  # new lists, inputs untouched
    return torch.tensor(rows, dtype=torch.long), torch.tensor(lengths, dtype=torch.long)


def pad_scatter_by_mask(
    seqs: list[list[int]], pad_value: int = 0, max_len: int | None = None
) -> tuple[Tensor, Tensor]:
    """All ids in one flat tensor, written where the mask is True; max_len optional."""
    seqs = [list(s)[:max_len] if max_len is not None else list(s) for s in seqs]
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = max_len if max_len is not None else int(lengths.max())
    flat = torch.tensor([t for s in seqs for t in s], dtype=torch.long)
    real = torch.arange(T)[None, :] < lengths[:, None]  # (B, T), row-major like flat
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    padded[real] = flat
    return padded, lengths


def pad_functional_pad(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [
        F.pad(torch.tensor(s, dtype=torch.long), (0, T - len(s)), value=pad_value) for s in seqs
    ]
    return torch.stack(rows), torch.tensor([len(s) for s in seqs], dtype=torch.long)


CASES = [
    BlindCase(
        CHECK,
        "width_of_first_row",
        pad_width_of_first,
        "mistake",
        "I took T from the first sequence, assuming the longest comes first, so longer rows "
        "get cut.",
    ),
    BlindCase(
        CHECK,
        "left_padding",
        pad_on_the_left,
        "mistake",
        "I put the pad ids before the tokens instead of after them.",
    ),
    BlindCase(
        CHECK,
        "pad_value_ignored",
        pad_with_zeros_always,
        "mistake",
        "I started from torch.zeros because <pad> is id 0, so pad_value is never used.",
    ),
    BlindCase(
        CHECK,
        "float_batch",
        pad_float_batch,
        "mistake",
        "I built the batch from torch.zeros(B, T) + pad_value, which is float, not long.",
    ),
    BlindCase(
        CHECK,
        "time_first",
        pad_time_first,
        "mistake",
        "I used pad_sequence without batch_first=True, so the batch comes out (T, B).",
    ),
    BlindCase(
        CHECK,
        "lengths_from_pad_ids",
        pad_lengths_from_pad_ids,
        "mistake",
        "I counted the lengths as the entries that differ from pad_value, which is wrong when a "
        "real token has the same id as the padding.",
    ),
    BlindCase(
        CHECK,
        "returns_only_batch",
        pad_returns_only_batch,
        "mistake",
        "I returned just the padded tensor and forgot the lengths.",
    ),
    BlindCase(
        CHECK,
        "lengths_first",
        pad_returns_lengths_first,
        "mistake",
        "I return (lengths, padded) instead of (padded, lengths).",
    ),
    BlindCase(
        CHECK,
        "lengths_last_index",
        pad_lengths_last_index,
        "mistake",
        "I stored for each row the index of its last token, so every length is one short.",
    ),
    BlindCase(
        CHECK,
        "one_extra_column",
        pad_one_extra_column,
        "mistake",
        "I made the batch one column wider than the longest sequence, to leave room for a pad.",
    ),
    BlindCase(
        CHECK,
        "extend_in_place",
        pad_extend_in_place,
        "mistake",
        "I padded the caller's lists in place with extend and only then measured the lengths, "
        "so every length is T (and the input lists are changed).",
    ),
    BlindCase(
        CHECK,
        "sorted_by_length",
        pad_sorted_by_length,
        "mistake",
        "I sorted the sequences longest first, as pack_padded_sequence wants, so the rows no "
        "longer come back in the caller's order.",
    ),
    BlindCase(
        CHECK,
        "default_minus_100",
        pad_default_ignore_index,
        "mistake",
        "I made -100 the default pad_value, the index cross_entropy ignores, instead of 0.",
    ),
    BlindCase(
        CHECK,
        "torch_pad_sequence",
        pad_with_torch_utility,
        "correct",
        "torch.nn.utils.rnn.pad_sequence with batch_first=True and padding_value.",
    ),
    BlindCase(
        CHECK,
        "python_lists",
        pad_python_lists,
        "correct",
        "Padded as new Python lists, then one torch.tensor(..., dtype=torch.long).",
    ),
    BlindCase(
        CHECK,
        "scatter_by_mask",
        pad_scatter_by_mask,
        "correct",
        "All ids flattened and written through a boolean mask in one assignment; an optional "
        "max_len argument with default None.",
    ),
    BlindCase(
        CHECK,
        "functional_pad",
        pad_functional_pad,
        "correct",
        "Each row right-padded with F.pad(..., value=pad_value), then torch.stack.",
    ),
]
