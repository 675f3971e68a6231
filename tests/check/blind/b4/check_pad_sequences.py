"""Blind cases for check_pad_sequences (chapter 1), written from the chapter's text only."""

from __future__ import annotations

import torch
from torch.nn.utils.rnn import pad_sequence

from .. import BlindCase

CHECK = "check_pad_sequences"


def width_of_first(seqs, pad_value=0):
    T = len(seqs[0])
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        s = s[:T]
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    lengths = torch.tensor([min(len(s), T) for s in seqs], dtype=torch.long)
    return padded, lengths


def float_batch(seqs, pad_value=0):
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), float(pad_value))
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.float)
    return padded, torch.tensor([len(s) for s in seqs])


def pads_on_the_left(seqs, pad_value=0):
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        if len(s):
            padded[b, T - len(s) :] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def zeros_whatever_pad_value(seqs, pad_value=0):
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def time_first(seqs, pad_value=0):
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, padding_value=pad_value)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def lengths_by_counting_non_pad(seqs, pad_value=0):
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    lengths = (padded != pad_value).sum(dim=1)
    return padded, lengths


def returns_lengths_first(seqs, pad_value=0):
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return torch.tensor([len(s) for s in seqs], dtype=torch.long), padded


def torch_pad_sequence(seqs, pad_value=0):
    tensors = [torch.as_tensor(list(s), dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    lengths = torch.tensor([len(t) for t in tensors], dtype=torch.long)
    return padded, lengths


def lists_then_tensor(seqs, pad_value=0, max_len=None):
    T = max_len if max_len is not None else max(len(s) for s in seqs)
    rows = [list(s)[:T] + [pad_value] * (T - len(list(s)[:T])) for s in seqs]
    lengths = [min(len(s), T) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor(lengths, dtype=torch.long)


def new_full_in_place(seqs, pad_value=0):
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    padded = torch.empty(len(seqs), int(lengths.max()), dtype=torch.long)
    padded.fill_(pad_value)
    for b, s in enumerate(seqs):
        for t, token in enumerate(s):
            padded[b, t] = token
    return padded, lengths


CASES = [
    BlindCase(
        CHECK,
        "width_of_first",
        width_of_first,
        "mistake",
        "I took the width of the batch from the first sentence, so longer ones get cut",
    ),
    BlindCase(
        CHECK,
        "float_batch",
        float_batch,
        "mistake",
        "I filled a torch.full tensor without a dtype, so the batch is float, not long",
    ),
    BlindCase(
        CHECK,
        "pads_on_the_left",
        pads_on_the_left,
        "mistake",
        "I right-aligned the tokens, so the padding comes before them",
    ),
    BlindCase(
        CHECK,
        "zeros_whatever_pad_value",
        zeros_whatever_pad_value,
        "mistake",
        "I started from torch.zeros and never wrote pad_value in",
    ),
    BlindCase(
        CHECK,
        "time_first",
        time_first,
        "mistake",
        "I used nn.utils.rnn.pad_sequence without batch_first=True, so the batch is (T, B)",
    ),
    BlindCase(
        CHECK,
        "lengths_by_counting_non_pad",
        lengths_by_counting_non_pad,
        "mistake",
        "I computed the lengths afterwards by counting the entries that differ from pad_value",
    ),
    BlindCase(
        CHECK,
        "returns_lengths_first",
        returns_lengths_first,
        "mistake",
        "I returned (lengths, padded) instead of (padded, lengths)",
    ),
    BlindCase(
        CHECK,
        "torch_pad_sequence",
        torch_pad_sequence,
        "correct",
        "I used nn.utils.rnn.pad_sequence with batch_first=True and padding_value",
    ),
    BlindCase(
        CHECK,
        "lists_then_tensor",
        lists_then_tensor,
        "correct",
        "I padded the Python lists first, then made one tensor; an optional max_len too",
    ),
    BlindCase(
        CHECK,
        "new_full_in_place",
        new_full_in_place,
        "correct",
        "I filled an empty tensor in place with fill_ and copied the tokens one by one",
    ),
]
