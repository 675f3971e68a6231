"""Blind set B8, check_causal_mask (chapter 12): the (T, T) boolean causal mask."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_causal_mask"


# ---------------------------------------------------------------- mistakes


def true_above_diagonal(T: int) -> Tensor:
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # the "blocked" mask


def strictly_below_diagonal(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)


def upper_triangle(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu()  # keys 0..t in column t


def float_ones_tril(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))


def additive_minus_inf(T: int) -> Tensor:
    return torch.triu(torch.full((T, T), float("-inf")), diagonal=1)  # like nn.Transformer


def long_mask(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.long))


def one_step_ahead(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=1)


def arange_greater_than(T: int) -> Tensor:
    i = torch.arange(T)
    return i[:, None] > i[None, :]  # strict: the query cannot see itself


def with_batch_axis(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril().unsqueeze(0)  # (1, T, T)


def numpy_tril(T: int) -> np.ndarray:
    return np.tril(np.ones((T, T), dtype=bool))


def uint8_mask(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.uint8))


# ---------------------------------------------------------------- correct variants


def arange_less_equal(T: int) -> Tensor:
    i = torch.arange(T)
    return i[None, :] <= i[:, None]  # key <= query


def not_of_strict_upper(T: int, device=None) -> Tensor:
    return ~torch.ones(T, T, dtype=torch.bool, device=device).triu(diagonal=1)


def loop_rows(T: int) -> Tensor:
    mask = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        mask[t, : t + 1] = True
    return mask


def float_then_bool(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T), diagonal=0) == 1


CASES = [
    BlindCase(
        CHECK,
        "true_above_diagonal",
        true_above_diagonal,
        "mistake",
        "I returned triu(ones, diagonal=1), True where the future is (True = blocked)",
    ),
    BlindCase(
        CHECK,
        "strictly_below_diagonal",
        strictly_below_diagonal,
        "mistake",
        "I used tril(diagonal=-1), so a query cannot attend to itself",
    ),
    BlindCase(
        CHECK,
        "upper_triangle",
        upper_triangle,
        "mistake",
        "I used triu() instead of tril(), the transposed mask",
    ),
    BlindCase(
        CHECK,
        "float_ones_tril",
        float_ones_tril,
        "mistake",
        "I returned torch.tril(torch.ones(T, T)), a float mask, not bool",
    ),
    BlindCase(
        CHECK,
        "additive_minus_inf",
        additive_minus_inf,
        "mistake",
        "I returned an additive float mask with -inf above the diagonal and 0 elsewhere, "
        "like nn.Transformer.generate_square_subsequent_mask",
    ),
    BlindCase(
        CHECK,
        "long_mask",
        long_mask,
        "mistake",
        "I built the ones with dtype=torch.long, so the mask holds integers",
    ),
    BlindCase(
        CHECK,
        "one_step_ahead",
        one_step_ahead,
        "mistake",
        "I used tril(diagonal=1), which also lets each query see the next key",
    ),
    BlindCase(
        CHECK,
        "arange_greater_than",
        arange_greater_than,
        "mistake",
        "I compared query > key with arange, strict, so the diagonal is False",
    ),
    BlindCase(
        CHECK,
        "with_batch_axis",
        with_batch_axis,
        "mistake",
        "I returned it with a batch axis, (1, T, T), to broadcast over the batch",
    ),
    BlindCase(
        CHECK,
        "numpy_tril",
        numpy_tril,
        "mistake",
        "I built it with np.tril and returned the numpy array",
    ),
    BlindCase(
        CHECK,
        "uint8_mask",
        uint8_mask,
        "mistake",
        "I built it as a uint8 mask as older PyTorch code does",
    ),
    BlindCase(
        CHECK, "arange_less_equal", arange_less_equal, "correct", "arange comparison key <= query"
    ),
    BlindCase(
        CHECK,
        "not_of_strict_upper",
        not_of_strict_upper,
        "correct",
        "negation of the strict upper triangle; optional device argument",
    ),
    BlindCase(
        CHECK, "loop_rows", loop_rows, "correct", "a loop setting row t to True up to column t"
    ),
    BlindCase(
        CHECK,
        "float_then_bool",
        float_then_bool,
        "correct",
        "float tril of ones compared == 1, which gives a bool mask",
    ),
]
