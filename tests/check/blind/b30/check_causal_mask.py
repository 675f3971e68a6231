"""Blind set B30, check_causal_mask (chapter 12): the (T, T) causal mask, as readers write it."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_causal_mask"


# ---------------------------------------------------------------- mistakes


def cm_upper(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu()


def cm_true_on_future(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)  # the positions to block


def cm_diagonal_excluded(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=-1)  # strictly the past


def cm_one_step_ahead(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=1)


def cm_float(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))


def cm_pytorch_float_mask(T: int) -> Tensor:
    return nn.Transformer.generate_square_subsequent_mask(T)  # 0 and -inf


def cm_with_batch_axis(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril().unsqueeze(0)  # (1, T, T) for the batch


def cm_uint8(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.uint8))


def cm_numpy(T: int) -> Tensor:
    return np.tri(T, dtype=bool)


_CACHE: dict[str, Tensor] = {}


def cm_cached_once(T: int) -> Tensor:
    if "mask" not in _CACHE:  # build it once, it never changes
        _CACHE["mask"] = torch.ones(T, T, dtype=torch.bool).tril()
    return _CACHE["mask"]


def cm_compare_wrong_way(T: int) -> Tensor:
    i = torch.arange(T)
    return i[None, :] >= i[:, None]  # key >= query


def cm_python_list(T: int) -> list[list[bool]]:
    return [[s <= t for s in range(T)] for t in range(T)]


# ---------------------------------------------------------------- correct variants


def cm_arange_compare(T: int) -> Tensor:
    pos = torch.arange(T)
    return pos.unsqueeze(1) >= pos.unsqueeze(0)  # query t sees key s when s <= t


def cm_not_future(T: int, device: torch.device | str | None = None) -> Tensor:
    future = torch.ones(T, T, dtype=torch.bool, device=device).triu(1)
    return ~future


def cm_sliced_from_table(T: int) -> Tensor:
    """One big lower triangle built once; each call takes a fresh copy of its corner."""
    if "table" not in _CACHE or _CACHE["table"].shape[0] < T:
        _CACHE["table"] = torch.from_numpy(np.tri(max(T, 64), dtype=bool))
    return _CACHE["table"][:T, :T].clone()


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
        cm_true_on_future,
        "mistake",
        "I made the mask True on the future positions, the ones to block.",
    ),
    BlindCase(
        CHECK,
        "diagonal_excluded",
        cm_diagonal_excluded,
        "mistake",
        "I used tril(diagonal=-1), so a query cannot attend to itself.",
    ),
    BlindCase(
        CHECK,
        "one_step_into_future",
        cm_one_step_ahead,
        "mistake",
        "I used tril(diagonal=1), which lets each query see the next key too.",
    ),
    BlindCase(
        CHECK,
        "float_ones",
        cm_float,
        "mistake",
        "I returned torch.tril(torch.ones(T, T)), floats and not booleans.",
    ),
    BlindCase(
        CHECK,
        "pytorch_additive_mask",
        cm_pytorch_float_mask,
        "mistake",
        "I returned nn.Transformer.generate_square_subsequent_mask(T), a float mask of 0 and -inf.",
    ),
    BlindCase(
        CHECK,
        "batch_axis_added",
        cm_with_batch_axis,
        "mistake",
        "I returned it as (1, T, T) so that it matches a batch.",
    ),
    BlindCase(
        CHECK,
        "uint8",
        cm_uint8,
        "mistake",
        "I built the ones as torch.uint8 and returned that.",
    ),
    BlindCase(
        CHECK,
        "numpy_array",
        cm_numpy,
        "mistake",
        "I returned np.tri(T, dtype=bool), a NumPy array, not a tensor.",
    ),
    BlindCase(
        CHECK,
        "cached_first_length",
        cm_cached_once,
        "mistake",
        "I cached the mask on the first call and return the same one for every T.",
    ),
    BlindCase(
        CHECK,
        "compared_the_wrong_way",
        cm_compare_wrong_way,
        "mistake",
        "I compared positions as key >= query, which is the transpose.",
    ),
    BlindCase(
        CHECK,
        "python_list",
        cm_python_list,
        "mistake",
        "I returned a nested Python list of booleans.",
    ),
    BlindCase(
        CHECK,
        "arange_comparison",
        cm_arange_compare,
        "correct",
        "Positions compared with arange: query t may see key s when s <= t.",
    ),
    BlindCase(
        CHECK,
        "not_the_future",
        cm_not_future,
        "correct",
        "~triu(1): everything that is not the future; an optional device argument.",
    ),
    BlindCase(
        CHECK,
        "corner_of_a_table",
        cm_sliced_from_table,
        "correct",
        "A large np.tri table built once and a copy of its T x T corner for each call.",
    ),
]
