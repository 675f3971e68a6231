"""Blind set B32, check_padding_mask (chapter 1): the (B, T) mask of real tokens as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_padding_mask"


def _width(lengths: Tensor, max_len: int | None) -> int:
    return int(lengths.max()) if max_len is None else max_len


# ---------------------------------------------------------------- mistakes


def mask_true_at_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    positions = torch.arange(_width(lengths, max_len))
    return positions[None, :] >= lengths[:, None]  # True = padding, as key_padding_mask


def mask_long(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    positions = torch.arange(_width(lengths, max_len))
    return (positions[None, :] < lengths[:, None]).long()  # 1 = real, 0 = pad


def mask_float(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    positions = torch.arange(_width(lengths, max_len))
    return (positions[None, :] < lengths[:, None]).float()  # ready to multiply with


def mask_le(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    positions = torch.arange(_width(lengths, max_len))
    return positions[None, :] <= lengths[:, None]  # "up to the length"


def mask_positions_from_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    positions = torch.arange(1, _width(lengths, max_len) + 1)  # positions 1..T
    return positions[None, :] < lengths[:, None]


def mask_transposed(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    positions = torch.arange(_width(lengths, max_len))
    return positions[:, None] < lengths[None, :]  # (T, B)


def mask_ignores_max_len(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    positions = torch.arange(int(lengths.max()))  # max_len only matters for truncation
    return positions[None, :] < lengths[:, None]


def mask_for_left_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = _width(lengths, max_len)
    positions = torch.arange(T)
    return positions[None, :] >= (T - lengths)[:, None]  # the real tokens are the last ones


def mask_with_head_axes(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    positions = torch.arange(_width(lengths, max_len))
    return (positions[None, :] < lengths[:, None])[:, None, None, :]  # ready for (B, H, T, T)


def mask_fixed_width(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    positions = torch.arange(max_len or 5)  # the example's longest sentence has 5 tokens
    return positions[None, :] < lengths[:, None]


def mask_decrements_lengths(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(torch.as_tensor(lengths), max_len)
    lengths -= 1  # last real index, in place on the caller's tensor
    positions = torch.arange(T)
    return positions[None, :] <= lengths[:, None]


def mask_width_plus_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) + 1 if max_len is None else max_len  # arange is exclusive
    return torch.arange(T)[None, :] < lengths[:, None]


# ---------------------------------------------------------------- correct variants


def mask_loop(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = [int(n) for n in lengths]
    T = max(lengths) if max_len is None else max_len
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths):
        mask[b, :n] = True
    return mask


def mask_reversed_comparison(
    lengths: Tensor, max_len: int | None = None, device: torch.device | str | None = None
) -> Tensor:
    lengths = torch.as_tensor(lengths, device=device)
    T = lengths.max().item() if max_len is None else max_len
    return lengths.unsqueeze(1) > torch.arange(T, device=lengths.device).unsqueeze(0)


def mask_cumsum(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths).long()
    T = int(lengths.max()) if max_len is None else max_len
    ends = torch.zeros(len(lengths), T + 1, dtype=torch.long)
    ends.scatter_(1, lengths[:, None], 1)  # a 1 just after the last real token
    return ends.cumsum(dim=1)[:, :T] == 0


def mask_expand(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else int(max_len)
    grid = torch.arange(T).expand(len(lengths), T)  # (B, T)
    return grid.lt(lengths.view(-1, 1))


CASES = [
    BlindCase(
        CHECK,
        "true_at_padding",
        mask_true_at_padding,
        "mistake",
        "I made the mask True at the padding, like nn.MultiheadAttention's key_padding_mask.",
    ),
    BlindCase(
        CHECK, "long_mask", mask_long, "mistake", "I returned the mask as 0/1 integers (.long())."
    ),
    BlindCase(
        CHECK,
        "float_mask",
        mask_float,
        "mistake",
        "I returned a float mask so that I could multiply it with the embeddings.",
    ),
    BlindCase(
        CHECK,
        "le_off_by_one",
        mask_le,
        "mistake",
        "I compared positions <= lengths, so one padding slot per row is marked real.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        mask_positions_from_one,
        "mistake",
        "I counted the positions from 1, so the last real token of each row is marked padding.",
    ),
    BlindCase(
        CHECK,
        "transposed",
        mask_transposed,
        "mistake",
        "I broadcast the other way round and got a (T, B) mask.",
    ),
    BlindCase(
        CHECK,
        "ignores_max_len",
        mask_ignores_max_len,
        "mistake",
        "I always made the mask as wide as the longest length, ignoring max_len.",
    ),
    BlindCase(
        CHECK,
        "left_padding_mask",
        mask_for_left_padding,
        "mistake",
        "I marked the last lengths[b] positions as real, as if the padding came first.",
    ),
    BlindCase(
        CHECK,
        "with_head_axes",
        mask_with_head_axes,
        "mistake",
        "I returned the mask already shaped (B, 1, 1, T) for attention instead of (B, T).",
    ),
    BlindCase(
        CHECK,
        "fixed_width_5",
        mask_fixed_width,
        "mistake",
        "When max_len is None I used the width 5 of the chapter's example instead of max(lengths).",
    ),
    BlindCase(
        CHECK,
        "decrements_lengths_in_place",
        mask_decrements_lengths,
        "mistake",
        "I did lengths -= 1 to get the last index, which changes the caller's lengths tensor.",
    ),
    BlindCase(
        CHECK,
        "width_plus_one",
        mask_width_plus_one,
        "mistake",
        "I made the default width max(lengths) + 1, thinking arange needs one more.",
    ),
    BlindCase(
        CHECK,
        "loop",
        mask_loop,
        "correct",
        "A bool zeros tensor and a loop that sets the first lengths[b] entries of each row.",
    ),
    BlindCase(
        CHECK,
        "reversed_comparison_device",
        mask_reversed_comparison,
        "correct",
        "lengths[:, None] > arange(T)[None, :]; an extra device argument with a default.",
    ),
    BlindCase(
        CHECK,
        "cumsum",
        mask_cumsum,
        "correct",
        "A 1 scattered just after each row's end, a cumulative sum, and == 0.",
    ),
    BlindCase(
        CHECK,
        "expand_lt",
        mask_expand,
        "correct",
        "arange(T) expanded to (B, T) and compared with .lt against lengths.view(-1, 1).",
    ),
]
