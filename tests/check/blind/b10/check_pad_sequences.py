"""Blind set B10, check_pad_sequences (chapter 1): padding lists of token ids as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_pad_sequences"


# ---------------------------------------------------------------- mistakes


def pad_left(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs])
    T = int(lengths.max())
    rows = [[pad_value] * (T - len(s)) + list(s) for s in seqs]  # padding first
    return torch.tensor(rows), lengths


def pad_to_first_length(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(seqs[0])  # the width of the batch
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        n = min(len(s), T)
        padded[b, :n] = torch.tensor(s[:n])
    return padded, torch.tensor([len(s) for s in seqs])


def pad_float_zeros(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs])
    padded = torch.zeros(len(seqs), int(lengths.max())) + pad_value
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, lengths


def pad_ignores_pad_value(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    padded = torch.zeros(len(seqs), int(lengths.max()), dtype=torch.long)  # <pad> is 0
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, lengths


def pad_time_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = torch.nn.utils.rnn.pad_sequence(tensors, padding_value=pad_value)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_lengths_after_padding(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    padded = torch.tensor(rows, dtype=torch.long)
    lengths = torch.tensor([len(r) for r in rows])  # every row is T long now
    return padded, lengths


def pad_lengths_last_index(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    lengths = torch.zeros(len(seqs), dtype=torch.long)
    for b, s in enumerate(seqs):
        for t, tok in enumerate(s):
            padded[b, t] = tok
            lengths[b] = t  # where the sequence ends
    return padded, lengths


def pad_returns_swapped(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs])
    padded = torch.full((len(seqs), int(lengths.max())), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return lengths, padded


def pad_sorted_longest_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    seqs = sorted(seqs, key=len, reverse=True)  # pack_padded_sequence likes them sorted
    lengths = torch.tensor([len(s) for s in seqs])
    padded = torch.full((len(seqs), int(lengths[0])), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, lengths


def pad_extends_inputs(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs])
    T = int(lengths.max())
    for s in seqs:
        s += [pad_value] * (T - len(s))  # pad each list where it is
    return torch.tensor(seqs), lengths


def pad_room_for_eos(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs])
    T = int(lengths.max()) + 1  # one extra column so every row ends with a pad
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, lengths


def pad_lengths_as_list(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, list]:
    lengths = [len(s) for s in seqs]
    T = max(lengths)
    padded = torch.tensor([s + [pad_value] * (T - len(s)) for s in seqs])
    return padded, lengths


# ---------------------------------------------------------------- correct variants


def pad_torch_utils(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.as_tensor(s, dtype=torch.long) for s in seqs]
    padded = torch.nn.utils.rnn.pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    lengths = torch.tensor([t.numel() for t in tensors], dtype=torch.long)
    return padded, lengths


def pad_comprehension(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(map(len, seqs))
    padded = torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs], dtype=torch.long)
    return padded, torch.LongTensor([len(s) for s in seqs])


def pad_f_pad_stack(
    seqs: list[list[int]], pad_value: int = 0, max_len: int | None = None
) -> tuple[Tensor, Tensor]:
    """An optional max_len (None: the longest), each row padded with F.pad, then stacked."""
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.int64)
    T = int(lengths.max()) if max_len is None else max_len
    rows = [
        F.pad(torch.tensor(s, dtype=torch.int64), (0, T - len(s)), value=pad_value) for s in seqs
    ]
    return torch.stack(rows), lengths


def pad_masked_scatter(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs])
    T = int(lengths.max())
    real = torch.arange(T)[None, :] < lengths[:, None]  # (B, T)
    flat = torch.tensor([tok for s in seqs for tok in s], dtype=torch.long)
    padded = torch.full(real.shape, pad_value, dtype=torch.long)
    padded[real] = flat  # row-major order fills each row's first len(s) places
    return padded, lengths


CASES = [
    BlindCase(CHECK, "pad_left", pad_left, "mistake", "I put the padding before the tokens."),
    BlindCase(
        CHECK,
        "width_of_first_sequence",
        pad_to_first_length,
        "mistake",
        "I took the batch width T from the first sequence, so longer ones later are cut.",
    ),
    BlindCase(
        CHECK,
        "float_zeros",
        pad_float_zeros,
        "mistake",
        "I started from torch.zeros(B, T) + pad_value, which is float32, not long.",
    ),
    BlindCase(
        CHECK,
        "ignores_pad_value",
        pad_ignores_pad_value,
        "mistake",
        "I always pad with zeros (the <pad> id) and never use pad_value.",
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
        "lengths_after_padding",
        pad_lengths_after_padding,
        "mistake",
        "I measured the lengths of the rows after padding them, so every length is T.",
    ),
    BlindCase(
        CHECK,
        "lengths_last_index",
        pad_lengths_last_index,
        "mistake",
        "I stored for each row the index of its last token, which is one less than its length.",
    ),
    BlindCase(
        CHECK,
        "returns_lengths_first",
        pad_returns_swapped,
        "mistake",
        "I return (lengths, padded) instead of (padded, lengths).",
    ),
    BlindCase(
        CHECK,
        "sorted_longest_first",
        pad_sorted_longest_first,
        "mistake",
        "I sorted the sequences longest first (as pack_padded_sequence wants), so the rows no "
        "longer come in the order they were given.",
    ),
    BlindCase(
        CHECK,
        "extends_input_lists",
        pad_extends_inputs,
        "mistake",
        "I padded each input list in place with +=, so the caller's lists are changed.",
    ),
    BlindCase(
        CHECK,
        "extra_column",
        pad_room_for_eos,
        "mistake",
        "I made the batch one column wider than the longest sequence.",
    ),
    BlindCase(
        CHECK,
        "lengths_python_list",
        pad_lengths_as_list,
        "mistake",
        "I return the lengths as a Python list, not as a (B,) long tensor.",
    ),
    BlindCase(
        CHECK,
        "torch_pad_sequence",
        pad_torch_utils,
        "correct",
        "nn.utils.rnn.pad_sequence with batch_first=True and padding_value.",
    ),
    BlindCase(
        CHECK,
        "list_comprehension",
        pad_comprehension,
        "correct",
        "Each row padded as a new Python list, then one torch.tensor; lengths as a LongTensor.",
    ),
    BlindCase(
        CHECK,
        "f_pad_and_stack",
        pad_f_pad_stack,
        "correct",
        "F.pad on each row, then torch.stack; an extra optional max_len argument.",
    ),
    BlindCase(
        CHECK,
        "mask_then_scatter",
        pad_masked_scatter,
        "correct",
        "A full pad_value tensor, filled with all tokens at once through a boolean mask.",
    ),
]
