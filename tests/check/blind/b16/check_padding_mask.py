"""Blind set B16, check_padding_mask (chapter 1): the (B, T) mask of real tokens as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_padding_mask"


def _width(lengths: Tensor, max_len: int | None) -> int:
    return int(lengths.max()) if max_len is None else max_len


# ---------------------------------------------------------------- mistakes


def mask_true_on_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    positions = torch.arange(_width(lengths, max_len))
    return positions[None, :] >= lengths[:, None]  # True where the padding is


def mask_of_ints(lengths: Tensor, max_len: int | None = None) -> Tensor:
    positions = torch.arange(_width(lengths, max_len))
    return (positions[None, :] < lengths[:, None]).long()  # 1 = real, 0 = padding


def mask_less_or_equal(lengths: Tensor, max_len: int | None = None) -> Tensor:
    positions = torch.arange(_width(lengths, max_len))
    return positions[None, :] <= lengths[:, None]  # position up to the length


def mask_positions_from_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    positions = torch.arange(1, T + 1)  # the 1st, 2nd, ... token
    return positions[None, :] < lengths[:, None]


def mask_transposed(lengths: Tensor, max_len: int | None = None) -> Tensor:
    positions = torch.arange(_width(lengths, max_len))
    return positions[:, None] < lengths[None, :]  # (T, B)


def mask_ignores_max_len(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max())  # as wide as the longest row is all a batch needs
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_width_is_batch_size(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else len(lengths)  # one column per entry of lengths
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_shifts_lengths_in_place(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    lengths -= 1  # index of the last real token
    return torch.arange(T)[None, :] <= lengths[:, None]


def mask_for_attention(lengths: Tensor, max_len: int | None = None) -> Tensor:
    positions = torch.arange(_width(lengths, max_len))
    return (positions[None, :] < lengths[:, None])[:, None, :]  # (B, 1, T), ready to broadcast


# ---------------------------------------------------------------- correct variants


def mask_from_triangle(lengths: Tensor, max_len: int | None = None) -> Tensor:
    """Row n of [zeros; lower triangle of ones] is True at exactly the first n positions."""
    T = _width(lengths, max_len)
    table = torch.ones(T + 1, T, dtype=torch.bool).tril(diagonal=-1)  # row n: n Trues
    return table[lengths.long()]


def mask_by_cumsum(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    counts = torch.ones(len(lengths), T, dtype=torch.long).cumsum(dim=1)  # 1, 2, ..., T
    return counts <= lengths.unsqueeze(1)


def mask_row_by_row(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths.tolist()):
        mask[b, :n] = True
    return mask


def mask_expanded_arange(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len or int(lengths.max())
    positions = torch.arange(T, device=lengths.device).expand(len(lengths), T)
    return positions.lt(lengths.unsqueeze(-1))


CASES = [
    BlindCase(
        CHECK,
        "true_on_padding",
        mask_true_on_padding,
        "mistake",
        "My mask is True on the padding (positions >= length), as PyTorch's key_padding_mask.",
    ),
    BlindCase(
        CHECK,
        "integer_mask",
        mask_of_ints,
        "mistake",
        "I turned the mask into 1s and 0s with .long() so that it can be multiplied.",
    ),
    BlindCase(
        CHECK,
        "less_or_equal",
        mask_less_or_equal,
        "mistake",
        "I compared positions <= length, which marks one padding position too many as real.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        mask_positions_from_one,
        "mistake",
        "I numbered the positions from 1 (arange(1, T + 1)) but kept the < comparison, so the "
        "last real token is marked as padding.",
    ),
    BlindCase(
        CHECK,
        "transposed",
        mask_transposed,
        "mistake",
        "I put the positions on the rows and the sequences on the columns: (T, B).",
    ),
    BlindCase(
        CHECK,
        "max_len_ignored",
        mask_ignores_max_len,
        "mistake",
        "I always used the longest length as the width and ignored max_len.",
    ),
    BlindCase(
        CHECK,
        "width_is_batch_size",
        mask_width_is_batch_size,
        "mistake",
        "Without max_len I took the width as len(lengths), the batch size, instead of the "
        "longest length.",
    ),
    BlindCase(
        CHECK,
        "lengths_decremented_in_place",
        mask_shifts_lengths_in_place,
        "mistake",
        "I turned the lengths into last indices with lengths -= 1, which changes the caller's "
        "tensor (a second call gets a different mask).",
    ),
    BlindCase(
        CHECK,
        "extra_query_axis",
        mask_for_attention,
        "mistake",
        "I returned the mask as (B, 1, T) so it broadcasts over the queries later.",
    ),
    BlindCase(
        CHECK,
        "rows_of_a_triangle",
        mask_from_triangle,
        "correct",
        "Indexes a (T + 1, T) lower-triangular table with the lengths: row n has n Trues.",
    ),
    BlindCase(
        CHECK,
        "cumsum_counter",
        mask_by_cumsum,
        "correct",
        "Counts 1..T with cumsum over ones and compares counts <= lengths.",
    ),
    BlindCase(
        CHECK,
        "row_by_row_loop",
        mask_row_by_row,
        "correct",
        "A Python loop that sets mask[b, :n] = True in a zero bool tensor.",
    ),
    BlindCase(
        CHECK,
        "expanded_arange_lt",
        mask_expanded_arange,
        "correct",
        "arange expanded to (B, T) and .lt against lengths.unsqueeze(-1).",
    ),
]
