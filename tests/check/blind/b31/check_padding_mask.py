"""Blind set B31, check_padding_mask (chapter 1): the (B, T) mask of real tokens, as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_padding_mask"


def _width(lengths: Tensor, max_len: int | None) -> int:
    return int(lengths.max()) if max_len is None else max_len


# ---------------------------------------------------------------- mistakes


def mask_true_at_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T)[None, :] >= lengths[:, None]  # True = pad, as key_padding_mask


def mask_as_long(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return (torch.arange(T)[None, :] < lengths[:, None]).long()  # 1 = real, 0 = pad


def mask_as_float(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return (torch.arange(T)[None, :] < lengths[:, None]).float()  # ready to multiply a loss


def mask_less_equal(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T)[None, :] <= lengths[:, None]


def mask_positions_from_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    positions = torch.arange(1, T + 1)  # positions 1..T
    return positions[None, :] < lengths[:, None]


def mask_time_first(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T)[:, None] < lengths[None, :]  # (T, B)


def mask_ignores_max_len(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max())  # max_len only matters for pad_sequences, I thought
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_width_is_batch_size(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = len(lengths) if max_len is None else max_len  # len() of lengths, not max()
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_width_of_first_row(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths[0]) if max_len is None else max_len  # batches are sorted longest first
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_broadcast_shape(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    mask = torch.arange(T)[None, :] < lengths[:, None]
    return mask[:, None, None, :]  # (B, 1, 1, T), ready for the attention scores


def mask_unsqueeze_in_place(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    lengths.unsqueeze_(1)  # (B, 1), to broadcast against the positions
    return torch.arange(T)[None, :] < lengths


def mask_cumsum_of_lengths(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    mask[torch.arange(len(lengths)), (lengths - 1).clamp(min=0)] = True  # last real token
    return mask


# ---------------------------------------------------------------- correct variants


def mask_loop(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(max(lengths)) if max_len is None else max_len
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths.tolist()):
        mask[b, :n] = True
    return mask


def mask_expand_compare(lengths: Tensor | list[int], max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    B = lengths.shape[0]
    T = max_len or int(lengths.max())
    return torch.arange(T, device=lengths.device).expand(B, T) < lengths.unsqueeze(1)


def mask_rows_of_triangle(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    table = torch.ones(T + 1, T, dtype=torch.bool).tril(diagonal=-1)  # row n: n leading Trues
    return table[lengths.long()]


def mask_not_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    is_pad = torch.arange(T).unsqueeze(0) >= lengths.unsqueeze(-1)
    return ~is_pad


CASES = [
    BlindCase(
        CHECK,
        "true_at_padding",
        mask_true_at_padding,
        "mistake",
        "I made the mask True at the padding, like nn.MultiheadAttention's key_padding_mask.",
    ),
    BlindCase(
        CHECK,
        "long_mask",
        mask_as_long,
        "mistake",
        "I returned the mask as .long() ones and zeros.",
    ),
    BlindCase(
        CHECK,
        "float_mask",
        mask_as_float,
        "mistake",
        "I returned a float mask so that I can multiply the loss with it.",
    ),
    BlindCase(
        CHECK,
        "less_or_equal",
        mask_less_equal,
        "mistake",
        "I compared positions <= lengths, one True too many per row.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        mask_positions_from_one,
        "mistake",
        "I numbered the positions 1..T, so every row loses its last real token.",
    ),
    BlindCase(
        CHECK,
        "time_first",
        mask_time_first,
        "mistake",
        "I broadcast the other way round and got a (T, B) mask.",
    ),
    BlindCase(
        CHECK,
        "ignores_max_len",
        mask_ignores_max_len,
        "mistake",
        "I always used max(lengths) as the width and ignored max_len.",
    ),
    BlindCase(
        CHECK,
        "width_is_batch_size",
        mask_width_is_batch_size,
        "mistake",
        "I took len(lengths) as T, the batch size instead of the longest length.",
    ),
    BlindCase(
        CHECK,
        "width_of_first_row",
        mask_width_of_first_row,
        "mistake",
        "I took lengths[0] as T, thinking the batch is sorted longest first.",
    ),
    BlindCase(
        CHECK,
        "attention_broadcast_shape",
        mask_broadcast_shape,
        "mistake",
        "I returned the mask as (B, 1, 1, T), ready for attention, instead of (B, T).",
    ),
    BlindCase(
        CHECK,
        "unsqueeze_lengths_in_place",
        mask_unsqueeze_in_place,
        "mistake",
        "I used lengths.unsqueeze_(1), which changes the caller's lengths tensor to (B, 1).",
    ),
    BlindCase(
        CHECK,
        "only_last_token",
        mask_cumsum_of_lengths,
        "mistake",
        "I set True only at each row's last real token (index lengths - 1).",
    ),
    BlindCase(
        CHECK,
        "python_loop",
        mask_loop,
        "correct",
        "A bool zeros tensor, then mask[b, :n] = True row by row.",
    ),
    BlindCase(
        CHECK,
        "expand_and_compare",
        mask_expand_compare,
        "correct",
        "arange(T).expand(B, T) < lengths.unsqueeze(1); accepts lists too.",
    ),
    BlindCase(
        CHECK,
        "rows_of_a_triangle",
        mask_rows_of_triangle,
        "correct",
        "Row n of a strictly lower-triangular (T + 1, T) table has n leading Trues; index it "
        "with the lengths.",
    ),
    BlindCase(
        CHECK,
        "not_padding",
        mask_not_padding,
        "correct",
        "Built the padding positions first and returned their negation.",
    ),
]
