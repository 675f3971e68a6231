"""Blind set B21, check_causal_mask (chapter 12): the causal mask as readers write it."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_causal_mask"


# ---------------------------------------------------------------- mistakes


def cm_blocks_future(T: int) -> Tensor:
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # True = the future


def cm_no_diagonal(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)


def cm_one_future_step(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=1)


def cm_transposed(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu()


def cm_float(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))


def cm_uint8(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.uint8))


def cm_additive(T: int) -> Tensor:
    mask = torch.full((T, T), float("-inf"))
    return torch.triu(mask, diagonal=1)  # 0 where allowed, -inf on the future


def cm_batched(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril().unsqueeze(0)  # (1, T, T) to broadcast


def cm_numpy(T: int) -> Tensor:
    return np.tril(np.ones((T, T), dtype=bool))


def cm_from_zeros(T: int) -> Tensor:
    return torch.zeros(T, T).tril().bool()


def cm_device_required(T: int, device: torch.device | str) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()


# ---------------------------------------------------------------- correct variants


def cm_arange_compare(T: int) -> Tensor:
    i = torch.arange(T)
    return i.unsqueeze(1) >= i.unsqueeze(0)  # key index <= query index


def cm_not_triu(T: int) -> Tensor:
    return ~torch.ones(T, T, dtype=torch.bool).triu(1)


def cm_loop(T: int) -> Tensor:
    mask = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        mask[t, : t + 1] = True
    return mask


def cm_tril_then_bool(T: int, device: torch.device | str | None = None) -> Tensor:
    return torch.tril(torch.ones(T, T, device=device)) == 1


CASES = [
    BlindCase(
        CHECK,
        "true_on_future",
        cm_blocks_future,
        "mistake",
        "I marked the future with True (triu(1)), PyTorch's nn.Transformer polarity.",
    ),
    BlindCase(
        CHECK,
        "no_diagonal",
        cm_no_diagonal,
        "mistake",
        "I used tril(diagonal=-1), so a token cannot see itself.",
    ),
    BlindCase(
        CHECK,
        "one_step_of_future",
        cm_one_future_step,
        "mistake",
        "I used tril(diagonal=1), which lets each query see the next key.",
    ),
    BlindCase(CHECK, "transposed", cm_transposed, "mistake", "I used triu instead of tril."),
    BlindCase(
        CHECK,
        "float_mask",
        cm_float,
        "mistake",
        "I returned torch.tril(torch.ones(T, T)), a float mask of 1s and 0s.",
    ),
    BlindCase(
        CHECK,
        "uint8_mask",
        cm_uint8,
        "mistake",
        "I built the ones as uint8, like old PyTorch masks.",
    ),
    BlindCase(
        CHECK,
        "additive_mask",
        cm_additive,
        "mistake",
        "I returned an additive float mask, 0 where allowed and -inf on the future.",
    ),
    BlindCase(
        CHECK,
        "batched_shape",
        cm_batched,
        "mistake",
        "I returned it as (1, T, T) so it broadcasts over the batch.",
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
        "tril_of_zeros",
        cm_from_zeros,
        "mistake",
        "I started from torch.zeros instead of torch.ones, so the mask is all False.",
    ),
    BlindCase(
        CHECK,
        "device_required",
        cm_device_required,
        "mistake",
        "I gave my function a device argument without a default, so cm(T) alone fails.",
    ),
    BlindCase(
        CHECK,
        "arange_compare",
        cm_arange_compare,
        "correct",
        "Query index >= key index by broadcasting two aranges.",
    ),
    BlindCase(
        CHECK, "not_triu", cm_not_triu, "correct", "The negation of the strict upper triangle."
    ),
    BlindCase(CHECK, "loop", cm_loop, "correct", "Filled row by row in a loop."),
    BlindCase(
        CHECK,
        "tril_equals_one",
        cm_tril_then_bool,
        "correct",
        "tril of float ones compared == 1, with an optional device.",
    ),
]
