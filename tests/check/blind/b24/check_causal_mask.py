"""Blind set B24, check_causal_mask (chapter 12): the (T, T) causal mask as readers write it."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_causal_mask"


# ---------------------------------------------------------------- mistakes


def cm_upper(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu()  # row t: keys t .. T-1


def cm_future_true(T: int) -> Tensor:
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # True = a future key


def cm_strictly_below(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)  # only earlier keys


def cm_one_ahead(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=1)


def cm_float(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))


def cm_additive(T: int) -> Tensor:
    mask = torch.full((T, T), float("-inf"))
    return torch.triu(mask, diagonal=1)  # 0 where allowed, -inf on the future


def cm_uint8(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.uint8))


def cm_batch_axis(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril().unsqueeze(0)  # (1, T, T)


def cm_numpy(T: int) -> Tensor:
    return np.tril(np.ones((T, T), dtype=bool))


def cm_strict_with_first_row_patched(T: int) -> Tensor:
    mask = torch.arange(T)[:, None] > torch.arange(T)[None, :]  # earlier keys only
    if T:
        mask[0, 0] = True  # so that the first query is not left with nothing
    return mask


def cm_needs_device(T: int, device: torch.device | str) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()


def cm_from_tensor(x: Tensor) -> Tensor:
    T = x.size(1)  # from the batch of tokens (B, T)
    return torch.ones(T, T, dtype=torch.bool, device=x.device).tril()


# ---------------------------------------------------------------- correct variants


def cm_arange_compare(T: int) -> Tensor:
    positions = torch.arange(T)
    return positions.unsqueeze(1) >= positions.unsqueeze(0)  # key index <= query index


def cm_not_future(T: int, device: torch.device | str | None = None) -> Tensor:
    return ~torch.ones(T, T, dtype=torch.bool, device=device).triu(diagonal=1)


def cm_loop(T: int) -> Tensor:
    mask = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        mask[t, : t + 1] = True
    return mask


def cm_float_then_bool(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T)).bool()


CASES = [
    BlindCase(
        CHECK,
        "upper_triangle",
        cm_upper,
        "mistake",
        "I used triu, so each query sees itself and the later keys: the transpose.",
    ),
    BlindCase(
        CHECK,
        "future_true",
        cm_future_true,
        "mistake",
        "I marked the future with True, triu(diagonal=1), as nn.Transformer's masks do.",
    ),
    BlindCase(
        CHECK,
        "strictly_below",
        cm_strictly_below,
        "mistake",
        "I used tril(diagonal=-1), so a query cannot attend to itself.",
    ),
    BlindCase(
        CHECK,
        "one_ahead",
        cm_one_ahead,
        "mistake",
        "I used tril(diagonal=1), which lets each query see the next key too.",
    ),
    BlindCase(
        CHECK,
        "float_ones",
        cm_float,
        "mistake",
        "I returned torch.tril(torch.ones(T, T)), a float tensor of 0/1.",
    ),
    BlindCase(
        CHECK,
        "additive_float_mask",
        cm_additive,
        "mistake",
        "I returned the additive float mask, 0 where allowed and -inf on the future.",
    ),
    BlindCase(
        CHECK,
        "uint8",
        cm_uint8,
        "mistake",
        "I made the mask with dtype=torch.uint8, as older PyTorch code does.",
    ),
    BlindCase(
        CHECK,
        "leading_axis",
        cm_batch_axis,
        "mistake",
        "I returned (1, T, T) so that it broadcasts over the batch.",
    ),
    BlindCase(
        CHECK,
        "numpy_array",
        cm_numpy,
        "mistake",
        "I built the mask with np.tril and returned the NumPy array.",
    ),
    BlindCase(
        CHECK,
        "strict_first_row_patched",
        cm_strict_with_first_row_patched,
        "mistake",
        "I compared query > key (strictly earlier keys) and only let the first query see itself.",
    ),
    BlindCase(
        CHECK,
        "device_required",
        cm_needs_device,
        "mistake",
        "I added a device argument without a default, so my_causal_mask(T) fails.",
    ),
    BlindCase(
        CHECK,
        "takes_tokens",
        cm_from_tensor,
        "mistake",
        "My function takes the token batch and reads T from it, instead of taking T.",
    ),
    BlindCase(
        CHECK,
        "arange_comparison",
        cm_arange_compare,
        "correct",
        "Query index >= key index by broadcasting two aranges.",
    ),
    BlindCase(
        CHECK,
        "not_future_with_device",
        cm_not_future,
        "correct",
        "The negation of triu(diagonal=1); an optional device argument.",
    ),
    BlindCase(CHECK, "row_loop", cm_loop, "correct", "A loop that sets row t True up to t."),
    BlindCase(
        CHECK,
        "float_tril_to_bool",
        cm_float_then_bool,
        "correct",
        "torch.tril of float ones, converted with .bool().",
    ),
]
