"""Blind set B20, check_causal_mask (chapter 12): the causal mask as readers write it."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_causal_mask"


# ---------------------------------------------------------------- mistakes


def cm_triu(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu()


def cm_blocked_true(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)  # the future, as in PyTorch


def cm_strict_lower(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=-1)  # only the past


def cm_float(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))


def cm_additive(T: int) -> Tensor:
    return torch.triu(torch.full((T, T), float("-inf")), diagonal=1)  # add it to the scores


def cm_one_ahead(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=1)


def cm_arange_transposed(T: int) -> Tensor:
    i = torch.arange(T)
    return i[:, None] <= i[None, :]  # key j for query i when i <= j


def cm_arange_strict(T: int) -> Tensor:
    i = torch.arange(T)
    return i[None, :] < i[:, None]


def cm_four_dim(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril()[None, None]  # (1, 1, T, T)


def cm_uint8(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.uint8))


def cm_inverted_tril(T: int) -> Tensor:
    return ~torch.ones(T, T, dtype=torch.bool).tril()


def cm_size_plus_one(T: int) -> Tensor:
    return torch.ones(T + 1, T + 1, dtype=torch.bool).tril()  # with <bos>


# ---------------------------------------------------------------- correct variants


def cm_arange(T: int) -> Tensor:
    pos = torch.arange(T)
    return pos.unsqueeze(1) >= pos.unsqueeze(0)


def cm_not_future(T: int) -> Tensor:
    return ~torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)


def cm_numpy(T: int) -> Tensor:
    return torch.from_numpy(np.tril(np.ones((T, T), dtype=bool)))


def cm_loop(T: int) -> Tensor:
    mask = torch.zeros(T, T).bool()
    for t in range(T):
        mask[t, : t + 1] = True
    return mask


CASES = [
    BlindCase(CHECK, "triu", cm_triu, "mistake", "I used triu instead of tril."),
    BlindCase(
        CHECK,
        "future_is_true",
        cm_blocked_true,
        "mistake",
        "I marked the future (triu(1)) True, PyTorch's convention.",
    ),
    BlindCase(
        CHECK,
        "diagonal_excluded",
        cm_strict_lower,
        "mistake",
        "I used tril(-1), so a token cannot see itself.",
    ),
    BlindCase(CHECK, "float_ones", cm_float, "mistake", "torch.tril(torch.ones(T, T)), floats."),
    BlindCase(
        CHECK,
        "additive_minus_inf",
        cm_additive,
        "mistake",
        "I returned the additive mask: -inf above the diagonal, 0 elsewhere.",
    ),
    BlindCase(
        CHECK,
        "one_step_ahead",
        cm_one_ahead,
        "mistake",
        "I used tril(1), one key too far.",
    ),
    BlindCase(
        CHECK,
        "arange_transposed",
        cm_arange_transposed,
        "mistake",
        "With arange I compared i <= j.",
    ),
    BlindCase(
        CHECK,
        "arange_strict",
        cm_arange_strict,
        "mistake",
        "With arange I compared j < i, strictly.",
    ),
    BlindCase(
        CHECK,
        "four_dim",
        cm_four_dim,
        "mistake",
        "I returned it as (1, 1, T, T) for the heads.",
    ),
    BlindCase(CHECK, "uint8", cm_uint8, "mistake", "I built it from uint8 ones."),
    BlindCase(
        CHECK,
        "inverted_tril",
        cm_inverted_tril,
        "mistake",
        "I inverted tril with ~, thinking masked_fill wants the allowed keys as False.",
    ),
    BlindCase(
        CHECK,
        "one_larger",
        cm_size_plus_one,
        "mistake",
        "I made it (T + 1, T + 1) to leave room for <bos>.",
    ),
    BlindCase(CHECK, "arange_ge", cm_arange, "correct", "arange compared: query >= key."),
    BlindCase(
        CHECK,
        "not_future",
        cm_not_future,
        "correct",
        "The future (triu(1)) inverted with ~.",
    ),
    BlindCase(CHECK, "numpy_tril", cm_numpy, "correct", "np.tril of a bool array, from_numpy."),
    BlindCase(CHECK, "loop", cm_loop, "correct", "A loop that sets row t up to t."),
]
