"""Blind cases for check_padding_mask (chapter 1), written from the chapter's text only."""

from __future__ import annotations

import torch

from .. import BlindCase

CHECK = "check_padding_mask"


def true_on_padding(lengths, max_len=None):
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] >= lengths[:, None]


def integer_mask(lengths, max_len=None):
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return (torch.arange(T)[None, :] < lengths[:, None]).long()


def one_too_many(lengths, max_len=None):
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] <= lengths[:, None]


def time_by_batch(lengths, max_len=None):
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[:, None] < lengths[None, :]  # (T, B)


def ignores_max_len(lengths, max_len=None):
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max())
    return torch.arange(T)[None, :] < lengths[:, None]


def width_is_batch_size(lengths, max_len=None):
    lengths = torch.as_tensor(lengths)
    T = len(lengths) if max_len is None else max_len
    return torch.arange(T)[None, :] < lengths[:, None]


def trailing_feature_axis(lengths, max_len=None):
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return (torch.arange(T)[None, :] < lengths[:, None])[..., None]  # ready for (B, T, F)


def loop_fills_from_one(lengths, max_len=None):
    lengths = torch.as_tensor(lengths).tolist()
    T = max(lengths) if max_len is None else max_len
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths):
        mask[b, 1 : n + 1] = True
    return mask


def loop_over_rows(lengths, max_len=None):
    lengths = [int(n) for n in lengths]
    T = max_len if max_len is not None else max(lengths)
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths):
        mask[b, :n] = True
    return mask


def ones_then_cumsum(lengths, max_len=None):
    lengths = torch.as_tensor(lengths)
    T = max_len if max_len is not None else int(lengths.max())
    positions = torch.ones(len(lengths), T, dtype=torch.long).cumsum(dim=1)  # 1 .. T
    return positions.le(lengths.unsqueeze(1))


def sequence_mask_expand(lengths, max_len=None, device=None):
    lengths = torch.as_tensor(lengths, device=device)
    T = lengths.max().item() if max_len is None else max_len
    positions = torch.arange(T, device=lengths.device).expand(len(lengths), T)
    return lengths.unsqueeze(-1) > positions


CASES = [
    BlindCase(
        CHECK,
        "true_on_padding",
        true_on_padding,
        "mistake",
        "my mask is True on the padding and False on the real tokens (>= instead of <)",
    ),
    BlindCase(
        CHECK,
        "integer_mask",
        integer_mask,
        "mistake",
        "I returned the mask as 0/1 integers (.long()) instead of bools",
    ),
    BlindCase(
        CHECK,
        "one_too_many",
        one_too_many,
        "mistake",
        "I compared positions <= lengths, so each row has one True too many (off by one)",
    ),
    BlindCase(
        CHECK,
        "time_by_batch",
        time_by_batch,
        "mistake",
        "I put the positions on the rows, so the mask is (T, B): transposed",
    ),
    BlindCase(
        CHECK,
        "ignores_max_len",
        ignores_max_len,
        "mistake",
        "I always used max(lengths) as the width and never used max_len",
    ),
    BlindCase(
        CHECK,
        "width_is_batch_size",
        width_is_batch_size,
        "mistake",
        "I took the width T as len(lengths), the batch size, instead of the longest length",
    ),
    BlindCase(
        CHECK,
        "trailing_feature_axis",
        trailing_feature_axis,
        "mistake",
        "I returned the mask with an extra last axis, (B, T, 1), ready to multiply vectors",
    ),
    BlindCase(
        CHECK,
        "loop_fills_from_one",
        loop_fills_from_one,
        "mistake",
        "in my loop I filled mask[b, 1 : n + 1], shifted one position to the right",
    ),
    BlindCase(
        CHECK,
        "loop_over_rows",
        loop_over_rows,
        "correct",
        "I filled a bool zeros tensor row by row with a Python loop",
    ),
    BlindCase(
        CHECK,
        "ones_then_cumsum",
        ones_then_cumsum,
        "correct",
        "I numbered the positions 1..T with a cumsum and compared them with <= lengths",
    ),
    BlindCase(
        CHECK,
        "sequence_mask_expand",
        sequence_mask_expand,
        "correct",
        "lengths > expanded arange, written the other way round, with an extra device argument",
    ),
]
