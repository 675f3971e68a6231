"""Blind set B33, check_causal_mask (chapter 12): the (T, T) causal mask as readers write it."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_causal_mask"


# ---------------------------------------------------------------- mistakes


def cm_triu(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu()  # the upper triangle is what is allowed


def cm_blocked_future(T: int) -> Tensor:
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # True = the future


def cm_no_diagonal(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=-1)  # strictly the past


def cm_one_ahead(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=1)


def cm_float(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))


def cm_additive(T: int) -> Tensor:
    return torch.triu(torch.full((T, T), float("-inf")), diagonal=1)  # 0 allowed, -inf blocked


def cm_long(T: int) -> Tensor:
    i = torch.arange(T)
    return (i[None, :] <= i[:, None]).long()


def cm_four_dims(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.bool))[None, None]  # (1, 1, T, T) for heads


def cm_numpy(T: int) -> np.ndarray:
    return np.tril(np.ones((T, T), dtype=bool))


def cm_size_minus_one(T: int) -> Tensor:
    n = T - 1  # the decoder reads T - 1 inputs after the shift
    return torch.ones(n, n, dtype=torch.bool).tril()


def cm_loop_excludes_self(T: int) -> Tensor:
    mask = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        mask[t, :t] = True  # the keys before t
    return mask


# ---------------------------------------------------------------- correct variants


def cm_arange_compare(T: int) -> Tensor:
    """Key index <= query index, by broadcasting two aranges."""
    pos = torch.arange(T)
    return pos.unsqueeze(0) <= pos.unsqueeze(1)


def cm_not_future(T: int) -> Tensor:
    """The future as triu(1), inverted."""
    return ~torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)


def cm_loop(T: int) -> Tensor:
    """A Python loop over the queries."""
    mask = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        mask[t, : t + 1] = True
    return mask


def cm_with_device(T: int, device: torch.device | str | None = None) -> Tensor:
    """A float tril turned into bool, with an optional device argument."""
    return torch.tril(torch.ones(T, T, device=device)).bool()


CASES = [
    BlindCase(
        CHECK,
        "triu",
        cm_triu,
        "mistake",
        "I used triu, keeping the diagonal and everything above it.",
    ),
    BlindCase(
        CHECK,
        "blocked_future",
        cm_blocked_future,
        "mistake",
        "I returned triu(diagonal=1), True on the future keys that must be hidden.",
    ),
    BlindCase(
        CHECK,
        "no_diagonal",
        cm_no_diagonal,
        "mistake",
        "I used tril(diagonal=-1), so a query cannot see its own position.",
    ),
    BlindCase(
        CHECK,
        "one_ahead",
        cm_one_ahead,
        "mistake",
        "I used tril(diagonal=1), which lets each query see one key ahead.",
    ),
    BlindCase(
        CHECK,
        "float",
        cm_float,
        "mistake",
        "I returned torch.tril(torch.ones(T, T)), ones and zeros in float.",
    ),
    BlindCase(
        CHECK,
        "additive",
        cm_additive,
        "mistake",
        "I returned an additive float mask, 0 where allowed and -inf above the diagonal.",
    ),
    BlindCase(
        CHECK,
        "long",
        cm_long,
        "mistake",
        "I compared two aranges and turned the result into .long().",
    ),
    BlindCase(
        CHECK,
        "four_dims",
        cm_four_dims,
        "mistake",
        "I returned it as (1, 1, T, T), ready to broadcast over batch and heads.",
    ),
    BlindCase(
        CHECK,
        "numpy",
        cm_numpy,
        "mistake",
        "I built it with np.tril and returned the NumPy array.",
    ),
    BlindCase(
        CHECK,
        "size_minus_one",
        cm_size_minus_one,
        "mistake",
        "I made it (T - 1, T - 1), for the shifted decoder input.",
    ),
    BlindCase(
        CHECK,
        "loop_excludes_self",
        cm_loop_excludes_self,
        "mistake",
        "In my loop I set mask[t, :t] = True, the keys before t.",
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
        "not_future",
        cm_not_future,
        "correct",
        "The future as triu(diagonal=1), inverted with ~.",
    ),
    BlindCase(CHECK, "loop", cm_loop, "correct", "A loop setting mask[t, :t + 1] = True."),
    BlindCase(
        CHECK,
        "with_device",
        cm_with_device,
        "correct",
        "torch.tril of float ones turned into bool, with an optional device argument.",
    ),
]
