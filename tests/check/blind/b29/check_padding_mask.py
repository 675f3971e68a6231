"""Blind set B29, check_padding_mask (chapter 1): the (B, T) mask of real tokens, as readers
write it."""

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
    T = _width(lengths, max_len)
    return torch.arange(T)[None, :] >= lengths[:, None]  # marks the padding


def mask_of_ints(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return (torch.arange(T)[None, :] < lengths[:, None]).int()  # 1 = real, 0 = pad


def mask_less_or_equal(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T)[None, :] <= lengths[:, None]


def mask_positions_from_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    positions = torch.arange(1, T + 1)  # positions 1..T
    return positions[None, :] < lengths[:, None]


def mask_transposed(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T)[:, None] < lengths[None, :]  # (T, B)


def mask_ignores_max_len(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max())
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_width_is_batch(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else len(lengths)
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_loop_without_row(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for length in lengths.tolist():
        mask[:, :length] = True
    return mask


def mask_ready_for_attention(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    mask = torch.arange(T)[None, :] < lengths[:, None]
    return mask[:, None, None, :]  # (B, 1, 1, T): broadcasts over heads and queries


def mask_shifts_lengths_in_place(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    lengths -= 1  # the index of the last real token
    return torch.arange(T)[None, :] <= lengths[:, None]


def mask_float(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.where(torch.arange(T)[None, :] < lengths[:, None], 1.0, 0.0)


# ---------------------------------------------------------------- correct variants


def mask_row_loop(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(max(lengths.tolist())) if max_len is None else max_len
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, length in enumerate(lengths.tolist()):
        mask[b, :length] = True
    return mask


def mask_expand(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = max_len or int(lengths.max())
    return torch.arange(T, device=lengths.device).expand(len(lengths), T) < lengths.unsqueeze(1)


def mask_from_one_hot(lengths: Tensor, max_len: int | None = None) -> Tensor:
    """A 1 at each row's end, cumulated: everything from the end on is padding."""
    T = _width(lengths, max_len)
    ends = F.one_hot(lengths.long(), num_classes=T + 1).cumsum(dim=-1)  # (B, T + 1)
    return ends[:, :T] == 0


def mask_greater_than(lengths: Tensor, max_len: int | None = None) -> Tensor:
    width = lengths.max().item() if max_len is None else max_len
    return lengths.unsqueeze(-1) > torch.arange(width).unsqueeze(0)


CASES = [
    BlindCase(
        CHECK,
        "true_on_padding",
        mask_true_on_padding,
        "mistake",
        "I made the mask True where the padding is, the way I'd mark what to hide.",
    ),
    BlindCase(
        CHECK,
        "int_mask",
        mask_of_ints,
        "mistake",
        "I returned the mask as integers (.int()), 1 for real tokens and 0 for padding.",
    ),
    BlindCase(
        CHECK,
        "less_or_equal",
        mask_less_or_equal,
        "mistake",
        "I compared positions <= lengths, so one padded position per row counts as real.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        mask_positions_from_one,
        "mistake",
        "I numbered the positions 1..T but kept the strict <, so each row loses its last token.",
    ),
    BlindCase(
        CHECK,
        "transposed",
        mask_transposed,
        "mistake",
        "I broadcast the positions down the rows and the lengths across, which gives (T, B).",
    ),
    BlindCase(
        CHECK,
        "ignores_max_len",
        mask_ignores_max_len,
        "mistake",
        "I always made the mask as wide as the longest row and never used max_len.",
    ),
    BlindCase(
        CHECK,
        "width_is_batch_size",
        mask_width_is_batch,
        "mistake",
        "Without max_len I took T = len(lengths), which is the batch size, not the longest row.",
    ),
    BlindCase(
        CHECK,
        "loop_without_row_index",
        mask_loop_without_row,
        "mistake",
        "In my loop I wrote mask[:, :length] = True, forgetting the row index, so every row "
        "ends up as long as the longest.",
    ),
    BlindCase(
        CHECK,
        "shaped_for_attention",
        mask_ready_for_attention,
        "mistake",
        "I returned the mask already shaped (B, 1, 1, T) for attention instead of (B, T).",
    ),
    BlindCase(
        CHECK,
        "lengths_decremented_in_place",
        mask_shifts_lengths_in_place,
        "mistake",
        "I turned the lengths into last indices with lengths -= 1, which changes the caller's "
        "tensor; a second call with the same lengths gets a mask one shorter.",
    ),
    BlindCase(
        CHECK,
        "float_mask",
        mask_float,
        "mistake",
        "I built the mask with torch.where(..., 1.0, 0.0), which is a float tensor.",
    ),
    BlindCase(
        CHECK,
        "row_loop",
        mask_row_loop,
        "correct",
        "A boolean zeros tensor filled row by row with mask[b, :length] = True.",
    ),
    BlindCase(
        CHECK,
        "expand",
        mask_expand,
        "correct",
        "arange(T).expand(B, T) < lengths.unsqueeze(1), on the lengths' device.",
    ),
    BlindCase(
        CHECK,
        "one_hot_cumsum",
        mask_from_one_hot,
        "correct",
        "A one-hot of each length cumulated along the row; the positions before it are real.",
    ),
    BlindCase(
        CHECK,
        "lengths_greater",
        mask_greater_than,
        "correct",
        "lengths.unsqueeze(-1) > arange(T), with the comparison written the other way round.",
    ),
]
