"""Blind set B28, check_causal_mask (chapter 12): the (T, T) causal mask as readers write it."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_causal_mask"

_BLOCK_SIZE = 64
_TABLE = torch.ones(_BLOCK_SIZE, _BLOCK_SIZE, dtype=torch.bool).tril()  # built once


# ---------------------------------------------------------------- mistakes


def causal_notes_additive(T: int) -> Tensor:
    # the notes' matrix: -inf above the diagonal, added to Q K^T
    return torch.triu(torch.full((T, T), float("-inf")), diagonal=1)


def causal_float_ones(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))


def causal_uint8(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.uint8))  # byte masks, as older code uses


def causal_one_ahead(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=1)


def causal_not_triu(T: int) -> Tensor:
    return ~torch.triu(torch.ones(T, T, dtype=torch.bool))  # not the upper triangle


def causal_batch_axis(T: int) -> Tensor:
    return torch.tril(torch.ones(1, T, T, dtype=torch.bool))  # (1, T, T) to broadcast


def causal_comparison_reversed(T: int) -> Tensor:
    i = torch.arange(T)
    return i[:, None] <= i[None, :]  # query i, key j: i <= j


def causal_size_plus_one(T: int) -> Tensor:
    positions = torch.arange(T + 1)  # positions 0..T
    return positions[None, :] <= positions[:, None]


def causal_cached_block(T: int) -> Tensor:
    return _TABLE[:T, :T]  # like a registered buffer of block_size x block_size


def causal_numpy(T: int) -> np.ndarray:
    return np.tril(np.ones((T, T), dtype=bool))


def causal_device_required(T: int, device: torch.device) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()


def causal_blocked_true(T: int) -> Tensor:
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # True = the future


# ---------------------------------------------------------------- correct variants


def causal_arange_compare(T: int) -> Tensor:
    pos = torch.arange(T)
    return pos.unsqueeze(0) <= pos.unsqueeze(1)  # key j <= query i


def causal_float_then_bool(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T)).bool()


def causal_not_strict_upper(T: int, device: torch.device | str | None = None) -> Tensor:
    return torch.triu(torch.ones(T, T, dtype=torch.bool, device=device), diagonal=1).logical_not()


def causal_tril_inplace_loop(T: int) -> Tensor:
    mask = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        mask[t, : t + 1] = True
    return mask


CASES = [
    BlindCase(
        CHECK,
        "notes_additive_matrix",
        causal_notes_additive,
        "mistake",
        "I returned the notes' additive matrix, -inf above the diagonal and 0 elsewhere, "
        "instead of a boolean mask.",
    ),
    BlindCase(
        CHECK,
        "float_tril",
        causal_float_ones,
        "mistake",
        "torch.tril(torch.ones(T, T)) without dtype=torch.bool, so it is a float mask.",
    ),
    BlindCase(
        CHECK,
        "uint8_tril",
        causal_uint8,
        "mistake",
        "I built it as a uint8 (byte) mask.",
    ),
    BlindCase(
        CHECK,
        "sees_one_ahead",
        causal_one_ahead,
        "mistake",
        "I used tril(diagonal=1), so each query also sees the next key.",
    ),
    BlindCase(
        CHECK,
        "not_triu_with_diagonal",
        causal_not_triu,
        "mistake",
        "I negated triu without diagonal=1, so the diagonal is masked too.",
    ),
    BlindCase(
        CHECK,
        "batch_axis_added",
        causal_batch_axis,
        "mistake",
        "I returned (1, T, T) so that it broadcasts over the batch.",
    ),
    BlindCase(
        CHECK,
        "comparison_reversed",
        causal_comparison_reversed,
        "mistake",
        "I compared i[:, None] <= i[None, :], which gives True on and above the diagonal.",
    ),
    BlindCase(
        CHECK,
        "one_position_too_many",
        causal_size_plus_one,
        "mistake",
        "I took the positions 0..T, so the mask is (T + 1, T + 1).",
    ),
    BlindCase(
        CHECK,
        "cropped_fixed_table",
        causal_cached_block,
        "mistake",
        "I cut the mask from a precomputed 64 x 64 table, which is too small for longer sequences.",
    ),
    BlindCase(
        CHECK,
        "numpy_tril",
        causal_numpy,
        "mistake",
        "I built it with np.tril and return a NumPy array.",
    ),
    BlindCase(
        CHECK,
        "device_argument_required",
        causal_device_required,
        "mistake",
        "I added a device argument without a default, so my_causal_mask(T) fails.",
    ),
    BlindCase(
        CHECK,
        "true_marks_future",
        causal_blocked_true,
        "mistake",
        "My mask is True above the diagonal, on the future keys to block.",
    ),
    BlindCase(
        CHECK,
        "arange_comparison",
        causal_arange_compare,
        "correct",
        "Compare positions: True where the key j <= the query i.",
    ),
    BlindCase(
        CHECK,
        "float_tril_to_bool",
        causal_float_then_bool,
        "correct",
        "torch.tril of float ones, converted with .bool().",
    ),
    BlindCase(
        CHECK,
        "not_strict_upper_with_device",
        causal_not_strict_upper,
        "correct",
        "The logical not of triu(diagonal=1); an extra device argument that defaults to None.",
    ),
    BlindCase(
        CHECK,
        "row_loop",
        causal_tril_inplace_loop,
        "correct",
        "A loop that sets the first t + 1 entries of row t of a bool zeros matrix.",
    ),
]
