"""Blind set B17, check_pad_sequences (chapter 1): padding lists of token ids as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_pad_sequences"


# ---------------------------------------------------------------- mistakes


def pad_width_of_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(seqs[0])  # the batches are sorted, so the first row is the longest
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_float_full(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs])
    padded = torch.full((len(seqs), int(lengths.max())), float(pad_value))  # float32
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, lengths


def pad_on_the_left(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [[pad_value] * (T - len(s)) + list(s) for s in seqs]  # right-aligned, like GPT prompts
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_zeros_always(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T, dtype=torch.long)  # <pad> is id 0 anyway
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_time_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = torch.nn.utils.rnn.pad_sequence(tensors, padding_value=pad_value)  # (T, B)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_sorted_by_length(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    seqs = sorted(seqs, key=len, reverse=True)  # pack_padded_sequence wants them sorted
    T = len(seqs[0])
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_lengths_float(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.Tensor([len(s) for s in seqs])  # torch.Tensor, capital T


def pad_extend_in_place(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    for s in seqs:
        s.extend([pad_value] * (T - len(s)))  # fill each list up to T
    lengths = torch.tensor([len(s) for s in seqs])
    return torch.tensor(seqs, dtype=torch.long), lengths


def pad_extend_copy_lengths_first(
    seqs: list[list[int]], pad_value: int = 0
) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs])
    T = int(lengths.max())
    for s in seqs:
        s += [pad_value] * (T - len(s))  # the caller's lists grow too
    return torch.tensor(seqs, dtype=torch.long), lengths


def pad_room_for_eos(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs) + 1  # one more column so that every row ends in padding
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_lengths_as_list(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, list[int]]:
    lengths = [len(s) for s in seqs]
    padded = torch.full((len(seqs), max(lengths)), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, lengths


# ---------------------------------------------------------------- correct variants


def pad_with_torch_utility(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.as_tensor(s, dtype=torch.long) for s in seqs]
    padded = torch.nn.utils.rnn.pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    lengths = torch.tensor([t.numel() for t in tensors], dtype=torch.long)
    return padded, lengths


def pad_with_f_pad(
    seqs: list[list[int]], pad_value: int = 0, max_len: int | None = None
) -> tuple[Tensor, Tensor]:
    """F.pad on each row, then stack; an optional max_len that cuts."""
    rows = [torch.tensor(s[:max_len] if max_len is not None else s, dtype=torch.long) for s in seqs]
    lengths = torch.tensor([len(r) for r in rows], dtype=torch.long)
    T = max_len if max_len is not None else int(lengths.max())
    padded = torch.stack([F.pad(r, (0, T - len(r)), value=pad_value) for r in rows])
    return padded, lengths


def pad_python_lists(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    """Plain Python lists first (new lists, the inputs are left alone), one tensor at the end."""
    longest = max(map(len, seqs))
    rows = [list(s) + [pad_value] * (longest - len(s)) for s in seqs]
    return torch.LongTensor(rows), torch.LongTensor([len(s) for s in seqs])


def pad_with_mask_scatter(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    """A mask of the real positions, then one masked assignment of all the ids."""
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    real = torch.arange(int(lengths.max()))[None, :] < lengths[:, None]  # (B, T)
    padded = torch.full(real.shape, pad_value, dtype=torch.long)
    padded[real] = torch.tensor([i for s in seqs for i in s], dtype=torch.long)
    return padded, lengths


CASES = [
    BlindCase(
        CHECK,
        "width_of_first_row",
        pad_width_of_first,
        "mistake",
        "I took T from the first sequence, thinking the batch is sorted longest first.",
    ),
    BlindCase(
        CHECK,
        "float_padded",
        pad_float_full,
        "mistake",
        "I made the batch with torch.full(..., float(pad_value)), so the ids come back as float32.",
    ),
    BlindCase(
        CHECK,
        "left_padding",
        pad_on_the_left,
        "mistake",
        "I put the padding before the tokens, right-aligning every row.",
    ),
    BlindCase(
        CHECK,
        "pad_value_ignored",
        pad_zeros_always,
        "mistake",
        "I started from torch.zeros because <pad> is id 0, so another pad_value is never used.",
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
        "sorted_by_length",
        pad_sorted_by_length,
        "mistake",
        "I sorted the sequences longest first (as pack_padded_sequence wants), so the rows no "
        "longer follow the input order.",
    ),
    BlindCase(
        CHECK,
        "lengths_float",
        pad_lengths_float,
        "mistake",
        "I made the lengths with torch.Tensor([...]), which gives float32, not long.",
    ),
    BlindCase(
        CHECK,
        "extend_in_place_lengths_after",
        pad_extend_in_place,
        "mistake",
        "I extended each input list with pad_value up to T and counted the lengths afterwards, "
        "so every length is T (and the caller's lists changed).",
    ),
    BlindCase(
        CHECK,
        "extend_callers_lists",
        pad_extend_copy_lengths_first,
        "mistake",
        "I padded the caller's lists in place with +=; the result is right but the input lists "
        "now hold padding.",
    ),
    BlindCase(
        CHECK,
        "one_column_too_many",
        pad_room_for_eos,
        "mistake",
        "I made the batch one column wider than the longest sequence, to leave room at the end.",
    ),
    BlindCase(
        CHECK,
        "lengths_python_list",
        pad_lengths_as_list,
        "mistake",
        "I returned the lengths as a Python list instead of a (B,) long tensor.",
    ),
    BlindCase(
        CHECK,
        "nn_utils_pad_sequence",
        pad_with_torch_utility,
        "correct",
        "nn.utils.rnn.pad_sequence with batch_first=True and padding_value=pad_value.",
    ),
    BlindCase(
        CHECK,
        "f_pad_rows_with_max_len",
        pad_with_f_pad,
        "correct",
        "F.pad on each row then torch.stack; an extra optional max_len argument (default None).",
    ),
    BlindCase(
        CHECK,
        "python_lists_longtensor",
        pad_python_lists,
        "correct",
        "Padded copies of the lists in Python, turned into tensors with torch.LongTensor.",
    ),
    BlindCase(
        CHECK,
        "mask_then_masked_assignment",
        pad_with_mask_scatter,
        "correct",
        "A (B, T) mask of real positions and one masked assignment of all the ids.",
    ),
]
