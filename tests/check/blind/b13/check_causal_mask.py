"""Blind set B13, check_causal_mask (chapter 12): the causal mask as readers write it."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_causal_mask"


# ---------------------------------------------------------------- mistakes


def cm_future_true(T: int) -> Tensor:
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # True = the future


def cm_strict_lower(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(-1)  # a token must not see itself


def cm_upper(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu()


def cm_float(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))  # 1.0 = may attend


def cm_long(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.long))


def cm_strict_compare(T: int) -> Tensor:
    i = torch.arange(T)
    return i[:, None] > i[None, :]  # keys strictly before the query


def cm_one_ahead(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(1)  # the next token too


def cm_batched(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril()[None, None]  # (1, 1, T, T)


def cm_additive(T: int) -> Tensor:
    return nn.Transformer.generate_square_subsequent_mask(T)  # 0 / -inf, as PyTorch builds it


def cm_uint8(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.uint8))  # a byte mask


def cm_key_compare_reversed(T: int) -> Tensor:
    t = torch.arange(T)
    return t.unsqueeze(0) >= t.unsqueeze(1)  # row = key, column = query


# ---------------------------------------------------------------- correct variants


def cm_arange(T: int) -> Tensor:
    t = torch.arange(T)
    return t[None, :] <= t[:, None]  # key <= query


def cm_not_future(T: int, device: torch.device | str | None = None) -> Tensor:
    return ~torch.ones(T, T, dtype=torch.bool, device=device).triu(1)


def cm_from_pytorch(T: int) -> Tensor:
    return nn.Transformer.generate_square_subsequent_mask(T) == 0


def cm_numpy(T: int) -> Tensor:
    return torch.from_numpy(np.tril(np.ones((T, T), dtype=bool)))


CASES = [
    BlindCase(
        CHECK,
        "future_true",
        cm_future_true,
        "mistake",
        "I marked the future positions True (triu(1)), the ones to hide.",
    ),
    BlindCase(
        CHECK,
        "strict_lower",
        cm_strict_lower,
        "mistake",
        "I used tril(-1), so a token cannot see itself.",
    ),
    BlindCase(CHECK, "upper", cm_upper, "mistake", "I used triu() instead of tril()."),
    BlindCase(CHECK, "float", cm_float, "mistake", "I returned tril of ones as float."),
    BlindCase(CHECK, "long", cm_long, "mistake", "I built it from long ones, 1 = may attend."),
    BlindCase(
        CHECK,
        "strict_compare",
        cm_strict_compare,
        "mistake",
        "I compared query > key with arange, leaving out the diagonal.",
    ),
    BlindCase(
        CHECK,
        "one_ahead",
        cm_one_ahead,
        "mistake",
        "I used tril(1), letting each query see the next token.",
    ),
    BlindCase(
        CHECK,
        "batched_shape",
        cm_batched,
        "mistake",
        "I returned it as (1, 1, T, T) to broadcast over batch and heads.",
    ),
    BlindCase(
        CHECK,
        "additive_float",
        cm_additive,
        "mistake",
        "I returned nn.Transformer.generate_square_subsequent_mask(T), a 0/-inf float mask.",
    ),
    BlindCase(CHECK, "uint8", cm_uint8, "mistake", "I returned a uint8 byte mask."),
    BlindCase(
        CHECK,
        "query_key_swapped",
        cm_key_compare_reversed,
        "mistake",
        "I compared with the keys on the rows, so the mask comes out transposed.",
    ),
    BlindCase(CHECK, "arange_compare", cm_arange, "correct", "arange comparison key <= query."),
    BlindCase(
        CHECK,
        "not_future_device",
        cm_not_future,
        "correct",
        "The complement of triu(1), with an optional device argument.",
    ),
    BlindCase(
        CHECK,
        "from_pytorch_additive",
        cm_from_pytorch,
        "correct",
        "PyTorch's additive mask compared == 0.",
    ),
    BlindCase(CHECK, "numpy_tril", cm_numpy, "correct", "np.tril of a bool array, from_numpy."),
]
