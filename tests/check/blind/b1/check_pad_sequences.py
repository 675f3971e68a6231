"""Blind cases for check_pad_sequences (chapter 1)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .. import BlindCase

CHECK = "check_pad_sequences"


def pad_first_length(seqs, pad_value=0):
    T = len(seqs[0])  # assumed the first sequence is the longest
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        s = s[:T]
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def pad_float(seqs, pad_value=0):
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), float(pad_value))  # float32 by default
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.float)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_left(seqs, pad_value=0):
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        if len(s):
            padded[b, T - len(s) :] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def pad_zeros_always(seqs, pad_value=0):
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T, dtype=torch.long)  # forgot pad_value
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def pad_time_first(seqs, pad_value=0):
    T = max(len(s) for s in seqs)
    padded = torch.full((T, len(seqs)), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[: len(s), b] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def pad_lengths_padded(seqs, pad_value=0):
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    lengths = torch.full(
        (len(seqs),), T, dtype=torch.long
    )  # the width of every row, not its length
    return padded, lengths


def pad_lengths_by_nonzero(seqs, pad_value=0):
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    lengths = (padded != 0).sum(dim=1)  # counts entries that aren't 0
    return padded, lengths


def pad_extra_column(seqs, pad_value=0):
    T = max(len(s) for s in seqs) + 1  # room for an <eos>
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def pad_only_tensor(seqs, pad_value=0):
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded  # forgot the lengths


def pad_renamed_kwarg(seqs, pad_id=0):
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_id, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def pad_with_F_pad(seqs, pad_value=0):
    T = max(len(s) for s in seqs)
    rows = [
        F.pad(torch.tensor(s, dtype=torch.long), (0, T - len(s)), value=pad_value) for s in seqs
    ]
    return torch.stack(rows), torch.tensor([len(s) for s in seqs], dtype=torch.long)


def pad_with_rnn_utils(seqs, pad_value=0):
    tensors = [torch.as_tensor(s, dtype=torch.long) for s in seqs]
    padded = torch.nn.utils.rnn.pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    return padded, torch.as_tensor([t.numel() for t in tensors])


def pad_pure_python(seqs: list[list[int]], pad_value: int = 0, max_len: int | None = None):
    lengths = [len(s) for s in seqs]
    T = max(lengths) if max_len is None else max_len
    rows = [list(s[:T]) + [pad_value] * (T - len(s[:T])) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor([min(n, T) for n in lengths])


CASES = [
    BlindCase(
        CHECK,
        "width_of_first_sequence",
        pad_first_length,
        "mistake",
        "makes the batch as wide as the first sequence, not the longest one",
    ),
    BlindCase(
        CHECK,
        "float_batch",
        pad_float,
        "mistake",
        "builds the batch with torch.full and a float pad value, so the ids come back as float32",
    ),
    BlindCase(
        CHECK,
        "pads_on_the_left",
        pad_left,
        "mistake",
        "puts the padding before the tokens (left padding) instead of after them",
    ),
    BlindCase(
        CHECK,
        "ignores_pad_value",
        pad_zeros_always,
        "mistake",
        "starts from torch.zeros, so pad_value is never used and padding is always 0",
    ),
    BlindCase(
        CHECK,
        "time_first",
        pad_time_first,
        "mistake",
        "returns the batch time-first (T, B) instead of batch-first (B, T)",
    ),
    BlindCase(
        CHECK,
        "lengths_are_width",
        pad_lengths_padded,
        "mistake",
        "returns the padded width T for every row as the lengths instead of the real lengths",
    ),
    BlindCase(
        CHECK,
        "lengths_count_nonzero",
        pad_lengths_by_nonzero,
        "mistake",
        "computes the lengths by counting non-zero entries, which is wrong when pad_value is not 0",
    ),
    BlindCase(
        CHECK,
        "one_column_too_many",
        pad_extra_column,
        "mistake",
        "makes the batch one column wider than the longest sequence (off by one)",
    ),
    BlindCase(
        CHECK,
        "slip_returns_only_padded",
        pad_only_tensor,
        "mistake",
        "returns only the padded tensor and forgets to return the lengths (wrong return arity)",
    ),
    BlindCase(
        CHECK,
        "slip_renamed_pad_kwarg",
        pad_renamed_kwarg,
        "mistake",
        "names the keyword argument pad_id instead of pad_value",
    ),
    BlindCase(
        CHECK,
        "F_pad_and_stack",
        pad_with_F_pad,
        "correct",
        "pads each row with F.pad on the right and stacks the rows",
    ),
    BlindCase(
        CHECK,
        "rnn_utils_pad_sequence",
        pad_with_rnn_utils,
        "correct",
        "uses torch.nn.utils.rnn.pad_sequence with batch_first=True and padding_value",
    ),
    BlindCase(
        CHECK,
        "pure_python_lists",
        pad_pure_python,
        "correct",
        "pads Python lists by concatenation, builds the tensor at the end, and accepts an optional max_len",
    ),
]
