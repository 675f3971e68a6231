"""Blind set B23, check_padding_mask (chapter 1): the (B, T) mask of real tokens as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_padding_mask"


def _width(lengths: Tensor, max_len: int | None) -> int:
    return int(lengths.max()) if max_len is None else max_len


# ---------------------------------------------------------------- mistakes


def mask_true_at_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    positions = torch.arange(_width(lengths, max_len))
    return positions[None, :] >= lengths[:, None]  # True where the padding is


def mask_long(lengths: Tensor, max_len: int | None = None) -> Tensor:
    positions = torch.arange(_width(lengths, max_len))
    return (positions[None, :] < lengths[:, None]).long()  # 1 = real, 0 = pad


def mask_float_d2l(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    mask = torch.arange(T, dtype=torch.float32)[None, :] < lengths[:, None]
    return mask.float()  # to multiply the scores with


def mask_less_equal(lengths: Tensor, max_len: int | None = None) -> Tensor:
    positions = torch.arange(_width(lengths, max_len))
    return positions[None, :] <= lengths[:, None]  # up to and including the length


def mask_one_based_positions(lengths: Tensor, max_len: int | None = None) -> Tensor:
    positions = torch.arange(1, _width(lengths, max_len) + 1)  # token 1 .. T
    return positions[None, :] < lengths[:, None]


def mask_transposed(lengths: Tensor, max_len: int | None = None) -> Tensor:
    positions = torch.arange(_width(lengths, max_len))
    return positions[:, None] < lengths[None, :]  # one column per sentence


def mask_ignores_max_len(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max())  # the batch is as wide as its longest row
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_width_is_batch(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else len(lengths)
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_one_wider(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else int(lengths.max()) + 1  # one slot for <eos>
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_attention_shape(lengths: Tensor, max_len: int | None = None) -> Tensor:
    positions = torch.arange(_width(lengths, max_len))
    return (positions[None, :] < lengths[:, None]).unsqueeze(1)  # (B, 1, T), ready for scores


def mask_right_aligned(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    positions = torch.arange(T)
    return positions[None, :] >= (T - lengths)[:, None]  # the real tokens are the last ones


def mask_loop_inclusive(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths.tolist()):
        mask[b, : n - 1] = True  # positions 0 .. n-1
    return mask


# ---------------------------------------------------------------- correct variants


def mask_loop(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max(lengths.tolist(), default=0) if max_len is None else max_len
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths.tolist()):
        mask[b, :n] = True
    return mask


def mask_expand_gt(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    if max_len is None:
        max_len = int(lengths.max()) if lengths.numel() else 0
    T = int(max_len)
    grid = torch.arange(T, device=lengths.device).expand(len(lengths), T)  # (B, T)
    return lengths.unsqueeze(1) > grid


def mask_cumsum(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else int(lengths.amax()) if len(lengths) else 0
    counts = torch.ones(len(lengths), T, dtype=torch.long).cumsum(dim=1)  # 1 .. T in each row
    return counts.le(lengths.view(-1, 1))


CASES = [
    BlindCase(
        CHECK,
        "true_at_padding",
        mask_true_at_padding,
        "mistake",
        "I marked the padding with True, like key_padding_mask in PyTorch",
    ),
    BlindCase(
        CHECK,
        "long_mask",
        mask_long,
        "mistake",
        "I returned 1/0 as long integers instead of a bool mask",
    ),
    BlindCase(
        CHECK,
        "float_d2l",
        mask_float_d2l,
        "mistake",
        "I returned a float 1.0/0.0 mask, to multiply with",
    ),
    BlindCase(
        CHECK,
        "less_equal",
        mask_less_equal,
        "mistake",
        "I compared positions <= lengths, so one padding cell per row is True",
    ),
    BlindCase(
        CHECK,
        "one_based_positions",
        mask_one_based_positions,
        "mistake",
        "I numbered the positions 1..T and kept position < length",
    ),
    BlindCase(
        CHECK, "transposed", mask_transposed, "mistake", "I broadcast the other way and got (T, B)"
    ),
    BlindCase(
        CHECK,
        "ignores_max_len",
        mask_ignores_max_len,
        "mistake",
        "I always used the longest length as the width and dropped max_len",
    ),
    BlindCase(
        CHECK,
        "width_is_batch",
        mask_width_is_batch,
        "mistake",
        "when max_len is None I used len(lengths) as the width",
    ),
    BlindCase(
        CHECK,
        "one_wider",
        mask_one_wider,
        "mistake",
        "by default I made the mask one column wider than the longest length",
    ),
    BlindCase(
        CHECK,
        "attention_shape",
        mask_attention_shape,
        "mistake",
        "I returned (B, 1, T) so that it broadcasts against attention scores",
    ),
    BlindCase(
        CHECK,
        "right_aligned",
        mask_right_aligned,
        "mistake",
        "I put the True cells at the end of each row, as if the padding came first",
    ),
    BlindCase(
        CHECK,
        "loop_inclusive",
        mask_loop_inclusive,
        "mistake",
        "in a loop I set mask[b, :n - 1], thinking the slice end was inclusive",
    ),
    BlindCase(
        CHECK,
        "loop",
        mask_loop,
        "correct",
        "a Python loop setting mask[b, :n] = True on a bool zeros tensor",
    ),
    BlindCase(
        CHECK,
        "expand_gt",
        mask_expand_gt,
        "correct",
        "arange expanded to (B, T), compared as lengths > positions",
    ),
    BlindCase(
        CHECK,
        "cumsum_le",
        mask_cumsum,
        "correct",
        "positions 1..T from a cumsum of ones, compared with <= lengths",
    ),
]
