"""Blind set B11, check_pad_sequences (chapter 1): padding lists of token ids as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn.utils.rnn import pad_sequence

from .. import BlindCase

CHECK = "check_pad_sequences"


# ---------------------------------------------------------------- mistakes


def pad_width_of_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(seqs[0])  # the batch is as wide as its sequences
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        n = min(len(s), T)
        padded[b, :n] = torch.tensor(s[:n])
    return padded, torch.tensor([len(s) for s in seqs])


def pad_left(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, T - len(s) :] = torch.tensor(s)  # the tokens end at the right edge
    return padded, lengths


def pad_float_batch(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), float(pad_value))
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.float)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_zeros_always(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T, dtype=torch.long)  # padding is zeros
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_time_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, padding_value=pad_value)  # PyTorch's helper does it all
    return padded, torch.tensor([len(s) for s in seqs])


def pad_lengths_float(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.Tensor([len(s) for s in seqs])
    T = int(lengths.max())
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, lengths


def pad_extra_column(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = [len(s) for s in seqs]
    T = max(lengths) + 1  # room for one pad after the longest, so every row ends with a pad
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor(lengths)


def pad_returns_lengths_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs])
    padded = torch.full((len(seqs), int(lengths.max())), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return lengths, padded


def pad_sorted_longest_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    seqs = sorted(seqs, key=len, reverse=True)  # sorted, as pack_padded_sequence likes it
    lengths = torch.tensor([len(s) for s in seqs])
    padded = torch.full((len(seqs), int(lengths[0])), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, lengths


def pad_int32(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(map(len, seqs))
    rows = [s + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.int32), torch.tensor([len(s) for s in seqs])


def pad_lengths_of_padded(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(map(len, seqs))
    rows = [s + [pad_value] * (T - len(s)) for s in seqs]
    padded = torch.tensor(rows)
    return padded, torch.full((len(seqs),), T)  # every row is now T long


# ---------------------------------------------------------------- correct variants


def pad_with_torch_helper(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.as_tensor(s, dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    lengths = torch.tensor([t.numel() for t in tensors], dtype=torch.long)
    return padded, lengths


def pad_list_rows(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor(list(map(len, seqs)))


def pad_each_with_f_pad(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max().item())
    rows = [
        F.pad(torch.tensor(s, dtype=torch.long), (0, T - len(s)), value=pad_value) for s in seqs
    ]
    return torch.stack(rows), lengths


def pad_with_max_len_option(
    seqs: list[list[int]], pad_value: int = 0, max_len: int | None = None
) -> tuple[Tensor, Tensor]:
    """Also accepts max_len (cut and pad to exactly that width), defaulting to the longest."""
    if max_len is not None:
        seqs = [s[:max_len] for s in seqs]
    lengths = torch.LongTensor([len(s) for s in seqs])
    T = max_len if max_len is not None else int(lengths.max())
    padded = torch.empty(len(seqs), T, dtype=torch.long).fill_(pad_value)
    for b, s in enumerate(seqs):
        for t, tok in enumerate(s):
            padded[b, t] = tok
    return padded, lengths


CASES = [
    BlindCase(
        CHECK,
        "width_of_first_sequence",
        pad_width_of_first,
        "mistake",
        "I made the batch as wide as the first sequence, cutting the longer ones.",
    ),
    BlindCase(
        CHECK,
        "pad_on_the_left",
        pad_left,
        "mistake",
        "I put the padding before the tokens, so every sentence ends at the last column.",
    ),
    BlindCase(
        CHECK,
        "float_batch",
        pad_float_batch,
        "mistake",
        "I built the batch with torch.full and a float pad value, so the ids come back float32.",
    ),
    BlindCase(
        CHECK,
        "zeros_ignore_pad_value",
        pad_zeros_always,
        "mistake",
        "I started from torch.zeros, so the padding is 0 whatever pad_value says.",
    ),
    BlindCase(
        CHECK,
        "time_first_pad_sequence",
        pad_time_first,
        "mistake",
        "I used nn.utils.rnn.pad_sequence without batch_first=True, so the batch is (T, B).",
    ),
    BlindCase(
        CHECK,
        "lengths_float_tensor",
        pad_lengths_float,
        "mistake",
        "I made the lengths with torch.Tensor([...]), which gives floats, not longs.",
    ),
    BlindCase(
        CHECK,
        "one_extra_column",
        pad_extra_column,
        "mistake",
        "I made the batch one wider than the longest sentence so every row ends with a pad.",
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
        "sorted_longest_first",
        pad_sorted_longest_first,
        "mistake",
        "I sorted the sentences longest first before padding, so the rows are not in the "
        "order I was given.",
    ),
    BlindCase(
        CHECK,
        "int32_ids",
        pad_int32,
        "mistake",
        "I asked for dtype=torch.int32, thinking any integer type would do for ids.",
    ),
    BlindCase(
        CHECK,
        "lengths_after_padding",
        pad_lengths_of_padded,
        "mistake",
        "I returned the lengths of the padded rows (all T) instead of the real lengths.",
    ),
    BlindCase(
        CHECK,
        "torch_pad_sequence_batch_first",
        pad_with_torch_helper,
        "correct",
        "nn.utils.rnn.pad_sequence with batch_first=True and padding_value.",
    ),
    BlindCase(
        CHECK,
        "python_lists_then_tensor",
        pad_list_rows,
        "correct",
        "Each row padded as a Python list, then one torch.tensor of the whole batch.",
    ),
    BlindCase(
        CHECK,
        "f_pad_each_row",
        pad_each_with_f_pad,
        "correct",
        "Each row padded on the right with F.pad(value=pad_value), then stacked.",
    ),
    BlindCase(
        CHECK,
        "max_len_option_loops",
        pad_with_max_len_option,
        "correct",
        "An extra max_len=None argument; empty().fill_ and a double loop write the tokens.",
    ),
]
