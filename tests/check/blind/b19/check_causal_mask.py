"""Blind set B19, check_causal_mask (chapter 12): the (T, T) mask that hides the future."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_causal_mask"


# ---------------------------------------------------------------- mistakes


def cm_triu(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu()  # upper triangle, diagonal included


def cm_future_true(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)  # True = the future to hide


def cm_strict(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=-1)  # only the past


def cm_one_ahead(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=1)


def cm_float_inf(T: int) -> Tensor:
    # nn.Transformer.generate_square_subsequent_mask: 0 may attend, -inf hidden
    return torch.triu(torch.full((T, T), float("-inf")), diagonal=1)


def cm_float_ones(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))  # 1 = may attend


def cm_uint8(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.uint8))  # the old byte masks


def cm_batched(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril().unsqueeze(0)  # (1, T, T) for the batch


def cm_numpy(T: int) -> Tensor:
    return np.tril(np.ones((T, T), dtype=bool))


def cm_arange_transposed(T: int) -> Tensor:
    i = torch.arange(T)
    return i[:, None] <= i[None, :]  # query i, key j, j >= i


# ---------------------------------------------------------------- correct variants


def cm_arange(T: int) -> Tensor:
    """Broadcast comparison of key and query positions."""
    pos = torch.arange(T)
    return pos.unsqueeze(0) <= pos.unsqueeze(1)  # key j <= query i


def cm_not_future(T: int, device: torch.device | str | None = None) -> Tensor:
    """The future (triu(1)) inverted; an optional device argument."""
    return ~torch.ones(T, T, dtype=torch.bool, device=device).triu(1)


def cm_loop(T: int) -> Tensor:
    """A Python loop writing True up to the diagonal of each row."""
    mask = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        mask[t, : t + 1] = True
    return mask


def cm_tril_bool(T: int) -> Tensor:
    """tril of float ones, turned into bool at the end."""
    return torch.tril(torch.ones(T, T)).bool()


CASES = [
    BlindCase(CHECK, "triu", cm_triu, "mistake", "I used triu, so each query sees the future."),
    BlindCase(
        CHECK,
        "future_true",
        cm_future_true,
        "mistake",
        "I made the mask True on the future positions to hide, triu(1).",
    ),
    BlindCase(
        CHECK,
        "strict_past",
        cm_strict,
        "mistake",
        "I used tril(-1), so a token cannot attend to itself.",
    ),
    BlindCase(
        CHECK,
        "one_ahead",
        cm_one_ahead,
        "mistake",
        "I used tril(1), which lets each token see the next one.",
    ),
    BlindCase(
        CHECK,
        "float_minus_inf",
        cm_float_inf,
        "mistake",
        "I returned the float mask of nn.Transformer: 0 where allowed, -inf in the future.",
    ),
    BlindCase(
        CHECK,
        "float_ones",
        cm_float_ones,
        "mistake",
        "I returned torch.tril(torch.ones(T, T)), a float tensor.",
    ),
    BlindCase(CHECK, "uint8", cm_uint8, "mistake", "I built the mask with dtype uint8."),
    BlindCase(
        CHECK,
        "batched_shape",
        cm_batched,
        "mistake",
        "I added a batch dimension and returned (1, T, T).",
    ),
    BlindCase(
        CHECK,
        "numpy_array",
        cm_numpy,
        "mistake",
        "I built it with np.tril and returned the NumPy array.",
    ),
    BlindCase(
        CHECK,
        "arange_transposed",
        cm_arange_transposed,
        "mistake",
        "I compared the positions the wrong way round, query <= key.",
    ),
    BlindCase(
        CHECK,
        "arange_compare",
        cm_arange,
        "correct",
        "Broadcast comparison of arange positions, key <= query.",
    ),
    BlindCase(
        CHECK,
        "not_triu",
        cm_not_future,
        "correct",
        "The future triu(1) inverted with ~; an optional device argument.",
    ),
    BlindCase(CHECK, "python_loop", cm_loop, "correct", "A loop filling each row up to t."),
    BlindCase(
        CHECK,
        "tril_then_bool",
        cm_tril_bool,
        "correct",
        "tril of float ones converted with .bool().",
    ),
]
