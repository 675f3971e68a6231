"""Blind set B6, check_causal_mask (chapter 12): the (T, T) mask that hides the future."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_causal_mask"


# ---------------------------------------------------------------- mistakes


def causal_true_above(T: int) -> Tensor:
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # True = the future


def causal_strictly_below(T: int) -> Tensor:
    i = torch.arange(T)
    return i[None, :] < i[:, None]  # keys before the query


def causal_upper_triangle(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu()


def causal_float_ones(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))  # 1 = may attend, 0 = hidden


def causal_additive(T: int) -> Tensor:
    return torch.triu(torch.full((T, T), float("-inf")), diagonal=1)  # added to the scores


def causal_one_ahead(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=1)


def causal_with_batch_axis(T: int) -> Tensor:
    future = torch.triu(torch.ones(1, T, T), diagonal=1)
    return future == 0  # (1, T, T), as the Annotated Transformer's subsequent_mask


def causal_uint8(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.uint8))  # a byte mask, as older code has


def causal_numpy(T: int) -> Tensor:
    return np.tril(np.ones((T, T), dtype=bool))


_CACHE: dict[str, Tensor] = {}


def causal_cached_once(T: int) -> Tensor:
    if "mask" not in _CACHE:  # build it once, reuse it for every batch
        _CACHE["mask"] = torch.ones(T, T, dtype=torch.bool).tril()
    return _CACHE["mask"]


# ---------------------------------------------------------------- correct variants


def causal_arange_compare(T: int) -> Tensor:
    t = torch.arange(T)
    return t.unsqueeze(0) <= t.unsqueeze(1)  # key s <= query t


def causal_not_future(T: int, device: torch.device | str | None = None) -> Tensor:
    future = torch.ones(T, T, dtype=torch.bool, device=device).triu(diagonal=1)
    return ~future


_BIG: list[Tensor] = [torch.ones(0, 0, dtype=torch.bool)]


def causal_sliced_buffer(T: int) -> Tensor:
    if _BIG[0].shape[0] < T:  # grow the cached table when a longer T comes
        _BIG[0] = torch.ones(2 * T, 2 * T, dtype=torch.bool).tril()
    return _BIG[0][:T, :T].clone()


CASES = [
    BlindCase(
        CHECK,
        "true_on_future",
        causal_true_above,
        "mistake",
        "I returned triu(diagonal=1), True on the future, as nn.Transformer's mask blocks.",
    ),
    BlindCase(
        CHECK,
        "strictly_below_diagonal",
        causal_strictly_below,
        "mistake",
        "I compared key < query, so a position cannot attend to itself.",
    ),
    BlindCase(
        CHECK,
        "upper_triangle",
        causal_upper_triangle,
        "mistake",
        "I used triu() instead of tril(), True on and above the diagonal.",
    ),
    BlindCase(
        CHECK,
        "float_ones",
        causal_float_ones,
        "mistake",
        "I returned torch.tril(torch.ones(T, T)), a float mask of 1s and 0s, not bools.",
    ),
    BlindCase(
        CHECK,
        "additive_minus_inf",
        causal_additive,
        "mistake",
        "I returned the additive float mask, 0 on and below the diagonal and -inf above.",
    ),
    BlindCase(
        CHECK,
        "one_step_ahead",
        causal_one_ahead,
        "mistake",
        "I used tril(diagonal=1), which lets each query see the next token too.",
    ),
    BlindCase(
        CHECK,
        "leading_batch_axis",
        causal_with_batch_axis,
        "mistake",
        "I returned a (1, T, T) mask with a batch axis, as the Annotated Transformer does.",
    ),
    BlindCase(
        CHECK,
        "uint8_mask",
        causal_uint8,
        "mistake",
        "I built the mask with dtype torch.uint8, as older PyTorch code did, instead of bool.",
    ),
    BlindCase(
        CHECK,
        "numpy_array",
        causal_numpy,
        "mistake",
        "I returned a NumPy boolean array from np.tril instead of a torch tensor.",
    ),
    BlindCase(
        CHECK,
        "cached_first_size",
        causal_cached_once,
        "mistake",
        "I cache the mask on the first call and return it every time, whatever T is asked.",
    ),
    BlindCase(
        CHECK,
        "arange_comparison",
        causal_arange_compare,
        "correct",
        "arange(T) compared with itself: key index <= query index.",
    ),
    BlindCase(
        CHECK,
        "negated_future_with_device",
        causal_not_future,
        "correct",
        "The negation of triu(diagonal=1), with an optional device argument.",
    ),
    BlindCase(
        CHECK,
        "sliced_growing_buffer",
        causal_sliced_buffer,
        "correct",
        "A cached lower-triangular table that grows when needed, sliced to [:T, :T] and cloned.",
    ),
]
