"""Blind set B31, check_causal_mask (chapter 12): the (T, T) mask, True where a query may look."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_causal_mask"


# ---------------------------------------------------------------- mistakes


def cm_upper(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu()  # the triangle of the notes' figure


def cm_blocked_future(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)  # where the -inf goes


def cm_no_diagonal(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=-1)  # strictly the past


def cm_one_future_step(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=1)


def cm_float_ones(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))  # 1.0 = may attend


def cm_additive(T: int) -> Tensor:
    return torch.full((T, T), float("-inf")).triu(diagonal=1)  # 0 = attend, -inf = blocked


def cm_with_batch_and_heads(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril()[None, None]  # (1, 1, T, T)


def cm_one_too_big(T: int) -> Tensor:
    i = torch.arange(T + 1)  # positions 0..T
    return i[:, None] >= i[None, :]


def cm_uint8(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.uint8))  # the old PyTorch mask type


def cm_prebuilt_table(T: int) -> Tensor:
    table = torch.ones(8, 8, dtype=torch.bool).tril()  # the chapter's T = 8
    return table[:T, :T]


_CACHE: dict[str, Tensor] = {}


def cm_cached_once(T: int) -> Tensor:
    if "mask" not in _CACHE:  # build it once, reuse it afterwards
        _CACHE["mask"] = torch.ones(T, T, dtype=torch.bool).tril()
    return _CACHE["mask"]


def cm_numpy(T: int) -> np.ndarray:
    return np.tril(np.ones((T, T), dtype=bool))


def cm_compare_reversed(T: int) -> Tensor:
    t = torch.arange(T)
    return t[None, :] >= t[:, None]  # key >= query


def cm_int_long(T: int) -> Tensor:
    t = torch.arange(T)
    return (t[:, None] >= t[None, :]).long()


# ---------------------------------------------------------------- correct variants


def cm_arange_compare(T: int) -> Tensor:
    positions = torch.arange(T)
    return positions.unsqueeze(1) >= positions.unsqueeze(0)  # key <= query


def cm_not_upper(T: int, device: torch.device | str | None = None) -> Tensor:
    return ~torch.triu(torch.ones(T, T, dtype=torch.bool, device=device), diagonal=1)


def cm_loops(T: int) -> Tensor:
    mask = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        for s in range(t + 1):
            mask[t, s] = True
    return mask


def cm_float_then_bool(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T)).bool()


CASES = [
    BlindCase(
        CHECK,
        "upper_triangle",
        cm_upper,
        "mistake",
        "I used triu, so each query sees itself and the future.",
    ),
    BlindCase(
        CHECK,
        "true_on_future",
        cm_blocked_future,
        "mistake",
        "I marked the future with triu(diagonal=1): True where blocked, the other polarity.",
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
        "one_step_into_future",
        cm_one_future_step,
        "mistake",
        "I used tril(diagonal=1), which lets each query see the next key.",
    ),
    BlindCase(
        CHECK,
        "float_ones",
        cm_float_ones,
        "mistake",
        "I returned torch.tril(torch.ones(T, T)), a float mask.",
    ),
    BlindCase(
        CHECK,
        "additive_minus_inf",
        cm_additive,
        "mistake",
        "I returned the additive mask of the notes: 0 on and below the diagonal, -inf above.",
    ),
    BlindCase(
        CHECK,
        "batch_and_head_axes",
        cm_with_batch_and_heads,
        "mistake",
        "I returned (1, 1, T, T), ready for (B, H, T, T) scores.",
    ),
    BlindCase(
        CHECK,
        "one_too_big",
        cm_one_too_big,
        "mistake",
        "I made the positions arange(T + 1), so the mask is (T + 1, T + 1).",
    ),
    BlindCase(
        CHECK,
        "uint8_mask",
        cm_uint8,
        "mistake",
        "I built it as uint8, the old PyTorch mask type.",
    ),
    BlindCase(
        CHECK,
        "prebuilt_8_by_8",
        cm_prebuilt_table,
        "mistake",
        "I sliced a prebuilt 8 x 8 table (the chapter's T), which is too small for T > 8.",
    ),
    BlindCase(
        CHECK,
        "cached_first_mask",
        cm_cached_once,
        "mistake",
        "I cached the first mask I built and return it for every T.",
    ),
    BlindCase(
        CHECK,
        "numpy_array",
        cm_numpy,
        "mistake",
        "I returned np.tril of a bool array, a NumPy array instead of a tensor.",
    ),
    BlindCase(
        CHECK,
        "comparison_reversed",
        cm_compare_reversed,
        "mistake",
        "I compared key >= query instead of key <= query, which is the transpose.",
    ),
    BlindCase(
        CHECK,
        "long_mask",
        cm_int_long,
        "mistake",
        "I returned the comparison as .long().",
    ),
    BlindCase(
        CHECK,
        "arange_comparison",
        cm_arange_compare,
        "correct",
        "query index >= key index with two broadcast aranges.",
    ),
    BlindCase(
        CHECK,
        "not_strict_upper",
        cm_not_upper,
        "correct",
        "The negation of triu(diagonal=1); an optional device argument.",
    ),
    BlindCase(CHECK, "double_loop", cm_loops, "correct", "Two Python loops filling True."),
    BlindCase(
        CHECK,
        "float_tril_then_bool",
        cm_float_then_bool,
        "correct",
        "tril of float ones, converted with .bool().",
    ),
]
