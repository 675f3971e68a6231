"""Blind set B19, check_padding_mask (chapter 1): the boolean mask of a padded batch."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_padding_mask"


# ---------------------------------------------------------------- mistakes


def mask_true_on_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] >= lengths[:, None]  # True marks the padding


def mask_long(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return (torch.arange(T)[None, :] < lengths[:, None]).long()  # 1 = real, 0 = pad


def mask_less_equal(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] <= lengths[:, None]


def mask_starts_at_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    positions = torch.arange(1, T + 1)  # positions 1..T
    return positions[None, :] < lengths[:, None]


def mask_transposed(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[:, None] < lengths[None, :]  # (T, B)


def mask_ignores_max_len(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max())
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_float(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    mask = torch.zeros(len(lengths), T)
    for b, n in enumerate(lengths.tolist()):
        mask[b, :n] = 1.0
    return mask


def mask_right_aligned(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] >= (T - lengths)[:, None]  # the last lengths[b] positions


def mask_attention_shape(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    mask = torch.arange(T)[None, :] < lengths[:, None]
    return mask[:, None, :]  # (B, 1, T), ready to broadcast over the queries


# ---------------------------------------------------------------- correct variants


def mask_loop(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max(lengths.tolist()) if max_len is None else max_len
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths.tolist()):
        mask[b, :n] = True
    return mask


def mask_expand(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = max_len or int(lengths.max())
    positions = torch.arange(T, device=lengths.device).expand(len(lengths), T)  # (B, T)
    return positions.lt(lengths.unsqueeze(1))


def mask_from_cumsum(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max().item()) if max_len is None else int(max_len)
    ones = torch.ones(len(lengths), T, dtype=torch.long)
    return ones.cumsum(dim=1) <= lengths.view(-1, 1)  # 1, 2, 3, ... against each length


def mask_not_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    is_pad = torch.arange(T).unsqueeze(0) >= lengths.unsqueeze(1)
    return ~is_pad


CASES = [
    BlindCase(
        CHECK,
        "true_on_padding",
        mask_true_on_padding,
        "mistake",
        "I made the mask True on the padding, as nn.MultiheadAttention's key_padding_mask.",
    ),
    BlindCase(CHECK, "long_mask", mask_long, "mistake", "I returned 1/0 as a long tensor."),
    BlindCase(
        CHECK,
        "less_equal",
        mask_less_equal,
        "mistake",
        "I compared positions <= lengths, one real token too many.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        mask_starts_at_one,
        "mistake",
        "I counted positions from 1 and kept < length, so the last real token is masked.",
    ),
    BlindCase(
        CHECK,
        "transposed",
        mask_transposed,
        "mistake",
        "I built the mask (T, B), time first, with the broadcast axes the other way round.",
    ),
    BlindCase(
        CHECK,
        "ignores_max_len",
        mask_ignores_max_len,
        "mistake",
        "I always made the mask as wide as the longest length and forgot max_len.",
    ),
    BlindCase(
        CHECK,
        "float_mask",
        mask_float,
        "mistake",
        "I filled a float tensor of zeros with ones at the real tokens.",
    ),
    BlindCase(
        CHECK,
        "right_aligned",
        mask_right_aligned,
        "mistake",
        "I put the True values at the end of each row, as if the padding came first.",
    ),
    BlindCase(
        CHECK,
        "attention_shape",
        mask_attention_shape,
        "mistake",
        "I returned it as (B, 1, T), ready to broadcast over the queries of attention.",
    ),
    BlindCase(
        CHECK,
        "python_loop",
        mask_loop,
        "correct",
        "A boolean tensor of False, each row's first lengths[b] entries set True in a loop.",
    ),
    BlindCase(
        CHECK,
        "expand_lt",
        mask_expand,
        "correct",
        "arange expanded to (B, T) and compared with .lt; accepts a list of lengths too.",
    ),
    BlindCase(
        CHECK,
        "cumsum_positions",
        mask_from_cumsum,
        "correct",
        "Positions 1..T from a cumsum of ones, compared with <= to the lengths.",
    ),
    BlindCase(
        CHECK,
        "not_padding",
        mask_not_padding,
        "correct",
        "The padding mask (>=) built first, then inverted with ~.",
    ),
]
