"""Blind set B14, check_padding_mask (chapter 1): the True-at-real-tokens mask from lengths."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_padding_mask"


def _width(lengths: Tensor, max_len: int | None) -> int:
    return int(lengths.max()) if max_len is None else max_len


# ---------------------------------------------------------------- mistakes


def mask_true_on_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T)[None, :] >= lengths[:, None]  # True = padding, as in PyTorch


def mask_long(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return (torch.arange(T)[None, :] < lengths[:, None]).long()  # 1 = real, 0 = padding


def mask_float(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    mask = torch.zeros(len(lengths), T)
    for b, n in enumerate(lengths.tolist()):
        mask[b, :n] = 1.0  # ones at the real tokens
    return mask


def mask_less_equal(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T)[None, :] <= lengths[:, None]  # position <= length


def mask_counts_from_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    positions = torch.arange(1, T + 1)  # positions 1..T, as in the text
    return positions[None, :] < lengths[:, None]


def mask_transposed(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T)[:, None] < lengths[None, :]  # (T, B)


def mask_ignores_max_len(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max())  # max_len only matters when cutting, I thought
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_right_aligned(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T)[None, :] >= (T - lengths)[:, None]  # the last lengths[b] positions


def mask_attention_shape(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    mask = torch.arange(T)[None, :] < lengths[:, None]
    return mask[:, None, None, :]  # (B, 1, 1, T), ready for attention


def mask_max_len_only_if_longer(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max())
    if max_len is not None and max_len < T:  # cut only, never widen
        T = max_len
    return torch.arange(T)[None, :] < lengths[:, None]


# ---------------------------------------------------------------- correct variants


def mask_loop(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths.tolist()):
        mask[b, :n] = True
    return mask


def mask_expand(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else int(lengths.max().item())
    positions = torch.arange(T, device=lengths.device).expand(len(lengths), T)  # (B, T)
    return positions < lengths.unsqueeze(1)


def mask_cumsum(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(max(lengths.tolist())) if max_len is None else max_len
    counts = torch.ones(len(lengths), T, dtype=torch.long).cumsum(dim=1)  # 1..T in each row
    return counts <= lengths[:, None]


def mask_gt_flipped(lengths, max_len=None):
    width = lengths.max().item() if max_len is None else max_len
    return lengths.view(-1, 1) > torch.arange(width).view(1, -1)


CASES = [
    BlindCase(
        CHECK,
        "true_on_padding",
        mask_true_on_padding,
        "mistake",
        "I made the mask True at the padding, as nn.MultiheadAttention's key_padding_mask.",
    ),
    BlindCase(
        CHECK,
        "long_dtype",
        mask_long,
        "mistake",
        "I turned the comparison into .long(), a 0/1 integer mask.",
    ),
    BlindCase(
        CHECK,
        "float_ones",
        mask_float,
        "mistake",
        "I filled a torch.zeros tensor with 1.0 at the real tokens: a float mask.",
    ),
    BlindCase(
        CHECK,
        "less_equal",
        mask_less_equal,
        "mistake",
        "I compared position <= length, so each row gets one True too many.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        mask_counts_from_one,
        "mistake",
        "I numbered positions from 1 and kept '<', so each row gets one True too few.",
    ),
    BlindCase(
        CHECK,
        "transposed",
        mask_transposed,
        "mistake",
        "I broadcast arange as a column and lengths as a row, so the mask is (T, B).",
    ),
    BlindCase(
        CHECK,
        "ignores_max_len",
        mask_ignores_max_len,
        "mistake",
        "I always used max(lengths) as the width and never looked at max_len.",
    ),
    BlindCase(
        CHECK,
        "right_aligned",
        mask_right_aligned,
        "mistake",
        "I marked the last lengths[b] positions as real, as if padding came first.",
    ),
    BlindCase(
        CHECK,
        "attention_shape",
        mask_attention_shape,
        "mistake",
        "I returned the mask already shaped (B, 1, 1, T) for attention.",
    ),
    BlindCase(
        CHECK,
        "max_len_only_cuts",
        mask_max_len_only_if_longer,
        "mistake",
        "I only used max_len when it is shorter than the longest row, never to widen.",
    ),
    BlindCase(
        CHECK,
        "loop",
        mask_loop,
        "correct",
        "A bool zeros tensor filled row by row in a Python loop; accepts lists too.",
    ),
    BlindCase(
        CHECK,
        "expand",
        mask_expand,
        "correct",
        "arange expanded to (B, T) and compared with lengths.unsqueeze(1).",
    ),
    BlindCase(
        CHECK,
        "cumsum",
        mask_cumsum,
        "correct",
        "Counts 1..T by cumsum of ones, compared <= lengths.",
    ),
    BlindCase(
        CHECK,
        "gt_flipped",
        mask_gt_flipped,
        "correct",
        "lengths.view(-1, 1) > arange.view(1, -1), no type hints.",
    ),
]
