"""Chapter 12, "Your turn": ``causal_mask(T) -> (T, T) bool``, True where query t may attend."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_causal_mask"


# --- mistakes ---------------------------------------------------------------------------------


def upper_triangle(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu()  # on and above the diagonal


def strictly_below(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=-1)  # a token does not see itself


def float_ones(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))  # 1.0 below and on the diagonal


def blocked_future_polarity(T: int) -> Tensor:
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # True = future


def additive_float_mask(T: int) -> Tensor:
    mask = torch.full((T, T), float("-inf")).triu(diagonal=1)  # 0 allowed, -inf blocked
    return mask


def one_step_ahead(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=1)


def batch_axis_added(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril().unsqueeze(0)  # (1, T, T) to broadcast


def squeezed(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T)).bool().squeeze()  # drops both axes when T == 1


def numpy_array(T: int) -> np.ndarray:
    return np.tril(np.ones((T, T), dtype=bool))


def local_window(T: int) -> Tensor:
    i = torch.arange(T)
    offset = i[:, None] - i[None, :]
    return (offset >= 0) & (offset < 4)  # only the last few tokens, as in the band mask


# --- correct variants -------------------------------------------------------------------------


def arange_comparison(T: int) -> Tensor:
    rows = torch.arange(T).unsqueeze(1)  # query t
    cols = torch.arange(T).unsqueeze(0)  # key s
    return cols <= rows


def not_the_strict_upper(T: int, device: torch.device | str | None = None) -> Tensor:
    return ~torch.ones(T, T, dtype=torch.bool, device=device).triu(diagonal=1)


def loop_fill(T: int) -> Tensor:
    mask = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        mask[t, : t + 1] = True
    return mask


CASES = [
    BlindCase(
        CHECK,
        "upper_triangle",
        upper_triangle,
        "mistake",
        "I used triu instead of tril, so each query sees itself and the future.",
    ),
    BlindCase(
        CHECK,
        "strictly_below",
        strictly_below,
        "mistake",
        "I used tril(diagonal=-1), so a token cannot attend to itself.",
    ),
    BlindCase(
        CHECK,
        "float_ones",
        float_ones,
        "mistake",
        "I returned torch.tril(torch.ones(T, T)), a float mask, without making it bool.",
    ),
    BlindCase(
        CHECK,
        "blocked_future_polarity",
        blocked_future_polarity,
        "mistake",
        "I returned triu(diagonal=1), True on the future (nn.Transformer's polarity).",
    ),
    BlindCase(
        CHECK,
        "additive_float_mask",
        additive_float_mask,
        "mistake",
        "I returned an additive float mask, 0 where allowed and -inf above the diagonal.",
    ),
    BlindCase(
        CHECK,
        "one_step_ahead",
        one_step_ahead,
        "mistake",
        "I used tril(diagonal=1), which lets each query see one key in the future.",
    ),
    BlindCase(
        CHECK,
        "batch_axis_added",
        batch_axis_added,
        "mistake",
        "I added a batch axis with unsqueeze(0), returning (1, T, T) instead of (T, T).",
    ),
    BlindCase(
        CHECK,
        "squeezed",
        squeezed,
        "mistake",
        "I called .squeeze() at the end, which turns the (1, 1) mask of T = 1 into a scalar.",
    ),
    BlindCase(
        CHECK,
        "numpy_array",
        numpy_array,
        "mistake",
        "I built the mask with np.tril and returned a NumPy array instead of a tensor.",
    ),
    BlindCase(
        CHECK,
        "local_window",
        local_window,
        "mistake",
        "I let each query see only itself and the 3 keys before it, like the band mask, instead "
        "of the whole past.",
    ),
    BlindCase(
        CHECK,
        "arange_comparison",
        arange_comparison,
        "correct",
        "I compared a column of query positions with a row of key positions: key <= query.",
    ),
    BlindCase(
        CHECK,
        "not_the_strict_upper",
        not_the_strict_upper,
        "correct",
        "I negated the strict upper triangle, with an optional device argument.",
    ),
    BlindCase(
        CHECK,
        "loop_fill",
        loop_fill,
        "correct",
        "I filled each row t with True up to column t in a loop.",
    ),
]
