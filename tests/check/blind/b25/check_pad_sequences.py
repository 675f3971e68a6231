"""Blind set B25, check_pad_sequences (chapter 1): padding lists of token ids as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_pad_sequences"


# ---------------------------------------------------------------- mistakes


def pad_width_of_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(seqs[0])  # the batch is as wide as its sequences
    rows = [list(s[:T]) + [pad_value] * (T - len(s[:T])) for s in seqs]
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    return torch.tensor(rows, dtype=torch.long), lengths


def pad_float_zeros(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs])
    padded = torch.zeros(len(seqs), int(lengths.max())) + pad_value  # float by default
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, lengths


def pad_on_the_left(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [[pad_value] * (T - len(s)) + list(s) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_ignores_pad_value(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T, dtype=torch.long)  # <pad> is id 0
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_returns_only_batch(seqs: list[list[int]], pad_value: int = 0) -> Tensor:
    T = max(len(s) for s in seqs)
    return torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs], dtype=torch.long)


def pad_lengths_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return lengths, padded


def pad_time_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = torch.nn.utils.rnn.pad_sequence(tensors, padding_value=pad_value)  # (T, B)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_lengths_from_pads(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs], dtype=torch.long)
    lengths = (padded != pad_value).sum(dim=1)  # the real tokens are the ones that are not pad
    return padded, lengths


def pad_lengths_python_list(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, list]:
    lengths = [len(s) for s in seqs]
    T = max(lengths)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, lengths


def pad_room_for_eos(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max()) + 1  # one more column so that every row ends with a pad
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, lengths


def pad_last_index(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    last = []
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
        last.append(len(s) - 1)  # where each row's last real token is
    return padded, torch.tensor(last, dtype=torch.long)


def pad_default_ignore_index(seqs: list[list[int]], pad_value: int = -100) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)  # -100, what the loss ignores
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def pad_sorted_longest_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    seqs = sorted(seqs, key=len, reverse=True)  # longest first, as packing wants
    T = len(seqs[0])
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def pad_extends_in_place(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    for s in seqs:
        s.extend([pad_value] * (T - len(s)))  # pad the lists themselves, then stack
    return torch.tensor(seqs, dtype=torch.long), lengths


def pad_int32(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    padded = torch.tensor(rows, dtype=torch.int32)  # ids are small integers
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.int32)


# ---------------------------------------------------------------- correct variants


def pad_with_torch_helper(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.as_tensor(s, dtype=torch.long) for s in seqs]
    padded = torch.nn.utils.rnn.pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    lengths = torch.tensor([t.numel() for t in tensors], dtype=torch.long)
    return padded, lengths


def pad_python_lists(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    longest = max(len(s) for s in seqs)
    rows = []
    for s in seqs:
        row = list(s)  # a copy, so the caller's lists stay as they are
        while len(row) < longest:
            row.append(pad_value)
        rows.append(row)
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_masked_scatter(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    real = torch.arange(T)[None, :] < lengths[:, None]  # (B, T)
    flat = torch.tensor([tok for s in seqs for tok in s], dtype=torch.long)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    padded.masked_scatter_(real, flat)  # fills the True cells row by row
    return padded, lengths


def pad_each_then_stack(
    seqs: list[list[int]], pad_value: int = 0, max_len: int | None = None
) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(list(s), dtype=torch.long) for s in seqs]
    if max_len is not None:
        tensors = [t[:max_len] for t in tensors]
    T = max_len if max_len is not None else max(len(t) for t in tensors)
    rows = [F.pad(t, (0, T - len(t)), value=pad_value) for t in tensors]
    return torch.stack(rows), torch.tensor([len(t) for t in tensors], dtype=torch.long)


CASES = [
    BlindCase(
        CHECK,
        "width_of_first_sequence",
        pad_width_of_first,
        "mistake",
        "I made the batch as wide as the first sequence, so longer ones later in the list get cut.",
    ),
    BlindCase(
        CHECK,
        "float_zeros",
        pad_float_zeros,
        "mistake",
        "I started from torch.zeros(B, T) + pad_value, so the batch is float, not long.",
    ),
    BlindCase(
        CHECK,
        "pad_on_the_left",
        pad_on_the_left,
        "mistake",
        "I put the padding before the tokens instead of after them.",
    ),
    BlindCase(
        CHECK,
        "ignores_pad_value",
        pad_ignores_pad_value,
        "mistake",
        "I always padded with zeros, since <pad> is id 0, and never used pad_value.",
    ),
    BlindCase(
        CHECK,
        "returns_only_batch",
        pad_returns_only_batch,
        "mistake",
        "I returned the padded batch alone and forgot the lengths.",
    ),
    BlindCase(
        CHECK,
        "lengths_first",
        pad_lengths_first,
        "mistake",
        "I returned (lengths, padded) instead of (padded, lengths).",
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
        "lengths_counted_from_pads",
        pad_lengths_from_pads,
        "mistake",
        "I counted the lengths as the cells that are not pad_value, which is wrong when a "
        "sequence itself contains that id.",
    ),
    BlindCase(
        CHECK,
        "lengths_python_list",
        pad_lengths_python_list,
        "mistake",
        "I returned the lengths as a Python list, not a (B,) long tensor.",
    ),
    BlindCase(
        CHECK,
        "extra_column_for_eos",
        pad_room_for_eos,
        "mistake",
        "I made the batch one column wider than the longest sequence, so every row ends in a pad.",
    ),
    BlindCase(
        CHECK,
        "lengths_are_last_index",
        pad_last_index,
        "mistake",
        "I returned the index of each row's last token (length - 1) as the lengths.",
    ),
    BlindCase(
        CHECK,
        "default_pad_minus_100",
        pad_default_ignore_index,
        "mistake",
        "I gave pad_value the default -100, the index cross-entropy ignores, instead of 0.",
    ),
    BlindCase(
        CHECK,
        "sorted_longest_first",
        pad_sorted_longest_first,
        "mistake",
        "I sorted the sequences longest first (as packing wants), so the rows are no longer in "
        "the order they came in.",
    ),
    BlindCase(
        CHECK,
        "extends_caller_lists",
        pad_extends_in_place,
        "mistake",
        "I padded the caller's lists in place with extend before stacking them, so a second call "
        "on the same lists sees the padding as tokens.",
    ),
    BlindCase(
        CHECK,
        "int32_ids",
        pad_int32,
        "mistake",
        "I stored the ids and lengths as int32 to save memory instead of long.",
    ),
    BlindCase(
        CHECK,
        "torch_pad_sequence",
        pad_with_torch_helper,
        "correct",
        "nn.utils.rnn.pad_sequence with batch_first=True and padding_value, lengths from numel.",
    ),
    BlindCase(
        CHECK,
        "python_lists",
        pad_python_lists,
        "correct",
        "Each row padded as a copied Python list with a while loop, then one torch.tensor.",
    ),
    BlindCase(
        CHECK,
        "masked_scatter",
        pad_masked_scatter,
        "correct",
        "A full pad_value batch, then all the tokens written through the mask with masked_scatter_.",
    ),
    BlindCase(
        CHECK,
        "pad_each_then_stack",
        pad_each_then_stack,
        "correct",
        "F.pad on each row then torch.stack; an optional max_len argument with a None default.",
    ),
]
