"""Blind set B24, check_padding_mask (chapter 1): the (B, T) mask of real tokens as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_padding_mask"


def _width(lengths: Tensor, max_len: int | None) -> int:
    if max_len is not None:
        return max_len
    return int(lengths.max()) if lengths.numel() else 0


# ---------------------------------------------------------------- mistakes


def mask_true_on_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T)[None, :] >= lengths[:, None]  # marks the padding


def mask_as_long(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return (torch.arange(T)[None, :] < lengths[:, None]).long()  # 0/1, handy to multiply


def mask_less_equal(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T)[None, :] <= lengths[:, None]


def mask_positions_from_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    positions = torch.arange(1, T + 1)  # the 1st, 2nd, ... token
    return positions[None, :] < lengths[:, None]


def mask_time_by_batch(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T)[:, None] < lengths[None, :]  # (T, B)


def mask_ignores_max_len(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max())
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_width_is_batch(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len or lengths.size(0)
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_keys_axis(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return (torch.arange(T)[None, :] < lengths[:, None])[:, None, :]  # (B, 1, T) for attention


def mask_unsqueeze_in_place(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    lengths.unsqueeze_(1)  # (B, 1)
    return torch.arange(T) < lengths


def mask_left_padded(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T)[None, :] >= (T - lengths)[:, None]  # the last lengths[b] positions


def mask_no_unsqueeze(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T) < lengths


def mask_width_required(lengths: Tensor, max_len: int) -> Tensor:
    return torch.arange(max_len)[None, :] < lengths[:, None]


# ---------------------------------------------------------------- correct variants


def mask_row_loop(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths.tolist()):
        mask[b, :n] = True
    return mask


def mask_cumsum(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else (lengths.max().item() if len(lengths) else 0)
    counts = torch.ones(lengths.shape[0], T, dtype=torch.long).cumsum(dim=1)  # 1, 2, ..., T
    return counts <= lengths.unsqueeze(-1)


def mask_expand_not(
    lengths: Tensor, max_len: int | None = None, device: torch.device | str | None = None
) -> Tensor:
    lengths = torch.as_tensor(lengths, device=device)
    T = _width(lengths, max_len)
    positions = torch.arange(T, device=lengths.device).expand(lengths.shape[0], T)  # (B, T)
    return ~(positions >= lengths.view(-1, 1))


CASES = [
    BlindCase(
        CHECK,
        "true_on_padding",
        mask_true_on_padding,
        "mistake",
        "My mask is True on the padding (positions >= length), the other polarity.",
    ),
    BlindCase(
        CHECK,
        "long_zeros_ones",
        mask_as_long,
        "mistake",
        "I turned the comparison into 0/1 with .long() so that it can be multiplied.",
    ),
    BlindCase(
        CHECK,
        "less_or_equal",
        mask_less_equal,
        "mistake",
        "I compared positions <= length, so one padding position per row counts as real.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        mask_positions_from_one,
        "mistake",
        "I numbered the positions from 1, so the last real token of each row is marked False.",
    ),
    BlindCase(
        CHECK,
        "time_by_batch",
        mask_time_by_batch,
        "mistake",
        "I put the positions on the rows and the lengths on the columns: the mask is (T, B).",
    ),
    BlindCase(
        CHECK,
        "max_len_ignored",
        mask_ignores_max_len,
        "mistake",
        "I always took T = max(lengths) and never used max_len.",
    ),
    BlindCase(
        CHECK,
        "width_from_batch_size",
        mask_width_is_batch,
        "mistake",
        "When max_len is None I took T = lengths.size(0), the batch size, instead of the longest "
        "length.",
    ),
    BlindCase(
        CHECK,
        "extra_key_axis",
        mask_keys_axis,
        "mistake",
        "I returned the mask as (B, 1, T), ready to broadcast over the queries.",
    ),
    BlindCase(
        CHECK,
        "unsqueeze_in_place",
        mask_unsqueeze_in_place,
        "mistake",
        "I used lengths.unsqueeze_(1), which changes the caller's lengths to (B, 1).",
    ),
    BlindCase(
        CHECK,
        "left_padding_mask",
        mask_left_padded,
        "mistake",
        "I marked the last lengths[b] positions of each row, as if the padding came first.",
    ),
    BlindCase(
        CHECK,
        "no_unsqueeze",
        mask_no_unsqueeze,
        "mistake",
        "I compared arange(T) < lengths without adding the axes, so the shapes do not line up.",
    ),
    BlindCase(
        CHECK,
        "max_len_required",
        mask_width_required,
        "mistake",
        "I made max_len a required argument, without the default None.",
    ),
    BlindCase(
        CHECK,
        "row_loop",
        mask_row_loop,
        "correct",
        "A boolean zeros tensor whose first lengths[b] entries of row b are set True in a loop.",
    ),
    BlindCase(
        CHECK,
        "cumsum_counts",
        mask_cumsum,
        "correct",
        "Counts 1..T by cumsum of ones, compared with the lengths (<=).",
    ),
    BlindCase(
        CHECK,
        "expand_and_negate_with_device",
        mask_expand_not,
        "correct",
        "Positions expanded to (B, T), the negation of positions >= length; an extra optional "
        "device argument.",
    ),
]
