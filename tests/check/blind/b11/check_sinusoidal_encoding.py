"""Blind set B11, check_sinusoidal_encoding (chapter 10): the sinusoidal table as readers write it."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


def _angles(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    return pos * 10000.0 ** (-j2 / d_model)  # (max_len, D/2)


def _interleave(sin: Tensor, cos: Tensor) -> Tensor:
    pe = torch.empty(sin.shape[0], 2 * sin.shape[1], dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = sin, cos
    return pe.float()


# ---------------------------------------------------------------- mistakes


def pe_cos_first(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return _interleave(torch.cos(a), torch.sin(a))


def pe_positions_from_one(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(1, max_len + 1, dtype=torch.float64).unsqueeze(1)  # the first word is 1
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    a = pos * 10000.0 ** (-j2 / d_model)
    return _interleave(a.sin(), a.cos())


def pe_first_row_left_zero(max_len: int, d_model: int) -> Tensor:
    pe = torch.zeros(max_len, d_model)
    for pos in range(1, max_len):  # position 0 has nothing to encode
        for i in range(0, d_model, 2):
            w = 10000 ** (-i / d_model)
            pe[pos, i] = math.sin(pos * w)
            pe[pos, i + 1] = math.cos(pos * w)
    return pe


def pe_j_not_2j(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j = torch.arange(d_model // 2, dtype=torch.float64)  # j = 0 .. D/2 - 1
    a = pos * 10000.0 ** (-j / d_model)
    return _interleave(a.sin(), a.cos())


def pe_column_index_doubled(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    col = torch.arange(0, d_model, 2, dtype=torch.float64)  # the even columns 2j
    a = pos * 10000.0 ** (-2 * col / d_model)  # the formula says 2j
    return _interleave(a.sin(), a.cos())


def pe_positive_exponent(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    a = pos / 10000.0 ** (-j2 / d_model)
    return _interleave(a.sin(), a.cos())


def pe_halves(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return torch.cat([a.sin(), a.cos()], dim=-1).float()  # sines, then cosines


def pe_integer_division(max_len: int, d_model: int) -> Tensor:
    pe = torch.zeros(max_len, d_model)
    pos = torch.arange(max_len).unsqueeze(1)
    j = torch.arange(0, d_model, 2)
    freq = torch.pow(10000.0, -(2 * j // d_model))  # integer tensors
    pe[:, 0::2] = torch.sin(pos * freq)
    pe[:, 1::2] = torch.cos(pos * freq)
    return pe


def pe_transposed(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return _interleave(a.sin(), a.cos()).T  # one column per position


def pe_own_frequency_per_column(max_len: int, d_model: int) -> Tensor:
    pe = np.zeros((max_len, d_model))
    for pos in range(max_len):
        for i in range(d_model):
            angle = pos / 10000 ** (i / d_model)  # column i, its frequency
            pe[pos, i] = np.sin(angle) if i % 2 == 0 else np.cos(angle)
    return torch.tensor(pe, dtype=torch.float32)


def pe_log10(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    w = torch.exp(-math.log10(10000.0) * j2 / d_model)  # 10000^x = exp(x log 10000)
    a = pos * w
    return _interleave(a.sin(), a.cos())


# ---------------------------------------------------------------- correct variants


def pe_python_loops(max_len: int, d_model: int) -> Tensor:
    rows = []
    for pos in range(max_len):
        row = []
        for j in range(d_model // 2):
            w = 1.0 / (10000 ** (2 * j / d_model))
            row += [math.sin(pos * w), math.cos(pos * w)]
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float32)


def pe_stack_flatten(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float32).unsqueeze(-1)
    inv_freq = torch.pow(10000.0, -torch.arange(0, d_model, 2).float() / d_model)
    a = pos * inv_freq
    return torch.stack([a.sin(), a.cos()], dim=-1).flatten(-2)  # sin, cos interleaved


def pe_numpy_with_base(max_len: int, d_model: int, base: float = 10000.0) -> Tensor:
    """numpy, an outer product, and the base as an extra argument."""
    w = np.exp(-np.log(base) * np.arange(0, d_model, 2) / d_model)
    a = np.outer(np.arange(max_len), w)
    pe = np.zeros((max_len, d_model), dtype=np.float64)
    pe[:, ::2] = np.sin(a)
    pe[:, 1::2] = np.cos(a)
    return torch.from_numpy(pe).to(torch.float32)


def pe_cos_as_shifted_sin(max_len: int, d_model: int) -> Tensor:
    """cos(x) = sin(x + pi/2): one sin over a table with a phase per column."""
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    col = torch.arange(d_model)
    w = 10000.0 ** (-(col - col % 2).double() / d_model)  # both columns of a pair share w_j
    phase = (col % 2).double() * math.pi / 2
    return torch.sin(pos * w + phase).float()


CASES = [
    BlindCase(
        CHECK,
        "cos_first",
        pe_cos_first,
        "mistake",
        "I put the cosine in the even columns and the sine in the odd ones.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        pe_positions_from_one,
        "mistake",
        "I numbered the positions 1..max_len, since the first word is word 1.",
    ),
    BlindCase(
        CHECK,
        "first_row_zero",
        pe_first_row_left_zero,
        "mistake",
        "I started from zeros and filled the rows from position 1, leaving row 0 all zeros.",
    ),
    BlindCase(
        CHECK,
        "exponent_j_over_d",
        pe_j_not_2j,
        "mistake",
        "I used w_j = 10000^(-j/d) with j = 0..d/2-1, forgetting the 2.",
    ),
    BlindCase(
        CHECK,
        "exponent_with_column_doubled",
        pe_column_index_doubled,
        "mistake",
        "My j ran over the even columns 0, 2, 4, ... and I still multiplied it by 2.",
    ),
    BlindCase(
        CHECK,
        "positive_exponent",
        pe_positive_exponent,
        "mistake",
        "I divided the position by w_j instead of multiplying, so the frequencies grow.",
    ),
    BlindCase(
        CHECK,
        "sines_then_cosines",
        pe_halves,
        "mistake",
        "I concatenated all sines then all cosines instead of interleaving them.",
    ),
    BlindCase(
        CHECK,
        "integer_division_exponent",
        pe_integer_division,
        "mistake",
        "I wrote the exponent with // on integer tensors, so it is 0 and every frequency is 1.",
    ),
    BlindCase(
        CHECK,
        "transposed",
        pe_transposed,
        "mistake",
        "I returned the table as (d_model, max_len).",
    ),
    BlindCase(
        CHECK,
        "own_frequency_per_column",
        pe_own_frequency_per_column,
        "mistake",
        "I gave every column i its own frequency 10000^(-i/d), so the cosine of a pair does not "
        "share the sine's.",
    ),
    BlindCase(
        CHECK,
        "log10_in_exp",
        pe_log10,
        "mistake",
        "I wrote 10000^x as exp(x * log10(10000)), the base-10 logarithm instead of the natural "
        "one.",
    ),
    BlindCase(
        CHECK,
        "python_loops",
        pe_python_loops,
        "correct",
        "Two Python loops with math.sin and math.cos, one pair of columns at a time.",
    ),
    BlindCase(
        CHECK,
        "stack_and_flatten_float32",
        pe_stack_flatten,
        "correct",
        "Computed in float32; stack([sin, cos], -1).flatten(-2) interleaves the columns.",
    ),
    BlindCase(
        CHECK,
        "numpy_outer_with_base",
        pe_numpy_with_base,
        "correct",
        "numpy with np.outer, converted at the end; an extra base=10000.0 argument.",
    ),
    BlindCase(
        CHECK,
        "cos_as_phase_shifted_sin",
        pe_cos_as_shifted_sin,
        "correct",
        "One sin with a phase pi/2 on the odd columns, since cos(x) = sin(x + pi/2).",
    ),
]
