"""Blind set B34, check_causal_mask (chapter 12): the causal mask as readers write it."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_causal_mask"


# ---------------------------------------------------------------- mistakes


def cm_triu_future(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu(1)  # True on the future, like nn.Transformer


def cm_tril_strict(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(-1)  # strictly the past


def cm_tril_plus_one(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(1)


def cm_transposed(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu()  # upper triangle incl. diagonal


def cm_float(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))  # ones and zeros


def cm_additive(T: int) -> Tensor:
    return torch.triu(torch.full((T, T), float("-inf")), diagonal=1)  # 0 / -inf, for adding


def cm_compare_wrong(T: int) -> Tensor:
    i = torch.arange(T)
    return i[:, None] <= i[None, :]  # query <= key


def cm_long(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.long).tril()


def cm_uint8(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.uint8).tril()  # the old byte masks


def cm_batched(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril().unsqueeze(0)  # (1, T, T) to broadcast


def cm_diagonal_only(T: int) -> Tensor:
    return torch.eye(T, dtype=torch.bool)  # each token sees itself


def cm_not_tril(T: int) -> Tensor:
    return ~torch.ones(T, T, dtype=torch.bool).tril()


def cm_numpy(T: int):
    return np.tril(np.ones((T, T), dtype=bool))  # numpy has tril too


# ---------------------------------------------------------------- correct variants


def cm_arange(T: int) -> Tensor:
    pos = torch.arange(T)
    return pos[None, :] <= pos[:, None]  # key <= query


def cm_not_triu(T: int) -> Tensor:
    return ~torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)


def cm_loop(T: int) -> Tensor:
    mask = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        mask[t, : t + 1] = True
    return mask


def cm_tril_cast(T: int, device: str | None = None) -> Tensor:
    return torch.tril(torch.ones(T, T, device=device)).bool()


CASES = [
    BlindCase(
        CHECK,
        "true_on_future",
        cm_triu_future,
        "mistake",
        "I made it True above the diagonal, the keys to block",
    ),
    BlindCase(
        CHECK,
        "strict_past",
        cm_tril_strict,
        "mistake",
        "I used tril(-1), so a token cannot see itself",
    ),
    BlindCase(
        CHECK,
        "one_future_key",
        cm_tril_plus_one,
        "mistake",
        "I used tril(1), which lets each query see the next key",
    ),
    BlindCase(
        CHECK,
        "upper_triangle",
        cm_transposed,
        "mistake",
        "I used triu() and got the transposed mask",
    ),
    BlindCase(CHECK, "float_ones", cm_float, "mistake", "I returned tril(ones) as floats"),
    BlindCase(
        CHECK, "additive_inf", cm_additive, "mistake", "I returned the additive mask of 0 and -inf"
    ),
    BlindCase(
        CHECK, "query_le_key", cm_compare_wrong, "mistake", "I compared row index <= column index"
    ),
    BlindCase(CHECK, "long_ones", cm_long, "mistake", "I made the mask of long ones and zeros"),
    BlindCase(CHECK, "uint8_mask", cm_uint8, "mistake", "I used a uint8 mask"),
    BlindCase(
        CHECK,
        "extra_batch_axis",
        cm_batched,
        "mistake",
        "I returned (1, T, T) so it broadcasts over the batch",
    ),
    BlindCase(
        CHECK,
        "diagonal_only",
        cm_diagonal_only,
        "mistake",
        "I returned the identity, each token seeing only itself",
    ),
    BlindCase(
        CHECK,
        "negated_tril",
        cm_not_tril,
        "mistake",
        "I negated tril, thinking the mask marks the blocked keys",
    ),
    BlindCase(
        CHECK,
        "numpy_array",
        cm_numpy,
        "mistake",
        "I built the mask with np.tril and returned the numpy array",
    ),
    BlindCase(
        CHECK,
        "arange_compare",
        cm_arange,
        "correct",
        "I compared key and query positions with arange",
    ),
    BlindCase(
        CHECK, "negated_strict_triu", cm_not_triu, "correct", "I negated the strict upper triangle"
    ),
    BlindCase(CHECK, "row_loop", cm_loop, "correct", "I filled each row in a loop"),
    BlindCase(
        CHECK,
        "tril_then_bool",
        cm_tril_cast,
        "correct",
        "I took tril of float ones and cast to bool, with an optional device",
    ),
]
