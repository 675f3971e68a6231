"""Blind set B6, check_padding_mask (chapter 1): masks from lengths as readers write them."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_padding_mask"


# ---------------------------------------------------------------- mistakes


def mask_true_on_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] >= lengths[:, None]  # True = padding, as key_padding_mask


def mask_as_long(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return (torch.arange(T)[None, :] < lengths[:, None]).long()  # 1/0 to multiply with


def mask_less_or_equal(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] <= lengths[:, None]


def mask_time_by_batch(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[:, None] < lengths[None, :]  # (T, B)


def mask_ignores_max_len(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max())  # the batch is never wider than its longest row
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_width_max_plus_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) + 1 if max_len is None else max_len  # positions 0..max inclusive
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_lengths_not_unsqueezed(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] < lengths  # lengths broadcast as the last axis


def mask_sorted_rows(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = lengths.sort(descending=True).values  # as pack_padded_sequence wants them
    T = int(lengths[0]) if max_len is None else max_len
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_ready_for_attention(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    mask = torch.arange(T)[None, :] < lengths[:, None]
    return mask[:, None, None, :]  # (B, 1, 1, T), so it broadcasts over heads and queries


# ---------------------------------------------------------------- correct variants


def mask_row_loop(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else int(max(lengths.tolist()))
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths.tolist()):
        mask[b, :n] = True
    return mask


def mask_expand_compare(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len or int(lengths.max())
    positions = torch.arange(T, device=lengths.device).expand(len(lengths), T)  # (B, T)
    return positions < lengths.unsqueeze(1)


def mask_not_beyond_end(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else int(max_len)
    beyond = torch.arange(T).unsqueeze(0) >= lengths.unsqueeze(-1)  # True on padding
    return ~beyond


CASES = [
    BlindCase(
        CHECK,
        "true_on_padding",
        mask_true_on_padding,
        "mistake",
        "My mask is True on the padding and False on real tokens, like key_padding_mask.",
    ),
    BlindCase(
        CHECK,
        "long_mask",
        mask_as_long,
        "mistake",
        "I turned the mask into 1/0 integers with .long(), to multiply with, instead of bools.",
    ),
    BlindCase(
        CHECK,
        "less_or_equal",
        mask_less_or_equal,
        "mistake",
        "I compared positions <= length, so each row has one True too many.",
    ),
    BlindCase(
        CHECK,
        "time_by_batch",
        mask_time_by_batch,
        "mistake",
        "I put the positions on the rows and the lengths on the columns, so the mask is (T, B).",
    ),
    BlindCase(
        CHECK,
        "max_len_ignored",
        mask_ignores_max_len,
        "mistake",
        "I always made the mask as wide as the longest length and ignored max_len.",
    ),
    BlindCase(
        CHECK,
        "width_longest_plus_one",
        mask_width_max_plus_one,
        "mistake",
        "Without max_len I made the mask max(lengths) + 1 wide, counting positions 0..max.",
    ),
    BlindCase(
        CHECK,
        "lengths_not_unsqueezed",
        mask_lengths_not_unsqueezed,
        "mistake",
        "I compared arange(T)[None, :] with lengths without adding an axis to lengths, so "
        "the two broadcast along the same axis.",
    ),
    BlindCase(
        CHECK,
        "rows_sorted",
        mask_sorted_rows,
        "mistake",
        "I sorted the lengths longest first before building the mask, so the rows no longer "
        "match the batch.",
    ),
    BlindCase(
        CHECK,
        "shape_b11t",
        mask_ready_for_attention,
        "mistake",
        "I returned the mask as (B, 1, 1, T), ready for attention, instead of (B, T).",
    ),
    BlindCase(
        CHECK,
        "row_loop",
        mask_row_loop,
        "correct",
        "A bool zeros (B, T) tensor, and a loop that sets the first lengths[b] entries of "
        "row b to True.",
    ),
    BlindCase(
        CHECK,
        "expand_compare",
        mask_expand_compare,
        "correct",
        "arange(T) expanded to (B, T) and compared with lengths.unsqueeze(1); T is "
        "max_len or the longest length.",
    ),
    BlindCase(
        CHECK,
        "negated_beyond_end",
        mask_not_beyond_end,
        "correct",
        "I mark the positions at or beyond each length and negate that.",
    ),
]
