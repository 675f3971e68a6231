"""Blind cases for check_causal_mask (chapter 12), written from the chapter's text only."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from .. import BlindCase

CHECK = "check_causal_mask"


def future_is_true(T):
    return torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)


def diagonal_excluded(T):
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=-1)


def upper_triangle(T):
    return torch.ones(T, T, dtype=torch.bool).triu()


def float_ones(T):
    return torch.tril(torch.ones(T, T))


def one_step_ahead(T):
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=1)


def strict_comparison(T):
    i = torch.arange(T)
    return i[:, None] > i[None, :]


def shaped_for_heads(T):
    return torch.ones(T, T, dtype=torch.bool).tril().view(1, 1, T, T)


def additive_float_mask(T):
    return nn.Transformer.generate_square_subsequent_mask(T)


def numpy_array_returned(T):
    return np.tril(np.ones((T, T), dtype=bool))


def uint8_mask(T):
    return torch.tril(torch.ones(T, T, dtype=torch.uint8))


def arange_compare(T):
    t = torch.arange(T)
    return t.unsqueeze(1) >= t.unsqueeze(0)  # key s <= query t


def not_future(T, device=None):
    future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=device), diagonal=1)
    return future.logical_not()


def from_numpy(T):
    return torch.from_numpy(np.tril(np.ones((T, T), dtype=bool)))


CASES = [
    BlindCase(
        CHECK,
        "future_is_true",
        future_is_true,
        "mistake",
        "I marked the future with triu(diagonal=1), True where a query may not attend",
    ),
    BlindCase(
        CHECK,
        "diagonal_excluded",
        diagonal_excluded,
        "mistake",
        "I used tril(diagonal=-1), so a token cannot attend to itself",
    ),
    BlindCase(
        CHECK,
        "upper_triangle",
        upper_triangle,
        "mistake",
        "I used triu() instead of tril(): the mask transposed, each query sees the future",
    ),
    BlindCase(
        CHECK,
        "float_ones",
        float_ones,
        "mistake",
        "torch.tril(torch.ones(T, T)) without dtype=torch.bool: a float mask of 0 and 1",
    ),
    BlindCase(
        CHECK,
        "one_step_ahead",
        one_step_ahead,
        "mistake",
        "I used tril(diagonal=1), so each query also sees the next token",
    ),
    BlindCase(
        CHECK,
        "strict_comparison",
        strict_comparison,
        "mistake",
        "I compared query > key instead of >=, so the diagonal is False",
    ),
    BlindCase(
        CHECK,
        "shaped_for_heads",
        shaped_for_heads,
        "mistake",
        "I returned the mask already shaped (1, 1, T, T) for the batch and head axes",
    ),
    BlindCase(
        CHECK,
        "additive_float_mask",
        additive_float_mask,
        "mistake",
        "I used nn.Transformer.generate_square_subsequent_mask, a float mask of 0 and -inf",
    ),
    BlindCase(
        CHECK,
        "numpy_array_returned",
        numpy_array_returned,
        "mistake",
        "I built it with np.tril and returned the NumPy array, not a torch tensor",
    ),
    BlindCase(
        CHECK,
        "uint8_mask",
        uint8_mask,
        "mistake",
        "I built the mask with dtype=torch.uint8 instead of bool",
    ),
    BlindCase(
        CHECK,
        "arange_compare",
        arange_compare,
        "correct",
        "arange(T) as a column compared >= with arange(T) as a row",
    ),
    BlindCase(
        CHECK,
        "not_future",
        not_future,
        "correct",
        "the logical_not of triu(diagonal=1), with an extra device argument",
    ),
    BlindCase(
        CHECK,
        "from_numpy",
        from_numpy,
        "correct",
        "np.tril of a bool array of ones, turned into a tensor with torch.from_numpy",
    ),
]
