"""Blind set B17, check_padding_mask (chapter 1): the (B, T) mask of real tokens as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_padding_mask"


# ---------------------------------------------------------------- mistakes


def mask_true_on_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    positions = torch.arange(T)
    return positions[None, :] >= lengths[:, None]  # marks the padding to hide


def mask_as_long(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return (torch.arange(T)[None, :] < lengths[:, None]).long()  # 1 = real, 0 = pad


def mask_float_ones(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    mask = torch.zeros(len(lengths), T)
    for b, n in enumerate(lengths.tolist()):
        mask[b, :n] = 1
    return mask


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
    T = int(lengths.max())  # the longest row is the width of the batch
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_width_is_batch_size(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = len(lengths) if max_len is None else max_len  # one column per sequence
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_no_unsqueeze(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T) < lengths  # broadcasting will sort it out


def mask_max_len_added(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) + (max_len or 0)  # max_len more columns of padding
    return torch.arange(T)[None, :] < lengths[:, None]


# ---------------------------------------------------------------- correct variants


def mask_loop(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else int(max(lengths))
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths):
        mask[b, : int(n)] = True
    return mask


def mask_expand(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)  # a list of ints works too
    T = max_len or int(lengths.max())
    return torch.arange(T, device=lengths.device).expand(len(lengths), T) < lengths.unsqueeze(1)


def mask_one_hot_cumsum(lengths: Tensor, max_len: int | None = None) -> Tensor:
    """A 1 at column lengths[b], a cumulative sum makes it 1 from there on: that is the padding."""
    T = int(lengths.max()) if max_len is None else max_len
    ends = F.one_hot(lengths.long(), T + 1).cumsum(dim=-1)  # (B, T + 1)
    return ends[:, :T] == 0


def mask_arange_ge(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    padding = torch.arange(T).unsqueeze(0) >= lengths.unsqueeze(-1)
    return ~padding


CASES = [
    BlindCase(
        CHECK,
        "true_on_padding",
        mask_true_on_padding,
        "mistake",
        "My mask is True on the padding (the positions to hide), the opposite polarity.",
    ),
    BlindCase(
        CHECK,
        "long_mask",
        mask_as_long,
        "mistake",
        "I turned the comparison into a long tensor of 1s and 0s instead of keeping bools.",
    ),
    BlindCase(
        CHECK,
        "float_ones_loop",
        mask_float_ones,
        "mistake",
        "I filled torch.zeros(B, T) with 1 at the real positions, so the mask is float32.",
    ),
    BlindCase(
        CHECK,
        "less_equal",
        mask_less_equal,
        "mistake",
        "I compared positions <= lengths, one real token too many per row.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        mask_positions_from_one,
        "mistake",
        "I numbered positions from 1 with arange(1, T + 1), so each row loses its last real token.",
    ),
    BlindCase(
        CHECK,
        "transposed",
        mask_transposed,
        "mistake",
        "I put the positions on the rows and the lengths on the columns: a (T, B) mask.",
    ),
    BlindCase(
        CHECK,
        "max_len_ignored",
        mask_ignores_max_len,
        "mistake",
        "I always made the mask as wide as the longest row and never used max_len.",
    ),
    BlindCase(
        CHECK,
        "width_batch_size",
        mask_width_is_batch_size,
        "mistake",
        "I used len(lengths) as the width T, mixing up the number of rows with the longest row.",
    ),
    BlindCase(
        CHECK,
        "no_unsqueeze",
        mask_no_unsqueeze,
        "mistake",
        "I compared arange(T) < lengths without adding the axes, hoping broadcasting would make "
        "it (B, T).",
    ),
    BlindCase(
        CHECK,
        "max_len_added",
        mask_max_len_added,
        "mistake",
        "I read max_len as the number of extra padding columns and added it to the longest length.",
    ),
    BlindCase(
        CHECK,
        "loop_over_rows",
        mask_loop,
        "correct",
        "A bool zeros mask with True written into the first lengths[b] positions, row by row.",
    ),
    BlindCase(
        CHECK,
        "expand_and_compare",
        mask_expand,
        "correct",
        "arange(T).expand(B, T) < lengths.unsqueeze(1); also accepts a list of lengths.",
    ),
    BlindCase(
        CHECK,
        "one_hot_cumsum",
        mask_one_hot_cumsum,
        "correct",
        "one_hot(lengths, T + 1).cumsum is 1 from each row's end on; the mask is where it is 0.",
    ),
    BlindCase(
        CHECK,
        "not_of_padding",
        mask_arange_ge,
        "correct",
        "Built the padding (positions >= lengths) first and returned its negation.",
    ),
]
