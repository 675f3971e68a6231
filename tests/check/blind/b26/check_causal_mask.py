"""Blind set B26, check_causal_mask (chapter 12): the (T, T) causal mask as readers write it."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_causal_mask"

_CACHE = torch.ones(64, 64, dtype=torch.bool).tril()  # built once, sliced per call


# ---------------------------------------------------------------- mistakes


def causal_minus_inf(T: int) -> Tensor:
    mask = torch.zeros(T, T)
    return mask.masked_fill(torch.ones(T, T).triu(1).bool(), float("-inf"))  # the notes' matrix


def causal_pytorch_helper_bool(T: int) -> Tensor:
    return nn.Transformer.generate_square_subsequent_mask(T).bool()  # PyTorch builds it


def causal_loop_strict(T: int) -> Tensor:
    mask = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        mask[t, :t] = True  # the keys before t
    return mask


def causal_with_batch_and_heads(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril()[None, None]  # (1, 1, T, T)


def causal_cached(T: int) -> Tensor:
    return _CACHE[:T, :T]


def causal_numpy(T: int) -> Tensor:
    return np.tril(np.ones((T, T), dtype=bool))


def causal_one_minus(T: int) -> Tensor:
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    return 1 - future  # everything that is not the future


def causal_rows_are_keys(T: int) -> Tensor:
    i = torch.arange(T)
    return i[:, None] <= i[None, :]


def causal_eye_cumsum_columns(T: int) -> Tensor:
    return torch.eye(T).cumsum(dim=1).bool()


def causal_sees_next(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=1)


def causal_float_ones(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))  # 1 = may attend, 0 = not


# ---------------------------------------------------------------- correct variants


def causal_from_pytorch_helper(T: int) -> Tensor:
    return nn.Transformer.generate_square_subsequent_mask(T) == 0  # 0 where allowed


def causal_eye_cumsum_rows(T: int) -> Tensor:
    return torch.eye(T).cumsum(dim=0).bool()  # row t: ones at columns 0..t


def causal_not_future(T: int, device: torch.device | str | None = None) -> Tensor:
    future = torch.ones(T, T, dtype=torch.bool, device=device).triu(diagonal=1)
    return ~future


def causal_arange(T: int) -> Tensor:
    query = torch.arange(T).unsqueeze(1)
    key = torch.arange(T).unsqueeze(0)
    return key <= query


CASES = [
    BlindCase(
        CHECK,
        "float_minus_inf",
        causal_minus_inf,
        "mistake",
        "I built the notes' matrix: 0 on and below the diagonal, -inf above, as floats.",
    ),
    BlindCase(
        CHECK,
        "pytorch_helper_as_bool",
        causal_pytorch_helper_bool,
        "mistake",
        "I called nn.Transformer.generate_square_subsequent_mask(T) and turned it to bool, so "
        "True marks the -inf, the future.",
    ),
    BlindCase(
        CHECK,
        "loop_keys_before_t",
        causal_loop_strict,
        "mistake",
        "In a loop I set mask[t, :t] = True, so a query cannot see its own position.",
    ),
    BlindCase(
        CHECK,
        "batch_and_head_axes",
        causal_with_batch_and_heads,
        "mistake",
        "I return it as (1, 1, T, T) so that it matches the (B, H, T, T) scores.",
    ),
    BlindCase(
        CHECK,
        "cached_64",
        causal_cached,
        "mistake",
        "I build a 64 x 64 mask once and slice it, which is too small for T > 64.",
    ),
    BlindCase(
        CHECK,
        "numpy_array",
        causal_numpy,
        "mistake",
        "I used np.tril, so I return a NumPy array instead of a tensor.",
    ),
    BlindCase(
        CHECK,
        "one_minus_bool",
        causal_one_minus,
        "mistake",
        "I wrote 1 - future on a bool tensor to flip it.",
    ),
    BlindCase(
        CHECK,
        "rows_are_keys",
        causal_rows_are_keys,
        "mistake",
        "I compared arange(T)[:, None] <= arange(T)[None, :], with the keys on the rows.",
    ),
    BlindCase(
        CHECK,
        "eye_cumsum_columns",
        causal_eye_cumsum_columns,
        "mistake",
        "I took the cumulative sum of the identity along dim=1, which fills to the right.",
    ),
    BlindCase(
        CHECK,
        "sees_next_token",
        causal_sees_next,
        "mistake",
        "I used tril(..., diagonal=1), so each query also sees the next token.",
    ),
    BlindCase(
        CHECK,
        "float_ones",
        causal_float_ones,
        "mistake",
        "I return torch.tril(torch.ones(T, T)), floats 1 and 0, not bools.",
    ),
    BlindCase(
        CHECK,
        "pytorch_helper_equals_zero",
        causal_from_pytorch_helper,
        "correct",
        "PyTorch's generate_square_subsequent_mask(T) == 0.",
    ),
    BlindCase(
        CHECK,
        "eye_cumsum_rows",
        causal_eye_cumsum_rows,
        "correct",
        "The cumulative sum of the identity down the rows, turned to bool.",
    ),
    BlindCase(
        CHECK,
        "not_future_with_device",
        causal_not_future,
        "correct",
        "~triu(diagonal=1) of a bool ones matrix; an extra device argument.",
    ),
    BlindCase(
        CHECK,
        "arange_comparison",
        causal_arange,
        "correct",
        "arange(T) as a column of queries and a row of keys; key <= query.",
    ),
]
