"""Blind set B10, check_causal_mask (chapter 12): the (T, T) causal mask as readers write it."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_causal_mask"


# ---------------------------------------------------------------- mistakes


def cm_future_true(T: int) -> Tensor:
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # the positions to hide


def cm_strictly_below(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=-1)  # only the words before t


def cm_upper(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu()  # the notes' upper triangle


def cm_float(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))


def cm_additive(T: int) -> Tensor:
    return torch.triu(torch.full((T, T), float("-inf")), diagonal=1)  # 0 = attend, -inf = hide


def cm_one_ahead(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=1)


def cm_arange_strict(T: int) -> Tensor:
    t = torch.arange(T)
    return t[None, :] < t[:, None]  # key before query


def cm_batched_shape(T: int) -> Tensor:
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
    return mask.view(1, 1, T, T)  # (B, H, T, T)-ready


def cm_uint8(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.uint8))  # a byte mask


def cm_size_plus_one(T: int) -> Tensor:
    n = T + 1  # positions 0 .. T
    return torch.ones(n, n, dtype=torch.bool).tril()


def cm_numpy(T: int) -> np.ndarray:
    return np.tril(np.ones((T, T), dtype=bool))  # True on and below the diagonal


# ---------------------------------------------------------------- correct variants


def cm_arange_compare(T: int) -> Tensor:
    t = torch.arange(T)
    return t.unsqueeze(0) <= t.unsqueeze(1)  # key s <= query t


def cm_not_triu(T: int) -> Tensor:
    return ~torch.ones(T, T, dtype=torch.bool).triu(1)


def cm_loop(T: int, device: torch.device | str | None = None) -> Tensor:
    """Filled row by row; an extra optional device argument."""
    mask = torch.zeros(T, T, dtype=torch.bool, device=device)
    for t in range(T):
        mask[t, : t + 1] = True
    return mask


def cm_float_then_bool(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T)).bool()


def cm_from_additive(T: int) -> Tensor:
    additive = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)  # the notes' matrix
    return additive == 0


CASES = [
    BlindCase(
        CHECK,
        "future_is_true",
        cm_future_true,
        "mistake",
        "I made the mask True above the diagonal, on the future positions to hide.",
    ),
    BlindCase(
        CHECK,
        "strictly_below",
        cm_strictly_below,
        "mistake",
        "I used tril(diagonal=-1), so a position cannot attend to itself.",
    ),
    BlindCase(
        CHECK,
        "upper_triangle",
        cm_upper,
        "mistake",
        "I took the upper triangle with the diagonal, the transpose of the right mask.",
    ),
    BlindCase(
        CHECK,
        "float_ones",
        cm_float,
        "mistake",
        "I returned torch.tril(torch.ones(T, T)), a float mask of 1s and 0s.",
    ),
    BlindCase(
        CHECK,
        "additive_minus_inf",
        cm_additive,
        "mistake",
        "I returned the notes' additive mask: 0 where allowed, -inf above the diagonal.",
    ),
    BlindCase(
        CHECK,
        "one_step_ahead",
        cm_one_ahead,
        "mistake",
        "I used tril(diagonal=1), which also lets each position see the next one.",
    ),
    BlindCase(
        CHECK,
        "arange_strict",
        cm_arange_strict,
        "mistake",
        "I compared positions with < instead of <=, which leaves out the diagonal.",
    ),
    BlindCase(
        CHECK,
        "batched_shape",
        cm_batched_shape,
        "mistake",
        "I returned it as (1, 1, T, T) so it broadcasts against the scores.",
    ),
    BlindCase(
        CHECK,
        "uint8",
        cm_uint8,
        "mistake",
        "I built it as a uint8 byte mask, as older PyTorch code did.",
    ),
    BlindCase(
        CHECK,
        "size_plus_one",
        cm_size_plus_one,
        "mistake",
        "I made a (T + 1, T + 1) mask.",
    ),
    BlindCase(
        CHECK,
        "numpy_array",
        cm_numpy,
        "mistake",
        "I built it with np.tril and returned the NumPy array, not a tensor.",
    ),
    BlindCase(
        CHECK,
        "arange_compare",
        cm_arange_compare,
        "correct",
        "Broadcast comparison of positions: key index <= query index.",
    ),
    BlindCase(
        CHECK,
        "not_triu",
        cm_not_triu,
        "correct",
        "The negation of the strict upper triangle.",
    ),
    BlindCase(
        CHECK,
        "loop_with_device",
        cm_loop,
        "correct",
        "A bool zeros tensor filled row by row; an extra optional device argument.",
    ),
    BlindCase(
        CHECK,
        "float_then_bool",
        cm_float_then_bool,
        "correct",
        "tril of float ones converted with .bool().",
    ),
    BlindCase(
        CHECK,
        "from_additive",
        cm_from_additive,
        "correct",
        "The notes' 0 / -inf matrix compared with 0.",
    ),
]
