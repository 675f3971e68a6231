"""Blind cases for check_pad_sequences (chapter 1), written from the chapter's text only."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence

from .. import BlindCase

CHECK = "check_pad_sequences"


def pads_on_the_left(seqs, pad_value=0):
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        if len(s):
            padded[b, T - len(s) :] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def always_pads_with_zero(seqs, pad_value=0):
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs])


def width_of_first_sequence(seqs, pad_value=0):
    T = len(seqs[0])
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        s = s[:T]
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([min(len(s), T) for s in seqs])


def float_batch(seqs, pad_value=0):
    lengths = torch.tensor([len(s) for s in seqs])
    padded = torch.full((len(seqs), int(lengths.max())), float(pad_value))
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.float)
    return padded, lengths


def time_first(seqs, pad_value=0):
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, padding_value=pad_value)  # batch_first left at its default
    return padded, torch.tensor([len(s) for s in seqs])


def lengths_as_int32(seqs, pad_value=0):
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.int32)
    padded = torch.full((len(seqs), int(lengths.max())), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, lengths


def one_extra_column(seqs, pad_value=0):
    T = max(len(s) for s in seqs) + 1  # room for an <eos>
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs])


def lengths_first(seqs, pad_value=0):
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    padded = torch.full((len(seqs), int(lengths.max())), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return lengths, padded


def torch_pad_sequence(seqs, pad_value=0):
    tensors = [torch.as_tensor(s, dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    return padded, torch.tensor([len(t) for t in tensors], dtype=torch.long)


def f_pad_each_row(seqs, pad_value=0, max_len=None):
    lengths = [len(s) for s in seqs]
    T = max(lengths) if max_len is None else max_len
    rows = [
        F.pad(torch.tensor(s, dtype=torch.long), (0, T - len(s)), value=pad_value) for s in seqs
    ]
    return torch.stack(rows), torch.tensor(lengths, dtype=torch.long)


def python_lists_then_tensor(seqs, pad_value=0):
    T = max(map(len, seqs))
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.LongTensor([len(s) for s in seqs])


CASES = [
    BlindCase(
        CHECK,
        "pads_on_the_left",
        pads_on_the_left,
        "mistake",
        "I put the padding before the tokens (each row ends with its ids, pad_value in front)",
    ),
    BlindCase(
        CHECK,
        "always_pads_with_zero",
        always_pads_with_zero,
        "mistake",
        "I started from torch.zeros, so the padding is always 0 and pad_value is never used",
    ),
    BlindCase(
        CHECK,
        "width_of_first_sequence",
        width_of_first_sequence,
        "mistake",
        "I took the batch width T from the first sequence instead of the longest one "
        "(longer rows get cut)",
    ),
    BlindCase(
        CHECK,
        "float_batch",
        float_batch,
        "mistake",
        "my padded batch is float (torch.full with a float fill) instead of long token ids",
    ),
    BlindCase(
        CHECK,
        "time_first",
        time_first,
        "mistake",
        "I used torch's pad_sequence without batch_first=True, so the batch is (T, B), time first",
    ),
    BlindCase(
        CHECK,
        "lengths_as_int32",
        lengths_as_int32,
        "mistake",
        "I built the lengths with dtype=torch.int32 instead of long",
    ),
    BlindCase(
        CHECK,
        "one_extra_column",
        one_extra_column,
        "mistake",
        "I made the batch one column wider than the longest sequence (to leave room for <eos>)",
    ),
    BlindCase(
        CHECK,
        "lengths_first",
        lengths_first,
        "mistake",
        "I returned (lengths, padded) instead of (padded, lengths)",
    ),
    BlindCase(
        CHECK,
        "torch_pad_sequence",
        torch_pad_sequence,
        "correct",
        "I used torch.nn.utils.rnn.pad_sequence with batch_first=True and padding_value",
    ),
    BlindCase(
        CHECK,
        "f_pad_each_row",
        f_pad_each_row,
        "correct",
        "I padded each row with F.pad and stacked them; an optional max_len argument too",
    ),
    BlindCase(
        CHECK,
        "python_lists_then_tensor",
        python_lists_then_tensor,
        "correct",
        "I padded plain Python lists first and turned them into one long tensor at the end",
    ),
]
