"""Blind set B32, check_causal_mask (chapter 12): the (T, T) causal mask as readers write it."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_causal_mask"


# ---------------------------------------------------------------- mistakes


def cm_future_true(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)  # the -inf positions of the notes


def cm_annotated_eq_zero(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T)) == 0  # "mask == 0" from another tutorial


def cm_strict_lower(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=-1)  # strictly the past


def cm_one_ahead(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=1)  # the next token too


def cm_upper(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu()  # triu and tril mixed up


def cm_float(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))  # ones and zeros


def cm_uint8(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.uint8).tril()  # the old byte masks


def cm_additive(T: int) -> Tensor:
    mask = torch.full((T, T), float("-inf")).triu(1)  # 0 on and below, -inf above
    return mask


def cm_batched(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril()[None, None]  # (1, 1, T, T) for the heads


def cm_numpy(T: int) -> Tensor:
    return np.tril(np.ones((T, T), dtype=bool))


_CACHE: dict[str, Tensor] = {}


def cm_cached_first(T: int) -> Tensor:
    if "mask" not in _CACHE:  # build once, reuse
        _CACHE["mask"] = torch.ones(T, T, dtype=torch.bool).tril()
    return _CACHE["mask"]


def cm_band(T: int) -> Tensor:
    positions = torch.arange(T)
    offset = positions[:, None] - positions[None, :]
    return (offset >= 0) & (offset <= 2)  # the streaming band of the chapter, w = 2


def cm_gt_comparison(T: int) -> Tensor:
    i = torch.arange(T)
    return i[:, None] > i[None, :]  # query after key


def cm_tril_size_arg(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.bool), T)  # second argument is the diagonal


# ---------------------------------------------------------------- correct variants


def cm_not_triu(T: int) -> Tensor:
    return ~torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)


def cm_arange_ge(T: int, device: torch.device | str | None = None) -> Tensor:
    i = torch.arange(T, device=device)
    return i.unsqueeze(1) >= i.unsqueeze(0)  # query position >= key position


def cm_loop(T: int) -> Tensor:
    mask = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        mask[t, : t + 1] = True
    return mask


def cm_float_then_bool(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T)).bool()


def cm_big_then_slice(T: int) -> Tensor:
    size = max(T, 1024)
    return torch.ones(size, size, dtype=torch.bool).tril()[:T, :T].clone()


CASES = [
    BlindCase(
        CHECK,
        "future_true",
        cm_future_true,
        "mistake",
        "I returned triu(diagonal=1), True at the future positions to hide.",
    ),
    BlindCase(
        CHECK,
        "tril_eq_zero",
        cm_annotated_eq_zero,
        "mistake",
        "I wrote torch.tril(ones) == 0, copying the '== 0' from code that masks where False.",
    ),
    BlindCase(
        CHECK,
        "strict_lower",
        cm_strict_lower,
        "mistake",
        "I used tril(diagonal=-1), so a query cannot attend to itself.",
    ),
    BlindCase(
        CHECK,
        "one_ahead",
        cm_one_ahead,
        "mistake",
        "I used tril(diagonal=1), which lets each query see the next token.",
    ),
    BlindCase(
        CHECK,
        "upper",
        cm_upper,
        "mistake",
        "I used triu instead of tril (the mask transposed).",
    ),
    BlindCase(
        CHECK,
        "float_ones",
        cm_float,
        "mistake",
        "I returned torch.tril(torch.ones(T, T)), a float mask.",
    ),
    BlindCase(
        CHECK,
        "uint8",
        cm_uint8,
        "mistake",
        "I made the mask uint8, as old PyTorch code did.",
    ),
    BlindCase(
        CHECK,
        "additive_inf",
        cm_additive,
        "mistake",
        "I returned the additive form, 0 on and below the diagonal and -inf above.",
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
        "numpy_array",
        cm_numpy,
        "mistake",
        "I built it with np.tril and returned a numpy array.",
    ),
    BlindCase(
        CHECK,
        "cached_first_size",
        cm_cached_first,
        "mistake",
        "I cached the mask at module level on the first call and return it for every T.",
    ),
    BlindCase(
        CHECK,
        "band_w2",
        cm_band,
        "mistake",
        "I built the causal band of the chapter (each position and the 2 before it).",
    ),
    BlindCase(
        CHECK,
        "strict_comparison",
        cm_gt_comparison,
        "mistake",
        "I compared query > key with arange, leaving out the diagonal.",
    ),
    BlindCase(
        CHECK,
        "tril_size_argument",
        cm_tril_size_arg,
        "mistake",
        "I passed T as tril's second argument, thinking it was the size; it is the diagonal "
        "offset, so nothing is masked.",
    ),
    BlindCase(
        CHECK,
        "not_triu",
        cm_not_triu,
        "correct",
        "The complement of the strictly upper triangle: ~triu(ones, 1).",
    ),
    BlindCase(
        CHECK,
        "arange_ge_device",
        cm_arange_ge,
        "correct",
        "arange(T)[:, None] >= arange(T)[None, :]; an extra device argument.",
    ),
    BlindCase(
        CHECK,
        "loop",
        cm_loop,
        "correct",
        "A bool zeros tensor filled row by row.",
    ),
    BlindCase(
        CHECK,
        "float_then_bool",
        cm_float_then_bool,
        "correct",
        "tril of a float ones matrix, then .bool().",
    ),
    BlindCase(
        CHECK,
        "big_then_slice",
        cm_big_then_slice,
        "correct",
        "A 1024 x 1024 lower triangle (or larger when T is) sliced to (T, T).",
    ),
]
