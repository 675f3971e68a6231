"""Blind set B30, check_pad_sequences (chapter 1): padding lists of token ids, as readers do it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_pad_sequences"


# ---------------------------------------------------------------- mistakes


def pad_width_of_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(seqs[0])  # the batch is as wide as the first sentence
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        n = min(len(s), T)
        padded[b, :n] = torch.tensor(s[:n], dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_on_the_left(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [[pad_value] * (T - len(s)) + list(s) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_zeros_always(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T, dtype=torch.long)  # <pad> is id 0 anyway
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_returns_only_batch(seqs: list[list[int]], pad_value: int = 0) -> Tensor:
    T = max(len(s) for s in seqs)
    return torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs])


def pad_lengths_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs])
    T = int(lengths.max())
    padded = torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs])
    return lengths, padded


def pad_time_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = torch.nn.utils.rnn.pad_sequence(tensors, padding_value=pad_value)  # (T, B)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_float_batch(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), float(pad_value))  # torch.full gives floats
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.float)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_lengths_from_nonpad(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs])
    lengths = (padded != pad_value).sum(dim=1)  # count the real tokens afterwards
    return padded, lengths


def pad_one_extra_column(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs) + 1  # room for <eos>
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_sorted_by_length(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    seqs = sorted(seqs, key=len, reverse=True)  # longest first, as packing wants
    T = len(seqs[0])
    padded = torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs])
    return padded, torch.tensor([len(s) for s in seqs])


def pad_default_minus_100(seqs: list[list[int]], pad_value: int = -100) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs])
    return padded, torch.tensor([len(s) for s in seqs])


def pad_extends_inputs(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs])
    T = int(lengths.max())
    for s in seqs:
        s.extend([pad_value] * (T - len(s)))  # pad each list where it is
    return torch.tensor(seqs), lengths


def pad_int32_lengths(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs])
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.int32)


# ---------------------------------------------------------------- correct variants


def pad_with_torch_utility(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.as_tensor(s, dtype=torch.long) for s in seqs]
    padded = torch.nn.utils.rnn.pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    lengths = torch.as_tensor([t.numel() for t in tensors], dtype=torch.long)
    return padded, lengths


def pad_with_f_pad(
    seqs: list[list[int]], pad_value: int = 0, max_len: int | None = None
) -> tuple[Tensor, Tensor]:
    """Each row padded on its right with F.pad, then stacked; optional max_len."""
    rows = [torch.tensor(list(s), dtype=torch.long) for s in seqs]
    if max_len is not None:
        rows = [r[:max_len] for r in rows]
    T = max_len if max_len is not None else max(len(r) for r in rows)
    padded = torch.stack([F.pad(r, (0, T - len(r)), value=pad_value) for r in rows])
    return padded, torch.tensor([len(r) for r in rows], dtype=torch.long)


def pad_with_mask_scatter(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    real = torch.arange(T)[None, :] < lengths[:, None]  # (B, T)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    flat = [tok for s in seqs for tok in s]
    padded[real] = torch.tensor(flat, dtype=torch.long)  # row-major fill of the real cells
    return padded, lengths


CASES = [
    BlindCase(
        CHECK,
        "width_of_first_sequence",
        pad_width_of_first,
        "mistake",
        "I made the batch as wide as the first sentence, so longer ones later get cut.",
    ),
    BlindCase(
        CHECK,
        "padding_on_the_left",
        pad_on_the_left,
        "mistake",
        "I put the padding before the tokens, so every sentence ends at the right edge.",
    ),
    BlindCase(
        CHECK,
        "pad_value_ignored",
        pad_zeros_always,
        "mistake",
        "I started from torch.zeros, since <pad> is id 0, and never used pad_value.",
    ),
    BlindCase(
        CHECK,
        "returns_only_the_batch",
        pad_returns_only_batch,
        "mistake",
        "I returned the padded tensor alone and forgot the lengths.",
    ),
    BlindCase(
        CHECK,
        "returns_lengths_first",
        pad_lengths_first,
        "mistake",
        "I return (lengths, padded) instead of (padded, lengths).",
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
        "float_batch",
        pad_float_batch,
        "mistake",
        "I filled the batch with torch.full from a float, so the ids come back as floats.",
    ),
    BlindCase(
        CHECK,
        "lengths_counted_from_non_pad",
        pad_lengths_from_nonpad,
        "mistake",
        "I counted the lengths afterwards as the cells that differ from pad_value, which is "
        "wrong when a sentence itself contains that id.",
    ),
    BlindCase(
        CHECK,
        "one_extra_column",
        pad_one_extra_column,
        "mistake",
        "I made the batch one column wider than the longest sentence, to leave room for <eos>.",
    ),
    BlindCase(
        CHECK,
        "rows_sorted_by_length",
        pad_sorted_by_length,
        "mistake",
        "I sorted the sentences longest first before padding, so the rows are no longer in the "
        "order I was given.",
    ),
    BlindCase(
        CHECK,
        "default_pad_minus_100",
        pad_default_minus_100,
        "mistake",
        "I gave pad_value the default -100, the ignore_index of cross_entropy, instead of 0.",
    ),
    BlindCase(
        CHECK,
        "extends_the_callers_lists",
        pad_extends_inputs,
        "mistake",
        "I padded each list in place with extend before turning them into a tensor, so the "
        "caller's lists get the padding too.",
    ),
    BlindCase(
        CHECK,
        "int32_lengths",
        pad_int32_lengths,
        "mistake",
        "I made the lengths torch.int32 instead of long.",
    ),
    BlindCase(
        CHECK,
        "torch_pad_sequence",
        pad_with_torch_utility,
        "correct",
        "nn.utils.rnn.pad_sequence with batch_first=True and padding_value=pad_value.",
    ),
    BlindCase(
        CHECK,
        "f_pad_per_row",
        pad_with_f_pad,
        "correct",
        "Each row padded on the right with F.pad and then stacked; an optional max_len too.",
    ),
    BlindCase(
        CHECK,
        "boolean_scatter",
        pad_with_mask_scatter,
        "correct",
        "A (B, T) mask of the real cells, and all the ids written into it at once.",
    ),
]
