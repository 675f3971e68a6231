"""Blind set B9, check_pad_sequences (chapter 1): padding lists of token ids into a batch."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn.utils.rnn import pad_sequence

from .. import BlindCase

CHECK = "check_pad_sequences"

# ---------------------------------------------------------------- mistakes


def pad_width_of_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(seqs[0])  # the batch is as wide as its first sentence
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        s = s[:T]
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    return padded, lengths


def pad_float_zeros(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs])
    padded = torch.zeros(len(seqs), int(lengths.max())) + pad_value  # float32 by default
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, lengths


def pad_on_the_left(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    rows = [[pad_value] * (T - len(s)) + list(s) for s in seqs]  # padding before the tokens
    return torch.tensor(rows, dtype=torch.long), lengths


def pad_ignores_pad_value(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    padded = torch.zeros(len(seqs), int(lengths.max()), dtype=torch.long)  # <pad> is 0 anyway
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, lengths


def pad_time_major(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, padding_value=pad_value)  # forgot batch_first=True: (T, B)
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    return padded, lengths


def pad_lengths_from_padded(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    lengths = (padded != pad_value).sum(dim=1)  # count the non-pad ids
    return padded, lengths


def pad_lengths_last_index(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    lengths = torch.tensor([len(s) - 1 for s in seqs], dtype=torch.long)  # index of last token
    return padded, lengths


def pad_extra_column(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max()) + 1  # one more column, room for <eos>
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, lengths


def pad_sorted_by_length(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    seqs = sorted(seqs, key=len, reverse=True)  # pack_padded_sequence wants them sorted
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    return padded, lengths


def pad_lengths_as_int32(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.int32)  # "small numbers"
    return padded, lengths


# ---------------------------------------------------------------- correct variants


def pad_with_torch_pad_sequence(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    lengths = torch.tensor([len(t) for t in tensors], dtype=torch.long)
    return padded, lengths


def pad_python_lists(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_with_f_pad(
    seqs: list[list[int]], pad_value: int = 0, max_len: int | None = None
) -> tuple[Tensor, Tensor]:
    tensors = [torch.as_tensor(list(s), dtype=torch.long) for s in seqs]
    if max_len is not None:
        tensors = [t[:max_len] for t in tensors]
    lengths = torch.tensor([t.numel() for t in tensors], dtype=torch.long)
    T = max_len if max_len is not None else int(lengths.max())
    rows = [F.pad(t, (0, T - t.numel()), value=pad_value) for t in tensors]
    return torch.stack(rows), lengths


def pad_mask_fill(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    padded = torch.zeros(len(seqs), T, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    is_pad = torch.arange(T)[None, :] >= lengths[:, None]
    return padded.masked_fill(is_pad, pad_value), lengths


CASES = [
    BlindCase(
        CHECK,
        "width_of_first_sequence",
        pad_width_of_first,
        "mistake",
        "I made the batch as wide as the first sentence (and cut the longer ones to fit) "
        "instead of the longest one.",
    ),
    BlindCase(
        CHECK,
        "float_batch",
        pad_float_zeros,
        "mistake",
        "I started from torch.zeros(B, T) + pad_value, so the batch of ids is float32, not long.",
    ),
    BlindCase(
        CHECK,
        "left_padding",
        pad_on_the_left,
        "mistake",
        "I put the padding before the tokens (left padding) instead of after them.",
    ),
    BlindCase(
        CHECK,
        "pad_value_ignored",
        pad_ignores_pad_value,
        "mistake",
        "I always padded with 0 (the <pad> id) and never used the pad_value argument.",
    ),
    BlindCase(
        CHECK,
        "time_major_pad_sequence",
        pad_time_major,
        "mistake",
        "I used torch's pad_sequence but forgot batch_first=True, so the batch is (T, B).",
    ),
    BlindCase(
        CHECK,
        "lengths_counted_from_padded",
        pad_lengths_from_padded,
        "mistake",
        "I computed the lengths by counting ids different from pad_value in the padded "
        "batch, which is wrong when a real token has the pad value's id.",
    ),
    BlindCase(
        CHECK,
        "lengths_minus_one",
        pad_lengths_last_index,
        "mistake",
        "I returned len(s) - 1 (the index of the last token) as each length.",
    ),
    BlindCase(
        CHECK,
        "one_column_too_many",
        pad_extra_column,
        "mistake",
        "I made the batch one column wider than the longest sequence to leave room for <eos>.",
    ),
    BlindCase(
        CHECK,
        "sorted_by_length",
        pad_sorted_by_length,
        "mistake",
        "I sorted the sequences longest first (as pack_padded_sequence wants), so the rows "
        "no longer come in the order they were given.",
    ),
    BlindCase(
        CHECK,
        "lengths_int32",
        pad_lengths_as_int32,
        "mistake",
        "I stored the lengths as int32 instead of long.",
    ),
    BlindCase(
        CHECK,
        "torch_pad_sequence",
        pad_with_torch_pad_sequence,
        "correct",
        "I used torch.nn.utils.rnn.pad_sequence with batch_first=True and padding_value.",
    ),
    BlindCase(
        CHECK,
        "python_lists_then_tensor",
        pad_python_lists,
        "correct",
        "I padded the Python lists first and turned them into one long tensor at the end.",
    ),
    BlindCase(
        CHECK,
        "f_pad_each_row_with_max_len",
        pad_with_f_pad,
        "correct",
        "I padded each row with F.pad and stacked them; I also accept an optional max_len.",
    ),
    BlindCase(
        CHECK,
        "zeros_then_masked_fill",
        pad_mask_fill,
        "correct",
        "I filled a zero batch with the ids and then wrote pad_value where the position is "
        "past the length with masked_fill.",
    ),
]
