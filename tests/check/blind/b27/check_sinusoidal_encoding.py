"""Blind set B27, check_sinusoidal_encoding (chapter 10): the sinusoidal position table as readers
write it."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


def _table(angles: Tensor) -> Tensor:
    """Interleave sin and cos of ``angles`` (max_len, d/2) into (max_len, d), float32."""
    pe = torch.empty(angles.shape[0], 2 * angles.shape[1], dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe.float()


def _positions(max_len: int) -> Tensor:
    return torch.arange(max_len, dtype=torch.float64)[:, None]  # (max_len, 1)


# ---------------------------------------------------------------- mistakes


def pe_frequency_per_column(max_len: int, d_model: int) -> Tensor:
    col = torch.arange(d_model, dtype=torch.float64)  # the column index i
    angles = _positions(max_len) / 10000 ** (col / d_model)  # pos / 10000^(i / d)
    pe = torch.where(col.long() % 2 == 0, torch.sin(angles), torch.cos(angles))
    return pe.float()


def pe_two_j_doubled(max_len: int, d_model: int) -> Tensor:
    j = torch.arange(0, d_model, 2, dtype=torch.float64)  # j = 0, 2, 4, ...
    return _table(_positions(max_len) * 10000 ** (-2 * j / d_model))


def pe_positive_exponent(max_len: int, d_model: int) -> Tensor:
    two_j = torch.arange(0, d_model, 2, dtype=torch.float64)
    return _table(_positions(max_len) * 10000 ** (two_j / d_model))  # w_j = 10000^(2j/d)


def pe_halves_not_interleaved(max_len: int, d_model: int) -> Tensor:
    two_j = torch.arange(0, d_model, 2, dtype=torch.float64)
    angles = _positions(max_len) * torch.exp(-math.log(10000.0) * two_j / d_model)
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1).float()  # [sin | cos]


def pe_log10(max_len: int, d_model: int) -> Tensor:
    two_j = torch.arange(0, d_model, 2, dtype=torch.float64)
    inv_freq = torch.exp(-math.log10(10000.0) * two_j / d_model)  # log of 10000
    return _table(_positions(max_len) * inv_freq)


def pe_integer_division(max_len: int, d_model: int) -> Tensor:
    j = torch.arange(d_model // 2)
    exponent = (2 * j) // d_model  # 2j / d
    return _table(_positions(max_len) / 10000.0**exponent)


def pe_batch_axis(max_len: int, d_model: int) -> Tensor:
    two_j = torch.arange(0, d_model, 2, dtype=torch.float64)
    pe = _table(_positions(max_len) * 10000 ** (-two_j / d_model))
    return pe.unsqueeze(0)  # (1, max_len, d_model), ready to add to (B, T, D)


def pe_transposed(max_len: int, d_model: int) -> Tensor:
    two_j = torch.arange(0, d_model, 2, dtype=torch.float64)[:, None]  # (d/2, 1)
    angles = torch.arange(max_len, dtype=torch.float64)[None, :] * 10000 ** (-two_j / d_model)
    pe = torch.empty(d_model, max_len)
    pe[0::2] = torch.sin(angles).float()  # one row per dimension
    pe[1::2] = torch.cos(angles).float()
    return pe


def pe_divided_by_half_d(max_len: int, d_model: int) -> Tensor:
    j = torch.arange(d_model // 2, dtype=torch.float64)
    return _table(_positions(max_len) / 10000 ** (j / (d_model // 2 - 1)))  # j runs 0..d/2 - 1


def pe_linspace_positions(max_len: int, d_model: int) -> Tensor:
    positions = torch.linspace(0, max_len, max_len, dtype=torch.float64)[:, None]  # 0 .. max_len
    two_j = torch.arange(0, d_model, 2, dtype=torch.float64)
    return _table(positions * 10000 ** (-two_j / d_model))


def pe_numpy_array(max_len: int, d_model: int) -> np.ndarray:
    two_j = np.arange(0, d_model, 2)
    angles = np.arange(max_len)[:, None] / np.power(10000.0, two_j / d_model)
    pe = np.zeros((max_len, d_model), dtype=np.float32)
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles)
    return pe


# ---------------------------------------------------------------- correct variants


def pe_numpy_then_torch(max_len: int, d_model: int) -> Tensor:
    """The Annotated-Transformer layout in NumPy float64, then converted."""
    pos = np.arange(max_len)[:, np.newaxis]
    div = np.exp(np.arange(0, d_model, 2) * -(np.log(10000.0) / d_model))
    pe = np.zeros((max_len, d_model))
    pe[:, 0::2] = np.sin(pos * div)
    pe[:, 1::2] = np.cos(pos * div)
    return torch.tensor(pe, dtype=torch.float32)


def pe_stack_and_flatten(max_len: int, d_model: int) -> Tensor:
    """sin and cos stacked on a last axis of 2 and flattened, which interleaves them."""
    j = torch.arange(d_model // 2, dtype=torch.float64)
    w = 1.0 / (10000.0 ** (j / (d_model / 2)))  # 10000^(-j / (d/2)) = 10000^(-2j/d)
    angles = torch.outer(torch.arange(max_len, dtype=torch.float64), w)
    return torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(1).to(torch.float32)


def pe_double_loop(max_len: int, d_model: int) -> Tensor:
    """The formula entry by entry with the math module."""
    pe = torch.zeros(max_len, d_model)
    for i in range(max_len):
        for j in range(d_model // 2):
            w = 10000 ** (-2 * j / d_model)
            pe[i, 2 * j] = math.sin(i * w)
            pe[i, 2 * j + 1] = math.cos(i * w)
    return pe


def pe_float32_throughout(max_len: int, d_model: int) -> Tensor:
    """float32 from start to end, as most code does."""
    position = torch.arange(max_len).unsqueeze(1).float()
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


CASES = [
    BlindCase(
        CHECK,
        "frequency_per_column",
        pe_frequency_per_column,
        "mistake",
        "I used 10000^(i / d) with i the column itself, so each cosine column gets its own "
        "frequency instead of sharing its sine's.",
    ),
    BlindCase(
        CHECK,
        "two_j_doubled",
        pe_two_j_doubled,
        "mistake",
        "I took j from arange(0, d, 2), which is already 2j, and multiplied by 2 again.",
    ),
    BlindCase(
        CHECK,
        "positive_exponent",
        pe_positive_exponent,
        "mistake",
        "I wrote 10000 ** (2j / d) and multiplied, forgetting the minus sign of the exponent.",
    ),
    BlindCase(
        CHECK,
        "sin_half_then_cos_half",
        pe_halves_not_interleaved,
        "mistake",
        "I concatenated all the sines, then all the cosines, instead of interleaving them.",
    ),
    BlindCase(
        CHECK,
        "log10_in_exp",
        pe_log10,
        "mistake",
        "I wrote exp(-log10(10000) * 2j / d), using log10 where the natural log belongs.",
    ),
    BlindCase(
        CHECK,
        "integer_division_exponent",
        pe_integer_division,
        "mistake",
        "I computed the exponent as (2 * j) // d_model with integers, which is always 0.",
    ),
    BlindCase(
        CHECK,
        "extra_batch_axis",
        pe_batch_axis,
        "mistake",
        "I returned (1, max_len, d_model) so it adds straight to a batch.",
    ),
    BlindCase(
        CHECK,
        "dimensions_on_rows",
        pe_transposed,
        "mistake",
        "I built the table with one row per dimension, (d_model, max_len).",
    ),
    BlindCase(
        CHECK,
        "divided_by_half_d_minus_one",
        pe_divided_by_half_d,
        "mistake",
        "I wrote the exponent as j / (d/2 - 1), so the last frequency is exactly 1/10000.",
    ),
    BlindCase(
        CHECK,
        "linspace_positions",
        pe_linspace_positions,
        "mistake",
        "I made the positions with torch.linspace(0, max_len, max_len), which are not the "
        "integers 0 .. max_len - 1.",
    ),
    BlindCase(
        CHECK,
        "returns_numpy",
        pe_numpy_array,
        "mistake",
        "I built the table in NumPy and returned the array without turning it into a tensor.",
    ),
    BlindCase(
        CHECK,
        "numpy_then_tensor",
        pe_numpy_then_torch,
        "correct",
        "NumPy in float64 with div = exp(-(log 10000 / d) 2j), converted to a float32 tensor.",
    ),
    BlindCase(
        CHECK,
        "stack_and_flatten",
        pe_stack_and_flatten,
        "correct",
        "torch.outer for the angles, stack([sin, cos], -1).flatten(1) to interleave; the "
        "exponent written as j / (d/2).",
    ),
    BlindCase(
        CHECK,
        "double_loop_math",
        pe_double_loop,
        "correct",
        "Two loops and math.sin / math.cos, entry by entry.",
    ),
    BlindCase(
        CHECK,
        "float32_throughout",
        pe_float32_throughout,
        "correct",
        "The whole table computed in float32.",
    ),
]
