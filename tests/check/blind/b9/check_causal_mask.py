"""Blind set B9, check_causal_mask (chapter 12): the (T, T) look-ahead mask."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_causal_mask"

# ---------------------------------------------------------------- mistakes


def cm_true_on_future(T: int) -> Tensor:
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # True = blocked


def cm_strictly_lower(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)  # no token sees itself


def cm_upper(T: int) -> Tensor:
    return torch.triu(torch.ones(T, T, dtype=torch.bool))


def cm_float(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))  # 1.0 / 0.0


def cm_additive_inf(T: int) -> Tensor:
    return torch.triu(torch.full((T, T), float("-inf")), diagonal=1)  # as nn.Transformer


def cm_one_ahead(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=1)


def cm_tril_not_inplace(T: int) -> Tensor:
    mask = torch.ones(T, T, dtype=torch.bool)
    mask.tril()  # result thrown away: tril is not in place
    return mask


def cm_with_batch_axes(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril().view(1, 1, T, T)  # ready for (B, H, T, T)


def cm_numpy(T: int) -> Tensor:
    return np.tril(np.ones((T, T), dtype=bool))


def cm_uint8(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.uint8))  # old ByteTensor masks


# ---------------------------------------------------------------- correct variants


def cm_arange_compare(T: int) -> Tensor:
    i = torch.arange(T)
    return i[None, :] <= i[:, None]  # key <= query


def cm_not_triu(T: int) -> Tensor:
    return ~torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)


def cm_float_then_bool(T: int, device: torch.device | str | None = None) -> Tensor:
    return torch.tril(torch.ones(T, T, device=device)).bool()


def cm_tril_indices(T: int) -> Tensor:
    mask = torch.zeros(T, T, dtype=torch.bool)
    rows, cols = torch.tril_indices(T, T)
    mask[rows, cols] = True
    return mask


CASES = [
    BlindCase(
        CHECK,
        "true_on_future",
        cm_true_on_future,
        "mistake",
        "I returned triu(diagonal=1): True on the future, PyTorch's 'blocked' polarity.",
    ),
    BlindCase(
        CHECK,
        "strictly_lower",
        cm_strictly_lower,
        "mistake",
        "I used tril(diagonal=-1), so no position may attend to itself.",
    ),
    BlindCase(
        CHECK,
        "upper_triangle",
        cm_upper,
        "mistake",
        "I used triu instead of tril: each query sees itself and the future.",
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
        cm_additive_inf,
        "mistake",
        "I returned the additive float mask of nn.Transformer (-inf above the diagonal, "
        "0 elsewhere).",
    ),
    BlindCase(
        CHECK,
        "one_step_ahead",
        cm_one_ahead,
        "mistake",
        "I used tril(diagonal=1), which also lets each query see the next token.",
    ),
    BlindCase(
        CHECK,
        "tril_result_dropped",
        cm_tril_not_inplace,
        "mistake",
        "I called mask.tril() thinking it works in place and returned the all-True mask.",
    ),
    BlindCase(
        CHECK,
        "extra_batch_head_axes",
        cm_with_batch_axes,
        "mistake",
        "I returned the mask as (1, 1, T, T), ready for (B, H, T, T) scores.",
    ),
    BlindCase(
        CHECK,
        "numpy_array",
        cm_numpy,
        "mistake",
        "I built it with np.tril and returned a NumPy array instead of a tensor.",
    ),
    BlindCase(
        CHECK,
        "uint8_mask",
        cm_uint8,
        "mistake",
        "I made it a uint8 tensor, as old PyTorch code did, instead of bool.",
    ),
    BlindCase(
        CHECK,
        "arange_comparison",
        cm_arange_compare,
        "correct",
        "I compared key and query indices: arange(T)[None, :] <= arange(T)[:, None].",
    ),
    BlindCase(
        CHECK,
        "negated_strict_upper",
        cm_not_triu,
        "correct",
        "I negated triu(diagonal=1) of a bool ones matrix.",
    ),
    BlindCase(
        CHECK,
        "float_tril_then_bool",
        cm_float_then_bool,
        "correct",
        "I took tril of float ones and called .bool(); a device argument is optional.",
    ),
    BlindCase(
        CHECK,
        "tril_indices",
        cm_tril_indices,
        "correct",
        "I set True at torch.tril_indices(T, T) in a False matrix.",
    ),
]
