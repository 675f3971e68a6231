"""Blind set B20, check_padding_mask (chapter 1): the (B, T) mask of real tokens as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_padding_mask"


# ---------------------------------------------------------------- mistakes


def mask_pad_is_true(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] >= lengths[:, None]  # marks the padding


def mask_long(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return (torch.arange(T)[None, :] < lengths[:, None]).long()  # 1 = real, 0 = pad


def mask_less_equal(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] <= lengths[:, None]


def mask_positions_from_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    positions = torch.arange(1, T + 1)  # position 1 is the first token
    return positions[None, :] < lengths[:, None]


def mask_transposed(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[:, None] < lengths[None, :]  # (T, B)


def mask_ignores_max_len(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max())  # the batch is as wide as its longest row
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_width_from_first(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths[0]) if max_len is None else max_len  # the batches come sorted, longest first
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_width_batch_size(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = len(lengths) if max_len is None else max_len
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_float(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    mask = torch.zeros(len(lengths), T)
    for b, n in enumerate(lengths.tolist()):
        mask[b, :n] = 1.0
    return mask


def mask_attention_shape(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    mask = torch.arange(T)[None, :] < lengths[:, None]
    return mask[:, None, None, :]  # ready for (B, H, T_q, T_k) scores


def mask_width_plus_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) + 1 if max_len is None else max_len  # room for <eos>
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_last_token_dropped(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] < (lengths[:, None] - 1)  # the last index is length - 1


# ---------------------------------------------------------------- correct variants


def mask_loop(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else int(max(lengths.tolist()))
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b in range(len(lengths)):
        mask[b, : int(lengths[b])] = True
    return mask


def mask_expand(lengths: Tensor, max_len: int | None = None) -> Tensor:
    B = lengths.size(0)
    T = max_len or int(lengths.max())
    positions = torch.arange(T, device=lengths.device).expand(B, T)
    return positions < lengths.unsqueeze(1)


def mask_not_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    if max_len is None:
        max_len = lengths.max().item()
    pad = torch.arange(max_len).unsqueeze(0) >= lengths.unsqueeze(-1)
    return ~pad


def mask_cumsum(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else int(max_len)
    ones = torch.ones(len(lengths), T, dtype=torch.long)
    return ones.cumsum(dim=1) <= lengths.view(-1, 1)  # position counted from 1


CASES = [
    BlindCase(
        CHECK,
        "true_at_padding",
        mask_pad_is_true,
        "mistake",
        "My mask is True at the padding (>= instead of <).",
    ),
    BlindCase(CHECK, "long_mask", mask_long, "mistake", "I returned the mask as 0/1 longs."),
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
        mask_positions_from_one,
        "mistake",
        "I numbered positions from 1, so the last real token is marked as padding.",
    ),
    BlindCase(
        CHECK,
        "transposed",
        mask_transposed,
        "mistake",
        "I broadcast the other way round and got (T, B).",
    ),
    BlindCase(
        CHECK,
        "max_len_ignored",
        mask_ignores_max_len,
        "mistake",
        "I always used the longest length as the width and forgot max_len.",
    ),
    BlindCase(
        CHECK,
        "width_from_first_row",
        mask_width_from_first,
        "mistake",
        "I took the width from lengths[0], thinking batches are sorted longest first.",
    ),
    BlindCase(
        CHECK,
        "width_is_batch_size",
        mask_width_batch_size,
        "mistake",
        "I used len(lengths) for T, which is the batch size.",
    ),
    BlindCase(
        CHECK,
        "float_mask",
        mask_float,
        "mistake",
        "I filled a float tensor of zeros with ones for the real tokens.",
    ),
    BlindCase(
        CHECK,
        "four_dim",
        mask_attention_shape,
        "mistake",
        "I returned it as (B, 1, 1, T) so it is ready for attention.",
    ),
    BlindCase(
        CHECK,
        "one_wider",
        mask_width_plus_one,
        "mistake",
        "Without max_len I made the mask one position wider than the longest row.",
    ),
    BlindCase(
        CHECK,
        "last_token_dropped",
        mask_last_token_dropped,
        "mistake",
        "I compared with lengths - 1, thinking of the last index.",
    ),
    BlindCase(CHECK, "loop", mask_loop, "correct", "A Python loop over the rows of a bool tensor."),
    BlindCase(
        CHECK,
        "expand",
        mask_expand,
        "correct",
        "arange expanded to (B, T) and compared with lengths.unsqueeze(1).",
    ),
    BlindCase(
        CHECK,
        "not_padding",
        mask_not_padding,
        "correct",
        "I built the padding mask (>=) and inverted it with ~.",
    ),
    BlindCase(
        CHECK,
        "cumsum",
        mask_cumsum,
        "correct",
        "A cumulative sum of ones gives positions 1..T, compared with <= lengths.",
    ),
]
