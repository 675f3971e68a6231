"""Blind set B29, check_causal_mask (chapter 12): the (T, T) mask of what each query may see."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_causal_mask"


# ---------------------------------------------------------------- mistakes


def causal_future_true(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)  # True = the future, to hide


def causal_upper_triangle(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu()  # keys 0..t, as a row of the upper half


def causal_strictly_below(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)  # only the past


def causal_one_step_ahead(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=1)


def causal_float_ones(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))  # 1 = may attend


def causal_long(T: int) -> Tensor:
    rows = torch.arange(T).unsqueeze(1)
    cols = torch.arange(T).unsqueeze(0)
    return (cols <= rows).long()


def causal_additive(T: int) -> Tensor:
    return nn.Transformer.generate_square_subsequent_mask(T)  # PyTorch's own causal mask


def causal_with_batch_axes(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril()[None, None]  # (1, 1, T, T) for the heads


def causal_nested_lists(T: int) -> list[list[bool]]:
    return [[key <= query for key in range(T)] for query in range(T)]


def causal_numpy(T: int) -> np.ndarray:
    return np.tril(np.ones((T, T), dtype=bool))


def causal_device_required(T: int, device: torch.device | str) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()


def causal_cached_table(T: int, _table: list = []) -> Tensor:  # noqa: B006
    if not _table:
        _table.append(torch.ones(8, 8, dtype=torch.bool).tril())  # built once
    return _table[0][:T, :T]


def causal_lower_loop_off(T: int) -> Tensor:
    mask = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        mask[t, :t] = True  # keys before t
    return mask


# ---------------------------------------------------------------- correct variants


def causal_compare_indices(T: int) -> Tensor:
    pos = torch.arange(T)
    return pos.unsqueeze(0) <= pos.unsqueeze(1)  # key index <= query index


def causal_not_future(T: int, device: torch.device | str | None = None) -> Tensor:
    future = torch.ones(T, T, dtype=torch.bool, device=device).triu(diagonal=1)
    return ~future


def causal_loop(T: int) -> Tensor:
    mask = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        mask[t, : t + 1] = True
    return mask


def causal_from_float_triu(T: int) -> Tensor:
    return torch.triu(torch.ones(T, T), diagonal=1) == 0


CASES = [
    BlindCase(
        CHECK,
        "true_on_the_future",
        causal_future_true,
        "mistake",
        "I marked the future with True (triu with diagonal=1), the positions to hide.",
    ),
    BlindCase(
        CHECK,
        "upper_triangle",
        causal_upper_triangle,
        "mistake",
        "I used triu instead of tril, so the mask is transposed.",
    ),
    BlindCase(
        CHECK,
        "diagonal_excluded",
        causal_strictly_below,
        "mistake",
        "I used tril(..., diagonal=-1), so a query cannot see its own position.",
    ),
    BlindCase(
        CHECK,
        "one_step_ahead",
        causal_one_step_ahead,
        "mistake",
        "I used tril(..., diagonal=1), which lets every query see the next position too.",
    ),
    BlindCase(
        CHECK,
        "float_ones",
        causal_float_ones,
        "mistake",
        "I returned torch.tril(torch.ones(T, T)), a float mask of ones and zeros.",
    ),
    BlindCase(
        CHECK,
        "long_dtype",
        causal_long,
        "mistake",
        "I compared the indices and turned the result into .long().",
    ),
    BlindCase(
        CHECK,
        "additive_float_mask",
        causal_additive,
        "mistake",
        "I returned nn.Transformer.generate_square_subsequent_mask(T): 0 where allowed, -inf "
        "where not.",
    ),
    BlindCase(
        CHECK,
        "with_batch_and_head_axes",
        causal_with_batch_axes,
        "mistake",
        "I returned the mask as (1, 1, T, T), ready for (B, H, T, T) scores.",
    ),
    BlindCase(
        CHECK,
        "nested_lists",
        causal_nested_lists,
        "mistake",
        "I wrote the mask as a list comprehension and returned the Python lists, not a tensor.",
    ),
    BlindCase(
        CHECK,
        "numpy_array",
        causal_numpy,
        "mistake",
        "I built the mask with np.tril and returned a NumPy array.",
    ),
    BlindCase(
        CHECK,
        "device_required",
        causal_device_required,
        "mistake",
        "I added a device argument without a default, so my_causal_mask(T) alone fails.",
    ),
    BlindCase(
        CHECK,
        "cached_8_by_8",
        causal_cached_table,
        "mistake",
        "I built an 8 x 8 mask once and slice it, which is too small for T > 8.",
    ),
    BlindCase(
        CHECK,
        "loop_stops_before_t",
        causal_lower_loop_off,
        "mistake",
        "In my loop I set mask[t, :t] = True, so position t is left out of its own row.",
    ),
    BlindCase(
        CHECK,
        "compare_indices",
        causal_compare_indices,
        "correct",
        "arange(T) compared with itself: key index <= query index.",
    ),
    BlindCase(
        CHECK,
        "not_future",
        causal_not_future,
        "correct",
        "The negation of the strict upper triangle; an optional device argument.",
    ),
    BlindCase(
        CHECK,
        "row_loop",
        causal_loop,
        "correct",
        "A loop that sets mask[t, :t + 1] = True in a boolean zeros tensor.",
    ),
    BlindCase(
        CHECK,
        "float_triu_equals_zero",
        causal_from_float_triu,
        "correct",
        "torch.triu(torch.ones(T, T), diagonal=1) == 0, which is boolean.",
    ),
]
