"""Blind set B16, check_pad_sequences (chapter 1): padding lists of token ids as readers write it."""

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
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_on_the_left(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [[pad_value] * (T - len(s)) + list(s) for s in seqs]  # padding before the tokens
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_with_zeros_always(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    padded = torch.zeros(len(seqs), int(lengths.max()), dtype=torch.long)  # <pad> is id 0
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, lengths


def pad_float_batch(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    padded = torch.zeros(len(seqs), int(lengths.max())) + pad_value  # float32 by default
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, lengths


def pad_time_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, padding_value=pad_value)  # PyTorch's default layout
    return padded, torch.tensor([len(s) for s in seqs])


def pad_lengths_by_nonzero(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs])
    lengths = (padded != 0).sum(dim=1)  # count the non-pad ids (pad is 0)
    return padded, lengths


def pad_lengths_as_list(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, list]:
    T = max(len(s) for s in seqs)
    padded = torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs])
    return padded, [len(s) for s in seqs]  # a plain list is enough for the lengths


def pad_in_place(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    for s in seqs:
        s.extend([pad_value] * (T - len(s)))  # pad the lists themselves, no copies
    return torch.tensor(seqs, dtype=torch.long), lengths


def pad_extra_column(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs) + 1  # one more column so every row ends in a pad
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_returns_only_batch(seqs: list[list[int]], pad_value: int = 0) -> Tensor:
    T = max(len(s) for s in seqs)
    return torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs])  # (B, T)


# ---------------------------------------------------------------- correct variants


def pad_with_torch_utility(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.as_tensor(s, dtype=torch.long) for s in seqs]
    lengths = torch.tensor([t.numel() for t in tensors], dtype=torch.long)
    return pad_sequence(tensors, batch_first=True, padding_value=pad_value), lengths


def pad_plain_python(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = [len(s) for s in seqs]
    T = max(lengths)
    rows = [[*s, *([pad_value] * (T - n))] for s, n in zip(seqs, lengths)]
    return torch.tensor(rows, dtype=torch.int64), torch.tensor(lengths, dtype=torch.int64)


def pad_each_with_f_pad(
    seqs: list[list[int]], pad_value: int = 0, max_len: int | None = None
) -> tuple[Tensor, Tensor]:
    """F.pad on every row, then stack; an optional max_len cuts and fixes the width."""
    tensors = [torch.tensor(list(s), dtype=torch.long) for s in seqs]
    if max_len is not None:
        tensors = [t[:max_len] for t in tensors]
    lengths = torch.tensor([len(t) for t in tensors], dtype=torch.long)
    T = max_len if max_len is not None else int(lengths.max())
    rows = [F.pad(t, (0, T - len(t)), value=pad_value) for t in tensors]
    return torch.stack(rows), lengths


def pad_by_mask_scatter(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    real = torch.arange(T)[None, :] < lengths[:, None]  # (B, T)
    flat = torch.tensor([tok for s in seqs for tok in s], dtype=torch.long)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    padded[real] = flat  # row-major order of the True cells = the tokens in order
    return padded, lengths


CASES = [
    BlindCase(
        CHECK,
        "width_of_first_sequence",
        pad_width_of_first,
        "mistake",
        "I took T from the first sequence, so longer sequences later in the list get cut.",
    ),
    BlindCase(
        CHECK,
        "pad_on_the_left",
        pad_on_the_left,
        "mistake",
        "I put the padding before the tokens (left padding) instead of after them.",
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
        "I built the batch as torch.zeros(B, T) + pad_value, which is float32, not long.",
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
        "lengths_from_nonzero",
        pad_lengths_by_nonzero,
        "mistake",
        "I counted the lengths as the ids that are not 0, which counts the padding as real "
        "tokens when pad_value is not 0.",
    ),
    BlindCase(
        CHECK,
        "lengths_as_list",
        pad_lengths_as_list,
        "mistake",
        "I returned the lengths as a Python list instead of a (B,) long tensor.",
    ),
    BlindCase(
        CHECK,
        "pads_input_lists_in_place",
        pad_in_place,
        "mistake",
        "I extended the caller's lists with pad_value in place, so the input is changed and a "
        "second call on the same lists reports every length as T.",
    ),
    BlindCase(
        CHECK,
        "one_extra_column",
        pad_extra_column,
        "mistake",
        "I made the batch one column wider than the longest sequence, so that every row ends "
        "with a pad.",
    ),
    BlindCase(
        CHECK,
        "no_lengths_returned",
        pad_returns_only_batch,
        "mistake",
        "I returned only the padded batch and forgot the lengths.",
    ),
    BlindCase(
        CHECK,
        "torch_pad_sequence_batch_first",
        pad_with_torch_utility,
        "correct",
        "nn.utils.rnn.pad_sequence with batch_first=True and padding_value=pad_value.",
    ),
    BlindCase(
        CHECK,
        "plain_python_rows",
        pad_plain_python,
        "correct",
        "Rows padded as Python lists, then one torch.tensor(..., dtype=torch.int64).",
    ),
    BlindCase(
        CHECK,
        "f_pad_and_stack_with_max_len",
        pad_each_with_f_pad,
        "correct",
        "F.pad on each row and torch.stack; an extra optional max_len argument.",
    ),
    BlindCase(
        CHECK,
        "fill_through_mask",
        pad_by_mask_scatter,
        "correct",
        "A full pad_value batch, the tokens written in one go through the padding mask.",
    ),
]
