"""Blind cases for check_padding_mask (chapter 1)."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_padding_mask"


def mask_inverted(lengths, max_len=None):
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] >= lengths[:, None]  # True on padding


def mask_long(lengths, max_len=None):
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return (torch.arange(T)[None, :] < lengths[:, None]).long()


def mask_off_by_one(lengths, max_len=None):
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] <= lengths[:, None]  # <= also marks the first pad


def mask_transposed(lengths, max_len=None):
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[:, None] < lengths[None, :]  # (T, B)


def mask_ignores_max_len(lengths, max_len=None):
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max())  # forgot to use max_len
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_arange_from_one(lengths, max_len=None):
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(1, T + 1)[None, :] < lengths[:, None]  # positions 1..T


def mask_max_len_or(lengths, max_len=None):
    lengths = torch.as_tensor(lengths)
    T = max_len or len(lengths)  # the batch size instead of the longest length
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_positional_only(lengths):
    lengths = torch.as_tensor(lengths)
    return torch.arange(int(lengths.max()))[None, :] < lengths[:, None]


def mask_loop(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = [int(n) for n in lengths]
    T = max(lengths) if max_len is None else max_len
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths):
        mask[b, :n] = True
    return mask


def mask_tril_rows(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths, dtype=torch.long)
    T = max_len if max_len is not None else int(lengths.max().item())
    # row n of a lower-triangular (T+1, T) table has its first n entries True
    table = torch.ones(T + 1, T, dtype=torch.bool).tril(diagonal=-1)
    return table[lengths]


def mask_not_ge(lengths: Tensor, max_len: int | None = None, device=None) -> Tensor:
    lengths = torch.as_tensor(lengths, device=device)
    T = int(lengths.max()) if max_len is None else int(max_len)
    positions = torch.arange(T, device=lengths.device).expand(len(lengths), T)
    return ~(positions >= lengths.unsqueeze(1))


CASES = [
    BlindCase(
        CHECK,
        "true_on_padding",
        mask_inverted,
        "mistake",
        "marks the padding with True and the real tokens with False (the other polarity)",
    ),
    BlindCase(
        CHECK,
        "long_instead_of_bool",
        mask_long,
        "mistake",
        "returns the mask as 0/1 longs instead of bools",
    ),
    BlindCase(
        CHECK,
        "less_or_equal",
        mask_off_by_one,
        "mistake",
        "uses <= instead of <, so the first padding position is marked real too",
    ),
    BlindCase(
        CHECK,
        "transposed",
        mask_transposed,
        "mistake",
        "broadcasts the other way round and returns a (T, B) mask",
    ),
    BlindCase(
        CHECK,
        "max_len_ignored",
        mask_ignores_max_len,
        "mistake",
        "always makes the mask as wide as the longest length, ignoring max_len",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        mask_arange_from_one,
        "mistake",
        "numbers the positions 1..T instead of 0..T-1, so each row has one True too few",
    ),
    BlindCase(
        CHECK,
        "width_is_batch_size",
        mask_max_len_or,
        "mistake",
        "takes the default width as len(lengths) (the batch size) instead of max(lengths)",
    ),
    BlindCase(
        CHECK,
        "slip_no_max_len_argument",
        mask_positional_only,
        "mistake",
        "writes the function without the max_len argument at all",
    ),
    BlindCase(
        CHECK,
        "python_loop",
        mask_loop,
        "correct",
        "fills a False bool tensor row by row with a Python loop",
    ),
    BlindCase(
        CHECK,
        "indexed_triangular_table",
        mask_tril_rows,
        "correct",
        "indexes the rows of a strictly lower-triangular bool table by the lengths",
    ),
    BlindCase(
        CHECK,
        "negated_ge_with_device_arg",
        mask_not_ge,
        "correct",
        "negates positions >= lengths, with an extra optional device argument",
    ),
]
