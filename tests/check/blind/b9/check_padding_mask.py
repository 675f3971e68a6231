"""Blind set B9, check_padding_mask (chapter 1): the boolean mask of the real tokens."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_padding_mask"

# ---------------------------------------------------------------- mistakes


def mask_true_on_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else int(lengths.max())
    return torch.arange(T)[None, :] >= lengths[:, None]  # True = padding, as in nn.Transformer


def mask_as_float(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else int(lengths.max())
    return (torch.arange(T)[None, :] < lengths[:, None]).float()  # to multiply the loss by it


def mask_less_equal(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else int(lengths.max())
    return torch.arange(T)[None, :] <= lengths[:, None]


def mask_positions_from_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else int(lengths.max())
    positions = torch.arange(1, T + 1)  # position 1 is the first token
    return positions[None, :] < lengths[:, None]


def mask_transposed(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else int(lengths.max())
    return torch.arange(T)[:, None] < lengths[None, :]  # (T, B)


def mask_ignores_max_len(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max())  # the longest row is always wide enough
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_no_unsqueeze(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else int(lengths.max())
    positions = torch.arange(T).expand(len(lengths), T)
    return positions < lengths  # compares along the last axis, not per row


def mask_rows_of_tril(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else int(lengths.max())
    table = torch.ones(T, T, dtype=torch.bool).tril()  # row l-1 is True at 0..l-1
    return table[lengths - 1]  # an empty sequence picks row -1, the last one


def mask_with_attention_axis(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else int(lengths.max())
    return (torch.arange(T)[None, :] < lengths[:, None]).unsqueeze(1)  # (B, 1, T) for attention


def mask_max_len_or(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max(max_len or 0, len(lengths))  # confused the width with the batch size
    return torch.arange(T)[None, :] < lengths[:, None]


# ---------------------------------------------------------------- correct variants


def mask_expand(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T).expand(len(lengths), T) < lengths.unsqueeze(1)


def mask_loop(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else int(max(lengths))
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths.tolist()):
        mask[b, :n] = True
    return mask


def mask_negated_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else lengths.max().item()
    is_pad = torch.arange(T, device=lengths.device).unsqueeze(0) >= lengths.unsqueeze(-1)
    return ~is_pad


def mask_with_ge(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else int(lengths.max())
    return lengths.view(-1, 1) > torch.arange(T).view(1, -1)


CASES = [
    BlindCase(
        CHECK,
        "true_on_padding",
        mask_true_on_padding,
        "mistake",
        "I made the mask True on the padding (as nn.Transformer's key_padding_mask) "
        "instead of on the real tokens.",
    ),
    BlindCase(
        CHECK,
        "float_mask",
        mask_as_float,
        "mistake",
        "I returned the mask as float 0/1 so I can multiply a loss by it, not as bools.",
    ),
    BlindCase(
        CHECK,
        "less_or_equal",
        mask_less_equal,
        "mistake",
        "I compared positions <= lengths, so every row has one True too many.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        mask_positions_from_one,
        "mistake",
        "I numbered the positions from 1 and kept '<', so the last real token is marked "
        "as padding.",
    ),
    BlindCase(
        CHECK,
        "transposed_T_by_B",
        mask_transposed,
        "mistake",
        "I put the positions on the rows and the batch on the columns: the mask is (T, B).",
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
        "compare_without_unsqueeze",
        mask_no_unsqueeze,
        "mistake",
        "I compared the (B, T) positions with lengths (B,) without lengths[:, None], so "
        "the lengths line up with the columns instead of the rows.",
    ),
    BlindCase(
        CHECK,
        "rows_of_lower_triangle",
        mask_rows_of_tril,
        "mistake",
        "I picked row lengths-1 of a lower-triangular table; an empty sequence (length 0) "
        "picks row -1 and gets an all-True row.",
    ),
    BlindCase(
        CHECK,
        "extra_attention_axis",
        mask_with_attention_axis,
        "mistake",
        "I returned the mask as (B, 1, T) so it is ready for attention, not (B, T).",
    ),
    BlindCase(
        CHECK,
        "width_from_batch_size",
        mask_max_len_or,
        "mistake",
        "I took the width as max(max_len, len(lengths)): the batch size instead of the "
        "longest length when max_len is None.",
    ),
    BlindCase(
        CHECK,
        "arange_expand",
        mask_expand,
        "correct",
        "I expanded arange(T) to (B, T) and compared it with lengths.unsqueeze(1).",
    ),
    BlindCase(
        CHECK,
        "python_loop",
        mask_loop,
        "correct",
        "I filled a False (B, T) tensor row by row with mask[b, :n] = True.",
    ),
    BlindCase(
        CHECK,
        "negated_padding",
        mask_negated_padding,
        "correct",
        "I built the padding (positions >= length) and negated it with ~.",
    ),
    BlindCase(
        CHECK,
        "lengths_greater_than_positions",
        mask_with_ge,
        "correct",
        "I wrote lengths.view(-1, 1) > arange(T).view(1, -1), the comparison the other way round.",
    ),
]
