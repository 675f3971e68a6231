"""Blind cases for check_causal_mask (chapter 12), written from the chapter's text only."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_causal_mask"


# ---- mistakes -------------------------------------------------------------------------------


def future_is_true(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)


def cannot_see_itself(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=-1)


def transposed(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu()


def float_ones(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))


def sees_one_ahead(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=1)


def additive_minus_inf(T: int) -> Tensor:
    return torch.triu(torch.full((T, T), float("-inf")), diagonal=1)  # 0 = may attend


def integer_tril(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.long))


def strict_comparison(T: int) -> Tensor:
    i = torch.arange(T)
    return i[:, None] > i[None, :]


# ---- reader's slip ------------------------------------------------------------------------------


def device_required(T: int, device) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()


# ---- correct variants ---------------------------------------------------------------------------


def not_future(T: int) -> Tensor:
    return ~torch.ones(T, T, dtype=torch.bool).triu(1)


def index_comparison(T: int) -> Tensor:
    rows = torch.arange(T).unsqueeze(1)
    cols = torch.arange(T).unsqueeze(0)
    return cols <= rows


def python_loop(T: int, device=None) -> Tensor:
    mask = torch.zeros(T, T, dtype=torch.bool, device=device)
    for t in range(T):
        mask[t, : t + 1] = True
    return mask


CASES = [
    BlindCase(
        CHECK,
        "future_is_true",
        future_is_true,
        "mistake",
        "I marked the future with triu(1), True where a query may not attend",
    ),
    BlindCase(
        CHECK,
        "cannot_see_itself",
        cannot_see_itself,
        "mistake",
        "I used tril(-1), so a position cannot see itself",
    ),
    BlindCase(
        CHECK,
        "transposed",
        transposed,
        "mistake",
        "I used triu() instead of tril(), the transposed mask",
    ),
    BlindCase(
        CHECK,
        "float_ones",
        float_ones,
        "mistake",
        "I returned torch.tril(torch.ones(T, T)), a float mask",
    ),
    BlindCase(
        CHECK,
        "sees_one_ahead",
        sees_one_ahead,
        "mistake",
        "I used tril(1), so each position also sees the next one",
    ),
    BlindCase(
        CHECK,
        "additive_minus_inf",
        additive_minus_inf,
        "mistake",
        "I returned PyTorch's additive mask, 0 where allowed and -inf on the future",
    ),
    BlindCase(
        CHECK,
        "integer_tril",
        integer_tril,
        "mistake",
        "I built the lower triangle from long ones, so the mask is int64",
    ),
    BlindCase(
        CHECK,
        "strict_comparison",
        strict_comparison,
        "mistake",
        "I compared row > column, which leaves out the diagonal",
    ),
    BlindCase(
        CHECK,
        "device_required",
        device_required,
        "mistake",
        "I added a device parameter without a default, so the function needs two arguments",
    ),
    BlindCase(CHECK, "not_future", not_future, "correct", "I negated the strict upper triangle"),
    BlindCase(
        CHECK,
        "index_comparison",
        index_comparison,
        "correct",
        "I compared column indices with row indices, column <= row",
    ),
    BlindCase(
        CHECK,
        "python_loop",
        python_loop,
        "correct",
        "I filled each row up to and including t in a loop, with an optional device",
    ),
]
