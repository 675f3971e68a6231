"""Blind set B34, check_padding_mask (chapter 1): the mask of a padded batch as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_padding_mask"


def _width(lengths: Tensor, max_len: int | None) -> int:
    return int(lengths.max()) if max_len is None else max_len


# ---------------------------------------------------------------- mistakes


def mask_pad_true(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T)[None, :] >= lengths[:, None]  # True where it is padding


def mask_ints(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return (torch.arange(T)[None, :] < lengths[:, None]).long()  # 1 = real, 0 = pad


def mask_off_by_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T)[None, :] <= lengths[:, None]  # position t is real if t <= length


def mask_starts_at_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    positions = torch.arange(1, T + 1)
    return positions[None, :] < lengths[:, None]  # positions 1..T


def mask_transposed(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T)[:, None] < lengths[None, :]  # (T, B)


def mask_ignores_max_len(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max())  # max_len is only a hint
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_max_len_plus_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) + 1 if max_len is None else max_len
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_float(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return (torch.arange(T)[None, :] < lengths[:, None]).float()


def mask_triu_rows(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    tri = torch.ones(T + 1, T, dtype=torch.bool).tril()  # row n: n + 1 ones
    return tri[lengths]


def mask_sum_one_row(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T) < lengths.max()  # (T,), one row for the whole batch


def mask_from_min(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return (torch.arange(T)[None, :] < lengths.min()).expand(len(lengths), T)


# ---------------------------------------------------------------- correct variants


def mask_loop(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths.tolist()):
        mask[b, :n] = True
    return mask


def mask_expand(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = max_len or int(lengths.max())
    positions = torch.arange(T, device=lengths.device).expand(len(lengths), T)
    return positions < lengths.unsqueeze(1)


def mask_tril_lookup(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    table = torch.ones(T + 1, T, dtype=torch.bool).tril(-1)  # row n has n leading Trues
    return table[lengths.long()]


def mask_cumsum(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    counts = torch.ones(len(lengths), T, dtype=torch.long).cumsum(dim=1)  # 1..T
    return counts <= lengths[:, None]


CASES = [
    BlindCase(
        CHECK,
        "true_on_padding",
        mask_pad_true,
        "mistake",
        "I made the mask True on the padding, like key_padding_mask",
    ),
    BlindCase(
        CHECK,
        "long_mask",
        mask_ints,
        "mistake",
        "I returned a mask of 1s and 0s (long) instead of bools",
    ),
    BlindCase(
        CHECK,
        "less_equal",
        mask_off_by_one,
        "mistake",
        "I wrote position <= length, so one padding position is True",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        mask_starts_at_one,
        "mistake",
        "I numbered the positions 1..T and kept the < comparison",
    ),
    BlindCase(
        CHECK,
        "time_by_batch",
        mask_transposed,
        "mistake",
        "I broadcast the other way round and got a (T, B) mask",
    ),
    BlindCase(
        CHECK,
        "max_len_ignored",
        mask_ignores_max_len,
        "mistake",
        "I always used the longest length as the width and ignored max_len",
    ),
    BlindCase(
        CHECK,
        "one_wider",
        mask_max_len_plus_one,
        "mistake",
        "without max_len I made the mask one wider than the longest length",
    ),
    BlindCase(
        CHECK,
        "float_mask",
        mask_float,
        "mistake",
        "I converted the comparison to float so I could multiply with it",
    ),
    BlindCase(
        CHECK,
        "tril_one_too_many",
        mask_triu_rows,
        "mistake",
        "I looked up row lengths[b] of tril() of ones, which has one True too many",
    ),
    BlindCase(
        CHECK,
        "one_row_for_batch",
        mask_sum_one_row,
        "mistake",
        "I compared the positions with the longest length only, one row for all",
    ),
    BlindCase(
        CHECK,
        "shortest_length",
        mask_from_min,
        "mistake",
        "I used the shortest length for every row",
    ),
    BlindCase(
        CHECK, "loop_rows", mask_loop, "correct", "I filled a bool tensor row by row with a loop"
    ),
    BlindCase(
        CHECK,
        "expand_positions",
        mask_expand,
        "correct",
        "I expanded arange to (B, T) and compared with the lengths",
    ),
    BlindCase(
        CHECK,
        "tril_lookup",
        mask_tril_lookup,
        "correct",
        "I indexed a lower-triangular table with the lengths",
    ),
    BlindCase(
        CHECK,
        "cumsum_count",
        mask_cumsum,
        "correct",
        "I counted positions 1..T with cumsum and compared with <=",
    ),
]
