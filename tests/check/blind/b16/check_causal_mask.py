"""Blind set B16, check_causal_mask (chapter 12): the (T, T) causal mask as readers write it."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_causal_mask"


# ---------------------------------------------------------------- mistakes


def causal_upper(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu()  # the notes' upper triangle


def causal_blocked_future(T: int) -> Tensor:
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # True = the future


def causal_strictly_below(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=-1)  # only the earlier words


def causal_one_ahead(T: int) -> Tensor:
    rows = torch.arange(T)[:, None]
    cols = torch.arange(T)[None, :]
    return cols <= rows + 1  # the word being predicted is next


def causal_float_ones(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))  # 1 = may attend


def causal_additive(T: int) -> Tensor:
    return torch.triu(torch.full((T, T), float("-inf")), diagonal=1)  # add it to the scores


def causal_uint8(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.uint8).tril()  # a byte mask, as in older code


def causal_with_batch_axes(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril()[None, None]  # (1, 1, T, T) for the heads


def causal_numpy(T: int) -> np.ndarray:
    return np.tril(np.ones((T, T), dtype=bool))


# ---------------------------------------------------------------- correct variants


def causal_arange_compare(T: int) -> Tensor:
    query = torch.arange(T).unsqueeze(1)  # (T, 1)
    key = torch.arange(T).unsqueeze(0)  # (1, T)
    return key <= query


def causal_not_future(T: int, device: torch.device | str | None = None) -> Tensor:
    future = torch.ones(T, T, dtype=torch.bool, device=device).triu(diagonal=1)
    return ~future


def causal_from_numpy(T: int) -> Tensor:
    return torch.from_numpy(np.tril(np.ones((T, T), dtype=np.bool_)))


def causal_python_lists(T: int) -> Tensor:
    rows = [[key <= query for key in range(T)] for query in range(T)]
    return torch.tensor(rows, dtype=torch.bool).reshape(T, T)


CASES = [
    BlindCase(
        CHECK,
        "upper_triangle",
        causal_upper,
        "mistake",
        "I kept the upper triangle with triu(), so each query sees itself and the future.",
    ),
    BlindCase(
        CHECK,
        "true_marks_future",
        causal_blocked_future,
        "mistake",
        "I marked the future with triu(diagonal=1), True = blocked, as PyTorch's "
        "generate_square_subsequent_mask does.",
    ),
    BlindCase(
        CHECK,
        "diagonal_excluded",
        causal_strictly_below,
        "mistake",
        "I used tril(diagonal=-1), so a query may not attend to its own position.",
    ),
    BlindCase(
        CHECK,
        "one_step_ahead",
        causal_one_ahead,
        "mistake",
        "I let each query see keys up to t + 1.",
    ),
    BlindCase(
        CHECK,
        "float_mask",
        causal_float_ones,
        "mistake",
        "I returned torch.tril(torch.ones(T, T)), a float mask of 1s and 0s.",
    ),
    BlindCase(
        CHECK,
        "additive_minus_inf",
        causal_additive,
        "mistake",
        "I returned the notes' additive mask, -inf above the diagonal and 0 elsewhere.",
    ),
    BlindCase(
        CHECK,
        "uint8_mask",
        causal_uint8,
        "mistake",
        "I built the mask as uint8, the byte masks of older PyTorch code.",
    ),
    BlindCase(
        CHECK,
        "batch_and_head_axes",
        causal_with_batch_axes,
        "mistake",
        "I returned (1, 1, T, T) so it broadcasts over batch and heads.",
    ),
    BlindCase(
        CHECK,
        "numpy_array",
        causal_numpy,
        "mistake",
        "I returned np.tril(np.ones((T, T), dtype=bool)), a NumPy array, not a tensor.",
    ),
    BlindCase(
        CHECK,
        "arange_comparison",
        causal_arange_compare,
        "correct",
        "Key positions compared with query positions, key <= query, by broadcasting.",
    ),
    BlindCase(
        CHECK,
        "negated_future_with_device",
        causal_not_future,
        "correct",
        "The negation of triu(diagonal=1); an extra device argument with a default.",
    ),
    BlindCase(
        CHECK,
        "from_numpy",
        causal_from_numpy,
        "correct",
        "np.tril on booleans, converted with torch.from_numpy.",
    ),
    BlindCase(
        CHECK,
        "python_lists",
        causal_python_lists,
        "correct",
        "A nested list comprehension of key <= query, then torch.tensor(..., dtype=bool).",
    ),
]
