"""Blind set B15, check_padding_mask (chapter 1): the mask of the real tokens of a padded batch."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_padding_mask"


def _width(lengths: Tensor, max_len: int | None) -> int:
    return int(lengths.max()) if max_len is None else max_len


# ---------------------------------------------------------------- mistakes


def mask_padding_true(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = _width(lengths, max_len)
    return torch.arange(T)[None, :] >= lengths[:, None]  # True marks the padding


def mask_long(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = _width(lengths, max_len)
    return (torch.arange(T)[None, :] < lengths[:, None]).long()


def mask_float(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = _width(lengths, max_len)
    return (torch.arange(T)[None, :] < lengths[:, None]).float()  # to multiply losses by


def mask_less_equal(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = _width(lengths, max_len)
    return torch.arange(T)[None, :] <= lengths[:, None]


def mask_positions_from_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = _width(lengths, max_len)
    return torch.arange(1, T + 1)[None, :] < lengths[:, None]  # positions 1..T


def mask_transposed(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = _width(lengths, max_len)
    return torch.arange(T)[:, None] < lengths[None, :]  # (T, B)


def mask_ignores_max_len(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max())
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_width_batch(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = max_len or len(lengths)  # the number of sentences, by mistake
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_for_attention(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = _width(lengths, max_len)
    return (torch.arange(T)[None, :] < lengths[:, None])[:, None, :]  # (B, 1, T) for attention


# ---------------------------------------------------------------- correct variants


def mask_loop(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = [int(n) for n in lengths]
    T = max(lengths) if max_len is None else max_len
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths):
        mask[b, :n] = True
    return mask


def mask_tril_rows(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = _width(lengths, max_len)
    table = torch.ones(T + 1, T, dtype=torch.bool).tril(-1)  # row n: n True then False
    return table[lengths]


def mask_expand(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = max_len if max_len is not None else lengths.max().item()
    positions = torch.arange(T, device=lengths.device).expand(len(lengths), T)
    return positions.lt(lengths.unsqueeze(1))


CASES = [
    BlindCase(
        CHECK,
        "padding_is_true",
        mask_padding_true,
        "mistake",
        "My mask is True on the padding, like key_padding_mask.",
    ),
    BlindCase(
        CHECK, "long_mask", mask_long, "mistake", "I return 0/1 long integers instead of booleans."
    ),
    BlindCase(
        CHECK,
        "float_mask",
        mask_float,
        "mistake",
        "I return a float 0/1 mask, to multiply the loss with.",
    ),
    BlindCase(
        CHECK,
        "less_equal",
        mask_less_equal,
        "mistake",
        "I compared positions <= lengths, one True too many per row.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        mask_positions_from_one,
        "mistake",
        "I counted positions from 1, so each row has one True too few.",
    ),
    BlindCase(
        CHECK,
        "transposed",
        mask_transposed,
        "mistake",
        "I broadcast the other way round and got (T, B).",
    ),
    BlindCase(
        CHECK,
        "ignores_max_len",
        mask_ignores_max_len,
        "mistake",
        "I always use max(lengths) as the width, ignoring max_len.",
    ),
    BlindCase(
        CHECK,
        "width_is_batch_size",
        mask_width_batch,
        "mistake",
        "Without max_len I used len(lengths) as the width.",
    ),
    BlindCase(
        CHECK,
        "attention_shape",
        mask_for_attention,
        "mistake",
        "I returned it as (B, 1, T), ready for attention, instead of (B, T).",
    ),
    BlindCase(
        CHECK,
        "python_loop",
        mask_loop,
        "correct",
        "A bool zeros tensor filled row by row in a loop.",
    ),
    BlindCase(
        CHECK,
        "rows_of_a_triangle",
        mask_tril_rows,
        "correct",
        "Row n of a strictly-lower-triangular table is n Trues; index it by the lengths.",
    ),
    BlindCase(
        CHECK,
        "expand_lt",
        mask_expand,
        "correct",
        "arange expanded to (B, T) and compared with .lt.",
    ),
]
