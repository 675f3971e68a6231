"""Blind cases for check_padding_mask (chapter 1), written from the chapter's text only."""

from __future__ import annotations

import torch

from .. import BlindCase

CHECK = "check_padding_mask"


def _width(lengths, max_len):
    return int(lengths.max()) if max_len is None else max_len


def true_on_padding(lengths, max_len=None):
    lengths = torch.as_tensor(lengths)
    positions = torch.arange(_width(lengths, max_len))
    return positions[None, :] >= lengths[:, None]


def long_mask(lengths, max_len=None):
    lengths = torch.as_tensor(lengths)
    positions = torch.arange(_width(lengths, max_len))
    return (positions[None, :] < lengths[:, None]).long()


def less_or_equal(lengths, max_len=None):
    lengths = torch.as_tensor(lengths)
    positions = torch.arange(_width(lengths, max_len))
    return positions[None, :] <= lengths[:, None]


def positions_from_one(lengths, max_len=None):
    lengths = torch.as_tensor(lengths)
    T = _width(lengths, max_len)
    positions = torch.arange(1, T + 1)
    return positions[None, :] < lengths[:, None]


def time_by_batch(lengths, max_len=None):
    lengths = torch.as_tensor(lengths)
    positions = torch.arange(_width(lengths, max_len))
    return positions[:, None] < lengths[None, :]


def max_len_ignored(lengths, max_len=None):
    lengths = torch.as_tensor(lengths)
    positions = torch.arange(int(lengths.max()))
    return positions[None, :] < lengths[:, None]


def width_is_batch_size(lengths, max_len=None):
    lengths = torch.as_tensor(lengths)
    T = max_len if max_len is not None else len(lengths)
    positions = torch.arange(T)
    return positions[None, :] < lengths[:, None]


def loop_over_rows(lengths, max_len=None):
    lengths = torch.as_tensor(lengths)
    T = _width(lengths, max_len)
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths.tolist()):
        mask[b, :n] = True
    return mask


def cumsum_count(lengths, max_len=None):
    lengths = torch.as_tensor(lengths)
    T = _width(lengths, max_len)
    counts = torch.ones(len(lengths), T, dtype=torch.long).cumsum(dim=1)  # 1, 2, ..., T
    return counts <= lengths.unsqueeze(1)


def expand_and_compare(lengths, max_len=None, device=None):
    lengths = torch.as_tensor(lengths, device=device)
    T = _width(lengths, max_len)
    positions = torch.arange(T, device=lengths.device).expand(len(lengths), T)
    return torch.lt(positions, lengths.unsqueeze(-1))


CASES = [
    BlindCase(
        CHECK,
        "true_on_padding",
        true_on_padding,
        "mistake",
        "I made the mask True on the padding, the positions to hide",
    ),
    BlindCase(
        CHECK,
        "long_mask",
        long_mask,
        "mistake",
        "I turned the comparison into 0/1 integers with .long()",
    ),
    BlindCase(
        CHECK,
        "less_or_equal",
        less_or_equal,
        "mistake",
        "I compared positions <= lengths, so one padding slot counts as real",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        positions_from_one,
        "mistake",
        "I numbered the positions 1..T and kept position < length, losing the last real token",
    ),
    BlindCase(
        CHECK,
        "time_by_batch",
        time_by_batch,
        "mistake",
        "I put the positions on the rows and the lengths on the columns: a (T, B) mask",
    ),
    BlindCase(
        CHECK,
        "max_len_ignored",
        max_len_ignored,
        "mistake",
        "I always used the longest length as the width and never looked at max_len",
    ),
    BlindCase(
        CHECK,
        "width_is_batch_size",
        width_is_batch_size,
        "mistake",
        "without max_len I used len(lengths) as the width, mixing up B and T",
    ),
    BlindCase(
        CHECK,
        "loop_over_rows",
        loop_over_rows,
        "correct",
        "I started from an all-False bool mask and set the first lengths[b] entries per row",
    ),
    BlindCase(
        CHECK,
        "cumsum_count",
        cumsum_count,
        "correct",
        "I counted 1..T with a cumsum of ones and kept the counts <= length",
    ),
    BlindCase(
        CHECK,
        "expand_and_compare",
        expand_and_compare,
        "correct",
        "I expanded arange to (B, T) and used torch.lt; an optional device argument",
    ),
]
