"""Blind set B18, check_causal_mask (chapter 12): the (T, T) causal mask as readers write it."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_causal_mask"


# ---------------------------------------------------------------- mistakes


def cm_true_on_future(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)  # the future is masked


def cm_strictly_below(T: int) -> Tensor:
    mask = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        mask[t, :t] = True  # the keys before t
    return mask


def cm_one_step_ahead(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=1)


def cm_upper_triangle(T: int) -> Tensor:
    i = torch.arange(T)
    return i[:, None] <= i[None, :]  # row index <= column index


def cm_float_ones(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))  # 1 = may attend, 0 = masked


def cm_additive_float(T: int) -> Tensor:
    mask = torch.full((T, T), float("-inf")).triu(diagonal=1)  # 0 where allowed, -inf above
    return mask


def cm_batched_shape(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril()[None, None]  # (1, 1, T, T) for (B, H, T, T)


def cm_numpy(T: int) -> np.ndarray:
    return np.tril(np.ones((T, T), dtype=bool))


def cm_uint8(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.uint8))


def cm_anti_diagonal(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril().flip(-1)  # keys counted from the end


# ---------------------------------------------------------------- correct variants


def cm_arange_compare(T: int) -> Tensor:
    """Key index <= query index by broadcasting."""
    q = torch.arange(T).unsqueeze(1)  # (T, 1)
    k = torch.arange(T).unsqueeze(0)  # (1, T)
    return k <= q


def cm_not_triu(T: int, device: torch.device | str | None = None) -> Tensor:
    """The complement of the strict upper triangle; an optional device argument."""
    return ~torch.ones(T, T, dtype=torch.bool, device=device).triu(1)


def cm_float_then_bool(T: int) -> Tensor:
    """A float lower triangle turned into bools."""
    return torch.ones(T, T).tril().bool()


CASES = [
    BlindCase(
        CHECK,
        "true_on_future",
        cm_true_on_future,
        "mistake",
        "I marked the future with triu(1), True = blocked, as nn.Transformer does.",
    ),
    BlindCase(
        CHECK,
        "strictly_below_diagonal",
        cm_strictly_below,
        "mistake",
        "My loop set mask[t, :t], so a query cannot attend to itself.",
    ),
    BlindCase(
        CHECK,
        "one_step_ahead",
        cm_one_step_ahead,
        "mistake",
        "I used tril(diagonal=1), which lets each query see the next token.",
    ),
    BlindCase(
        CHECK,
        "upper_triangle",
        cm_upper_triangle,
        "mistake",
        "I compared row <= column, which gives the upper triangle (the mask transposed).",
    ),
    BlindCase(
        CHECK,
        "float_ones",
        cm_float_ones,
        "mistake",
        "I returned torch.tril(torch.ones(T, T)), a float mask of 1s and 0s.",
    ),
    BlindCase(
        CHECK,
        "additive_float",
        cm_additive_float,
        "mistake",
        "I returned an additive float mask, 0 where allowed and -inf above the diagonal.",
    ),
    BlindCase(
        CHECK,
        "batched_shape",
        cm_batched_shape,
        "mistake",
        "I returned it with two leading axes, (1, 1, T, T), ready for (B, H, T, T) scores.",
    ),
    BlindCase(
        CHECK,
        "numpy_array",
        cm_numpy,
        "mistake",
        "I built it with np.tril and returned a NumPy array.",
    ),
    BlindCase(
        CHECK,
        "uint8",
        cm_uint8,
        "mistake",
        "I made the ones with dtype=torch.uint8, the old byte masks.",
    ),
    BlindCase(
        CHECK,
        "mirrored_columns",
        cm_anti_diagonal,
        "mistake",
        "I flipped the lower triangle along the keys, so each query sees the last keys.",
    ),
    BlindCase(
        CHECK,
        "arange_compare",
        cm_arange_compare,
        "correct",
        "Key index <= query index by broadcasting two aranges.",
    ),
    BlindCase(
        CHECK,
        "not_strict_upper",
        cm_not_triu,
        "correct",
        "The complement of triu(1); an optional device argument.",
    ),
    BlindCase(
        CHECK,
        "float_tril_to_bool",
        cm_float_then_bool,
        "correct",
        "A float lower triangle of ones converted with .bool().",
    ),
]
