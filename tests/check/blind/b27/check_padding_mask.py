"""Blind set B27, check_padding_mask (chapter 1): the (B, T) mask of real tokens as readers write it."""

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
    return torch.arange(T)[None, :] >= lengths[:, None]  # marks the padding


def mask_long_ones(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return (torch.arange(T)[None, :] < lengths[:, None]).long()  # 1 = real, 0 = pad


def mask_less_or_equal(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T)[None, :] <= lengths[:, None]


def mask_positions_from_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    positions = torch.arange(1, T + 1)  # position 1 is the first token
    return positions[None, :] < lengths[:, None]


def mask_time_first(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T)[:, None] < lengths[None, :]  # (T, B), one column per sentence


def mask_ignores_max_len(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max())
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_width_is_batch(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = len(lengths) if max_len is None else max_len  # one column per entry of lengths
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_additive(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    real = torch.arange(T)[None, :] < lengths[:, None]
    return torch.zeros(real.shape).masked_fill(~real, float("-inf"))  # added to the scores


def mask_feature_axis(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    real = torch.arange(T)[None, :] < lengths[:, None]
    return real.unsqueeze(-1)  # (B, T, 1), ready to multiply (B, T, F) vectors


def mask_no_unsqueeze(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T) < lengths  # one comparison per position


def mask_loop_off_by_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths.tolist()):
        mask[b, : n - 1] = True  # up to the last token
    return mask


def mask_longest_plus_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) + 1 if max_len is None else max_len  # arange stops before its end
    return torch.arange(T)[None, :] < lengths[:, None]


# ---------------------------------------------------------------- correct variants


def mask_loop(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = max_len if max_len is not None else int(max(lengths.tolist()))
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths.tolist()):
        mask[b, :n] = True
    return mask


def mask_expand_lt(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    B = lengths.shape[0]
    T = max_len or int(lengths.max())
    positions = torch.arange(T, device=lengths.device).expand(B, T)
    return positions.lt(lengths.unsqueeze(1))


def mask_cumsum(lengths: Tensor, max_len: int | None = None) -> Tensor:
    """Ones, counted along each row: position t is real while its count is <= the length."""
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else int(max_len)
    counts = torch.ones(len(lengths), T, dtype=torch.long).cumsum(dim=1)  # 1, 2, ..., T
    return counts <= lengths.view(-1, 1)


CASES = [
    BlindCase(
        CHECK,
        "true_on_padding",
        mask_true_on_padding,
        "mistake",
        "I made the mask True on the padding, the positions to hide.",
    ),
    BlindCase(
        CHECK,
        "long_ones_and_zeros",
        mask_long_ones,
        "mistake",
        "I returned 1 and 0 as a long tensor instead of booleans.",
    ),
    BlindCase(
        CHECK,
        "less_or_equal",
        mask_less_or_equal,
        "mistake",
        "I compared positions <= lengths, so one padding position per row counts as real.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        mask_positions_from_one,
        "mistake",
        "I numbered the positions from 1, so each row loses its last real token.",
    ),
    BlindCase(
        CHECK,
        "time_first",
        mask_time_first,
        "mistake",
        "I put the positions on the first axis, a (T, B) mask.",
    ),
    BlindCase(
        CHECK,
        "max_len_ignored",
        mask_ignores_max_len,
        "mistake",
        "I always made the mask as wide as the longest length and never used max_len.",
    ),
    BlindCase(
        CHECK,
        "width_from_len_lengths",
        mask_width_is_batch,
        "mistake",
        "I took T as len(lengths), which is the batch size, not the longest length.",
    ),
    BlindCase(
        CHECK,
        "additive_minus_inf",
        mask_additive,
        "mistake",
        "I returned the additive mask, 0 on real tokens and -inf on padding, as the notes put it.",
    ),
    BlindCase(
        CHECK,
        "extra_feature_axis",
        mask_feature_axis,
        "mistake",
        "I returned (B, T, 1) so it multiplies word vectors directly.",
    ),
    BlindCase(
        CHECK,
        "forgot_the_unsqueeze",
        mask_no_unsqueeze,
        "mistake",
        "I compared arange(T) with lengths without adding the axes, so it does not broadcast to "
        "(B, T).",
    ),
    BlindCase(
        CHECK,
        "loop_stops_before_last",
        mask_loop_off_by_one,
        "mistake",
        "In my loop I set mask[b, :n - 1], thinking n - 1 is the last token's index.",
    ),
    BlindCase(
        CHECK,
        "longest_plus_one",
        mask_longest_plus_one,
        "mistake",
        "Without max_len I made the mask max(lengths) + 1 wide, one column of padding too many.",
    ),
    BlindCase(
        CHECK,
        "python_loop",
        mask_loop,
        "correct",
        "A bool tensor of zeros, and a loop that sets the first n positions of each row.",
    ),
    BlindCase(
        CHECK,
        "expand_and_lt",
        mask_expand_lt,
        "correct",
        "arange expanded to (B, T) and compared with .lt against lengths.unsqueeze(1).",
    ),
    BlindCase(
        CHECK,
        "cumsum_counts",
        mask_cumsum,
        "correct",
        "Position counts 1..T from a cumsum of ones, real while the count is <= the length.",
    ),
]
