"""Blind set B24, check_pad_sequences (chapter 1): padding lists of token ids as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn.utils.rnn import pad_sequence

from .. import BlindCase

CHECK = "check_pad_sequences"


# ---------------------------------------------------------------- mistakes


def pad_width_of_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(seqs[0])  # every row as wide as the first one
    rows = [list(s[:T]) + [pad_value] * (T - len(s[:T])) for s in seqs]
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    return torch.tensor(rows, dtype=torch.long), lengths


def pad_on_the_left(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [[pad_value] * (T - len(s)) + list(s) for s in seqs]
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    return torch.tensor(rows, dtype=torch.long), lengths


def pad_zeros_whatever_value(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    padded = torch.zeros(len(seqs), int(lengths.max()), dtype=torch.long)  # <pad> is id 0
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, lengths


def pad_float_batch(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    padded = torch.zeros(len(seqs), int(lengths.max()))
    padded.fill_(pad_value)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, lengths


def pad_time_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, padding_value=pad_value)  # PyTorch's default layout
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def pad_lengths_as_list(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, list]:
    lengths = [len(s) for s in seqs]
    T = max(lengths)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, lengths


def pad_lengths_int32(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.IntTensor([len(s) for s in seqs])  # what pack_padded_sequence used to want
    padded = torch.full((len(seqs), int(lengths.max())), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, lengths


def pad_returns_lengths_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    padded = torch.full((len(seqs), int(lengths.max())), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return lengths, padded


def pad_one_extra_column(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max()) + 1  # room for one more token
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, lengths


def pad_sorted_by_length(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    seqs = sorted(seqs, key=len, reverse=True)  # longest first, as packing wants
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    padded = torch.full((len(seqs), int(lengths[0])), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, lengths


def pad_extends_inputs(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    for s in seqs:
        s.extend([pad_value] * (T - len(s)))  # pad each list where it is
    return torch.tensor(seqs, dtype=torch.long), lengths


def pad_lengths_of_padded_rows(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    lengths = torch.tensor([len(row) for row in padded], dtype=torch.long)  # (B,)
    return padded, lengths


def pad_max_len_required(
    seqs: list[list[int]], max_len: int, pad_value: int = 0
) -> tuple[Tensor, Tensor]:
    rows = [list(s[:max_len]) + [pad_value] * (max_len - len(s[:max_len])) for s in seqs]
    lengths = torch.tensor([min(len(s), max_len) for s in seqs], dtype=torch.long)
    return torch.tensor(rows, dtype=torch.long), lengths


# ---------------------------------------------------------------- correct variants


def pad_with_pad_sequence(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.as_tensor(s, dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, batch_first=True, padding_value=pad_value)  # (B, T)
    lengths = torch.tensor([t.numel() for t in tensors], dtype=torch.long)
    return padded, lengths


def pad_with_f_pad(
    seqs: list[list[int]], pad_value: int = 0, max_len: int | None = None
) -> tuple[Tensor, Tensor]:
    """Each row padded on the right with F.pad, then stacked; an optional cut as in the book."""
    rows = [torch.tensor(list(s), dtype=torch.long) for s in seqs]
    if max_len is not None:
        rows = [r[:max_len] for r in rows]
    lengths = torch.tensor([r.shape[0] for r in rows], dtype=torch.long)
    T = max_len if max_len is not None else int(lengths.max())
    padded = torch.stack([F.pad(r, (0, T - r.shape[0]), value=pad_value) for r in rows])
    return padded, lengths


def pad_python_lists(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    longest = max(map(len, seqs))
    rows = [[*s, *([pad_value] * (longest - len(s)))] for s in seqs]  # new lists, inputs untouched
    return torch.LongTensor(rows).view(len(seqs), longest), torch.LongTensor(list(map(len, seqs)))


def pad_mask_scatter(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    real = torch.arange(T)[None, :] < lengths[:, None]  # (B, T)
    flat = torch.tensor([tok for s in seqs for tok in s], dtype=torch.long)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    padded[real] = flat  # row-major order matches the concatenation
    return padded, lengths


CASES = [
    BlindCase(
        CHECK,
        "width_of_first_row",
        pad_width_of_first,
        "mistake",
        "I took T as the length of the first sequence, so longer rows are cut.",
    ),
    BlindCase(
        CHECK,
        "pad_on_left",
        pad_on_the_left,
        "mistake",
        "I put the padding before the tokens instead of after them.",
    ),
    BlindCase(
        CHECK,
        "pad_value_ignored",
        pad_zeros_whatever_value,
        "mistake",
        "I started from torch.zeros since <pad> is id 0, and never used pad_value.",
    ),
    BlindCase(
        CHECK,
        "float_batch",
        pad_float_batch,
        "mistake",
        "I made the batch with torch.zeros(B, T) and filled it, so it is float32, not long.",
    ),
    BlindCase(
        CHECK,
        "time_first",
        pad_time_first,
        "mistake",
        "I used nn.utils.rnn.pad_sequence without batch_first=True, so I return (T, B).",
    ),
    BlindCase(
        CHECK,
        "lengths_python_list",
        pad_lengths_as_list,
        "mistake",
        "I return the lengths as a Python list instead of a (B,) tensor.",
    ),
    BlindCase(
        CHECK,
        "lengths_int32",
        pad_lengths_int32,
        "mistake",
        "I built the lengths with torch.IntTensor, so they are int32 rather than long.",
    ),
    BlindCase(
        CHECK,
        "returns_lengths_first",
        pad_returns_lengths_first,
        "mistake",
        "I return (lengths, padded) instead of (padded, lengths).",
    ),
    BlindCase(
        CHECK,
        "one_extra_column",
        pad_one_extra_column,
        "mistake",
        "I made the batch one column wider than the longest sequence.",
    ),
    BlindCase(
        CHECK,
        "rows_sorted_by_length",
        pad_sorted_by_length,
        "mistake",
        "I sorted the sequences longest first before padding, so the rows come back in another "
        "order than the input.",
    ),
    BlindCase(
        CHECK,
        "extends_input_lists",
        pad_extends_inputs,
        "mistake",
        "I padded the caller's lists in place with extend, then made the tensor from them.",
    ),
    BlindCase(
        CHECK,
        "lengths_of_padded_rows",
        pad_lengths_of_padded_rows,
        "mistake",
        "I measured the lengths on the padded rows, so every length is T.",
    ),
    BlindCase(
        CHECK,
        "max_len_required",
        pad_max_len_required,
        "mistake",
        "I kept the chapter's max_len but as a required second argument, before pad_value.",
    ),
    BlindCase(
        CHECK,
        "nn_pad_sequence_batch_first",
        pad_with_pad_sequence,
        "correct",
        "PyTorch's pad_sequence with batch_first=True and padding_value.",
    ),
    BlindCase(
        CHECK,
        "f_pad_rows_optional_max_len",
        pad_with_f_pad,
        "correct",
        "Each row padded on the right with F.pad and stacked; an optional max_len as a third "
        "argument.",
    ),
    BlindCase(
        CHECK,
        "python_lists_longtensor",
        pad_python_lists,
        "correct",
        "New padded Python lists, turned into a LongTensor at the end.",
    ),
    BlindCase(
        CHECK,
        "boolean_index_fill",
        pad_mask_scatter,
        "correct",
        "A full pad_value batch whose real positions (a mask) get the concatenated ids.",
    ),
]
