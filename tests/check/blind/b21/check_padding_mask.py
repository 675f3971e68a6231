"""Blind set B21, check_padding_mask (chapter 1): the (B, T) mask of real tokens as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_padding_mask"


def _width(lengths: Tensor, max_len: int | None) -> int:
    return int(lengths.max()) if max_len is None else max_len


# ---------------------------------------------------------------- mistakes


def mask_true_on_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    positions = torch.arange(_width(lengths, max_len))
    return positions[None, :] >= lengths[:, None]  # True = padding


def mask_long(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    positions = torch.arange(_width(lengths, max_len))
    return (positions[None, :] < lengths[:, None]).long()  # 1 = real, 0 = pad


def mask_float(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    positions = torch.arange(_width(lengths, max_len))
    return (positions[None, :] < lengths[:, None]).float()  # ready to multiply a loss


def mask_less_equal(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    positions = torch.arange(_width(lengths, max_len))
    return positions[None, :] <= lengths[:, None]


def mask_positions_from_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = _width(lengths, max_len)
    positions = torch.arange(1, T + 1)  # position 1 is the first token
    return positions[None, :] < lengths[:, None]


def mask_transposed(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    positions = torch.arange(_width(lengths, max_len))
    return positions[:, None] < lengths[None, :]  # (T, B)


def mask_ignores_max_len(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    positions = torch.arange(int(lengths.max()))
    return positions[None, :] < lengths[:, None]


def mask_width_is_batch(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = max_len if max_len is not None else lengths.shape[0]
    positions = torch.arange(T)
    return positions[None, :] < lengths[:, None]


def mask_left_padded(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = _width(lengths, max_len)
    positions = torch.arange(T)
    return positions[None, :] >= (T - lengths)[:, None]  # the last lengths[b] positions


def mask_pads_extra_with_true(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    longest = int(lengths.max())
    mask = torch.arange(longest)[None, :] < lengths[:, None]
    if max_len is not None:
        mask = F.pad(mask, (0, max_len - longest), value=True)
    return mask


def mask_max_len_required(lengths: Tensor, max_len: int) -> Tensor:
    lengths = torch.as_tensor(lengths)
    positions = torch.arange(max_len)
    return positions[None, :] < lengths[:, None]


# ---------------------------------------------------------------- correct variants


def mask_expand_lt(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = max_len if max_len is not None else int(lengths.max())
    return torch.arange(T).expand(len(lengths), T).lt(lengths.unsqueeze(1))


def mask_loop(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths).tolist()
    T = max(lengths) if max_len is None else max_len
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths):
        mask[b, :n] = True
    return mask


def mask_cumsum(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = max_len or int(lengths.max())
    counts = torch.ones(len(lengths), T, dtype=torch.long).cumsum(dim=1)  # 1, 2, ..., T
    return counts <= lengths[:, None]


def mask_not_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    is_pad = torch.arange(T, device=lengths.device).unsqueeze(0) >= lengths.unsqueeze(-1)
    return ~is_pad


CASES = [
    BlindCase(
        CHECK,
        "true_on_padding",
        mask_true_on_padding,
        "mistake",
        "I made the mask True on the padding (positions >= length).",
    ),
    BlindCase(
        CHECK,
        "long_mask",
        mask_long,
        "mistake",
        "I returned the mask as 1/0 integers with .long() instead of bools.",
    ),
    BlindCase(
        CHECK,
        "float_mask",
        mask_float,
        "mistake",
        "I returned a float mask so I could multiply a loss with it.",
    ),
    BlindCase(
        CHECK,
        "less_or_equal",
        mask_less_equal,
        "mistake",
        "I compared positions <= lengths, one real token too many per row.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        mask_positions_from_one,
        "mistake",
        "I numbered the positions from 1, so each row has one real token too few.",
    ),
    BlindCase(
        CHECK,
        "transposed",
        mask_transposed,
        "mistake",
        "I broadcast positions[:, None] against lengths[None, :], giving (T, B).",
    ),
    BlindCase(
        CHECK,
        "ignores_max_len",
        mask_ignores_max_len,
        "mistake",
        "I always used max(lengths) as the width, even when max_len was given.",
    ),
    BlindCase(
        CHECK,
        "width_is_batch_size",
        mask_width_is_batch,
        "mistake",
        "Without max_len I used lengths.shape[0] (the batch size) as T.",
    ),
    BlindCase(
        CHECK,
        "left_padded",
        mask_left_padded,
        "mistake",
        "I marked the last lengths[b] positions as real, as if the padding came first.",
    ),
    BlindCase(
        CHECK,
        "extra_columns_true",
        mask_pads_extra_with_true,
        "mistake",
        "I built the mask for max(lengths), then widened it to max_len with F.pad(value=True).",
    ),
    BlindCase(
        CHECK,
        "max_len_required",
        mask_max_len_required,
        "mistake",
        "I gave max_len no default, so calling with the lengths alone fails.",
    ),
    BlindCase(
        CHECK,
        "expand_lt",
        mask_expand_lt,
        "correct",
        "arange(T).expand(B, T).lt(lengths.unsqueeze(1)).",
    ),
    BlindCase(
        CHECK,
        "loop",
        mask_loop,
        "correct",
        "A bool zeros tensor filled with True row by row in a Python loop.",
    ),
    BlindCase(
        CHECK,
        "cumsum_counts",
        mask_cumsum,
        "correct",
        "Counts 1..T by cumsum of ones, compared <= lengths.",
    ),
    BlindCase(
        CHECK,
        "not_padding",
        mask_not_padding,
        "correct",
        "Built the padding mask (positions >= lengths) and returned its negation.",
    ),
]
