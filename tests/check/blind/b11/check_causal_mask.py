"""Blind set B11, check_causal_mask (chapter 12): the causal mask as readers write it."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_causal_mask"


# ---------------------------------------------------------------- mistakes


def cm_blocked_future(T: int) -> Tensor:
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # the future is masked


def cm_strict(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=-1)  # only the past


def cm_upper(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu()


def cm_float(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))


def cm_one_ahead(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(1)


def cm_additive_inf(T: int) -> Tensor:
    mask = torch.zeros(T, T)
    return mask.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))


def cm_long(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.long))


def cm_4d(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril()[None, None]  # (1, 1, T, T) for the heads


def cm_uint8(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T)).byte()


def cm_numpy(T: int) -> Tensor:
    return np.tril(np.ones((T, T), dtype=bool))


def cm_comparison_flipped(T: int) -> Tensor:
    idx = torch.arange(T)
    return idx[:, None] <= idx[None, :]  # query t sees keys s with t <= s


def cm_anti_diagonal(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril().flip(-1)  # flipped to read left to right


# ---------------------------------------------------------------- correct variants


def cm_arange(T: int) -> Tensor:
    i = torch.arange(T)
    return i.unsqueeze(1) >= i.unsqueeze(0)


def cm_not_triu(T: int, device: str | None = None) -> Tensor:
    return ~torch.ones(T, T, dtype=torch.bool, device=device).triu(1)


def cm_eq_one(T: int) -> Tensor:
    return torch.ones(T, T).tril() == 1


def cm_loop(T: int) -> Tensor:
    mask = torch.zeros((T, T), dtype=torch.bool)
    for t in range(T):
        mask[t, : t + 1] = True
    return mask


CASES = [
    BlindCase(
        CHECK,
        "true_on_future",
        cm_blocked_future,
        "mistake",
        "I used triu(diagonal=1), True on the future to block, as nn.Transformer does.",
    ),
    BlindCase(
        CHECK,
        "strictly_below_diagonal",
        cm_strict,
        "mistake",
        "I used tril(-1), so a position cannot see itself.",
    ),
    BlindCase(
        CHECK,
        "upper_triangle",
        cm_upper,
        "mistake",
        "I used triu() instead of tril(): the transposed mask.",
    ),
    BlindCase(
        CHECK,
        "float_mask",
        cm_float,
        "mistake",
        "I returned torch.tril(torch.ones(T, T)), ones and zeros in float32.",
    ),
    BlindCase(
        CHECK,
        "one_step_ahead",
        cm_one_ahead,
        "mistake",
        "I used tril(1), so each position also sees the next one.",
    ),
    BlindCase(
        CHECK,
        "additive_minus_inf",
        cm_additive_inf,
        "mistake",
        "I returned an additive float mask, 0 on the past and -inf on the future.",
    ),
    BlindCase(
        CHECK,
        "long_mask",
        cm_long,
        "mistake",
        "I built it from ones of dtype long.",
    ),
    BlindCase(
        CHECK,
        "four_dimensional",
        cm_4d,
        "mistake",
        "I returned it as (1, 1, T, T) so it broadcasts over batch and heads.",
    ),
    BlindCase(
        CHECK,
        "uint8_mask",
        cm_uint8,
        "mistake",
        "I converted it with .byte(), as older PyTorch masks were.",
    ),
    BlindCase(
        CHECK,
        "numpy_array",
        cm_numpy,
        "mistake",
        "I built it with np.tril and returned the numpy array.",
    ),
    BlindCase(
        CHECK,
        "comparison_flipped",
        cm_comparison_flipped,
        "mistake",
        "I compared row <= column, so each query sees itself and the future.",
    ),
    BlindCase(
        CHECK,
        "flipped_left_right",
        cm_anti_diagonal,
        "mistake",
        "I flipped the lower triangle left to right.",
    ),
    BlindCase(
        CHECK,
        "arange_comparison",
        cm_arange,
        "correct",
        "Row index >= column index from two aranges.",
    ),
    BlindCase(
        CHECK,
        "not_of_upper_triangle",
        cm_not_triu,
        "correct",
        "The negation of triu(1), with an extra device argument.",
    ),
    BlindCase(
        CHECK,
        "float_tril_equals_one",
        cm_eq_one,
        "correct",
        "A float tril compared with == 1, which gives bools.",
    ),
    BlindCase(
        CHECK,
        "python_loop",
        cm_loop,
        "correct",
        "A bool zeros tensor with the first t + 1 entries of row t set in a loop.",
    ),
]
