"""Blind set B13, check_padding_mask (chapter 1): the mask of real tokens as readers write it."""

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
    return torch.arange(T)[None, :] >= lengths[:, None]  # True where padded (PyTorch's way)


def mask_long(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return (torch.arange(T)[None, :] < lengths[:, None]).long()  # 1 = real, 0 = pad


def mask_float_weights(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return (torch.arange(T).unsqueeze(0) < lengths.unsqueeze(1)).float()  # to multiply a loss


def mask_less_equal(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T)[None, :] <= lengths[:, None]


def mask_positions_from_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    positions = torch.arange(1, T + 1)  # positions 1..T, as one counts tokens
    return positions[None, :] < lengths[:, None]


def mask_transposed(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T)[:, None] < lengths[None, :]  # (T, B)


def mask_ignores_max_len(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max())  # the longest row is the width
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_width_is_batch(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len or len(lengths)  # one column per ... sequence
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_for_attention(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    mask = torch.arange(T)[None, :] < lengths[:, None]
    return mask.unsqueeze(1)  # (B, 1, T), ready to broadcast over the queries


# ---------------------------------------------------------------- correct variants


def mask_loop(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths.tolist()):
        mask[b, :n] = True
    return mask


def mask_expand(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths, dtype=torch.long)
    T = max_len if max_len is not None else lengths.max().item()
    return torch.arange(T).expand(len(lengths), T) < lengths.unsqueeze(1)


def mask_cumsum(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    counts = torch.ones(len(lengths), T, dtype=torch.long).cumsum(dim=1)  # 1..T per row
    return counts <= lengths.view(-1, 1)


def mask_triangular_rows(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    table = torch.ones(T + 1, T, dtype=torch.bool).tril(-1)  # row n: the first n positions
    return table[lengths]


CASES = [
    BlindCase(
        CHECK,
        "true_on_padding",
        mask_true_on_padding,
        "mistake",
        "I made the mask True on the padding, like key_padding_mask in PyTorch.",
    ),
    BlindCase(
        CHECK,
        "long_dtype",
        mask_long,
        "mistake",
        "I returned the comparison as .long(), 1 for real and 0 for padding.",
    ),
    BlindCase(
        CHECK,
        "float_weights",
        mask_float_weights,
        "mistake",
        "I returned a float 0/1 mask so I can multiply it into a loss.",
    ),
    BlindCase(
        CHECK,
        "less_equal",
        mask_less_equal,
        "mistake",
        "I compared positions <= lengths, so one padding position too many is True.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        mask_positions_from_one,
        "mistake",
        "I numbered the positions from 1 to T, so the last real token is marked False.",
    ),
    BlindCase(
        CHECK,
        "transposed",
        mask_transposed,
        "mistake",
        "I put the positions on the rows: the mask is (T, B).",
    ),
    BlindCase(
        CHECK,
        "ignores_max_len",
        mask_ignores_max_len,
        "mistake",
        "I always made it as wide as the longest length and ignored max_len.",
    ),
    BlindCase(
        CHECK,
        "width_is_batch",
        mask_width_is_batch,
        "mistake",
        "I took len(lengths) as the width when max_len is None, the batch size not the "
        "longest length.",
    ),
    BlindCase(
        CHECK,
        "unsqueezed_for_attention",
        mask_for_attention,
        "mistake",
        "I returned it as (B, 1, T) so it broadcasts against attention scores.",
    ),
    BlindCase(
        CHECK,
        "python_loop",
        mask_loop,
        "correct",
        "A zero bool tensor with each row's first n entries set True in a loop.",
    ),
    BlindCase(
        CHECK,
        "expand",
        mask_expand,
        "correct",
        "arange(T).expand(B, T) compared with lengths.unsqueeze(1).",
    ),
    BlindCase(
        CHECK,
        "cumsum_counts",
        mask_cumsum,
        "correct",
        "Counts 1..T from a cumsum of ones, compared <= lengths.",
    ),
    BlindCase(
        CHECK,
        "triangular_table",
        mask_triangular_rows,
        "correct",
        "Rows of a (T + 1, T) lower-triangular table indexed by the lengths.",
    ),
]
