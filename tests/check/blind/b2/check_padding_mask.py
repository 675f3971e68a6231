"""Blind cases for check_padding_mask (chapter 1), written from the chapter's text only."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_padding_mask"


def _width(lengths: Tensor, max_len: int | None) -> int:
    return int(lengths.max()) if max_len is None else max_len


# ---- mistakes -------------------------------------------------------------------------------


def inverted(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = _width(lengths, max_len)
    return torch.arange(T)[None, :] >= lengths[:, None]  # True on the padding


def integer_mask(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = _width(lengths, max_len)
    return (torch.arange(T)[None, :] < lengths[:, None]).long()


def one_too_many(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = _width(lengths, max_len)
    return torch.arange(T)[None, :] <= lengths[:, None]


def transposed(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = _width(lengths, max_len)
    return torch.arange(T)[:, None] < lengths[None, :]  # (T, B)


def max_len_ignored(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max())
    return torch.arange(T)[None, :] < lengths[:, None]


def width_from_batch_size(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = len(lengths) if max_len is None else max_len  # I mixed up B and T
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths.tolist()):
        mask[b, : min(n, T)] = True
    return mask


def ones_then_zeros_float(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = _width(lengths, max_len)
    mask = torch.zeros(len(lengths), T)
    for b, n in enumerate(lengths.tolist()):
        mask[b, :n] = 1.0
    return mask


# ---- reader's slip ------------------------------------------------------------------------------


def max_len_required(lengths: Tensor, max_len: int) -> Tensor:
    lengths = torch.as_tensor(lengths)
    return torch.arange(max_len)[None, :] < lengths[:, None]


# ---- correct variants ---------------------------------------------------------------------------


def row_loop(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = max(lengths.tolist()) if max_len is None else max_len
    rows = [[t < n for t in range(T)] for n in lengths.tolist()]
    return torch.tensor(rows, dtype=torch.bool).reshape(len(rows), T)


def expand_and_compare(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    B = lengths.shape[0]
    T = _width(lengths, max_len)
    positions = torch.arange(T).unsqueeze(0).expand(B, T)
    return positions.lt(lengths.unsqueeze(1))


def cumulative_count(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = _width(lengths, max_len)
    counted = torch.ones(len(lengths), T, dtype=torch.long).cumsum(dim=1)  # 1, 2, ..., T
    return counted <= lengths.unsqueeze(-1)


CASES = [
    BlindCase(
        CHECK,
        "inverted",
        inverted,
        "mistake",
        "I made the mask True on the padding and False on the real tokens",
    ),
    BlindCase(
        CHECK,
        "integer_mask",
        integer_mask,
        "mistake",
        "I turned the comparison into 0/1 integers with .long()",
    ),
    BlindCase(
        CHECK,
        "one_too_many",
        one_too_many,
        "mistake",
        "I compared positions with <= lengths, so each row has one real position too many",
    ),
    BlindCase(
        CHECK,
        "transposed",
        transposed,
        "mistake",
        "I put the positions on the rows and the sentences on the columns, giving (T, B)",
    ),
    BlindCase(
        CHECK,
        "max_len_ignored",
        max_len_ignored,
        "mistake",
        "I always made the mask as wide as the longest length and never used max_len",
    ),
    BlindCase(
        CHECK,
        "width_from_batch_size",
        width_from_batch_size,
        "mistake",
        "without max_len I used len(lengths), the batch size, as the width",
    ),
    BlindCase(
        CHECK,
        "ones_then_zeros_float",
        ones_then_zeros_float,
        "mistake",
        "I filled a torch.zeros mask with 1.0 up to each length, so it is float instead of bool",
    ),
    BlindCase(
        CHECK,
        "max_len_required",
        max_len_required,
        "mistake",
        "I made max_len a required argument without the default None",
    ),
    BlindCase(
        CHECK,
        "row_loop",
        row_loop,
        "correct",
        "I built each row with a Python comprehension and turned the lists into a bool tensor",
    ),
    BlindCase(
        CHECK,
        "expand_and_compare",
        expand_and_compare,
        "correct",
        "I expanded the positions to (B, T) and compared them with lengths.unsqueeze(1) using .lt",
    ),
    BlindCase(
        CHECK,
        "cumulative_count",
        cumulative_count,
        "correct",
        "I counted 1..T with cumsum of ones and kept the counts <= each length",
    ),
]
