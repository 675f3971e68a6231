"""Blind set B23, check_sinusoidal_encoding (chapter 10): the sine/cosine table as readers build it."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


def _angles(positions: Tensor, inv_freq: Tensor) -> Tensor:
    return positions[:, None] * inv_freq[None, :]  # (max_len, d_model / 2)


def _interleave(sin: Tensor, cos: Tensor) -> Tensor:
    pe = torch.zeros(sin.shape[0], 2 * sin.shape[1], dtype=torch.float64)
    pe[:, 0::2] = sin
    pe[:, 1::2] = cos
    return pe.float()


def _positions(max_len: int) -> Tensor:
    return torch.arange(max_len, dtype=torch.float64)


def _inv_freq(d_model: int) -> Tensor:
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    return 10000.0 ** (-j2 / d_model)


# ---------------------------------------------------------------- mistakes


def pe_sin_cos_swapped(max_len: int, d_model: int) -> Tensor:
    a = _angles(_positions(max_len), _inv_freq(d_model))
    return _interleave(torch.cos(a), torch.sin(a))  # cos in the even columns


def pe_positions_from_one(max_len: int, d_model: int) -> Tensor:
    positions = torch.arange(1, max_len + 1, dtype=torch.float64)  # the first word is word 1
    a = _angles(positions, _inv_freq(d_model))
    return _interleave(torch.sin(a), torch.cos(a))


def pe_exponent_j_not_2j(max_len: int, d_model: int) -> Tensor:
    j = torch.arange(d_model // 2, dtype=torch.float64)  # the pair index j
    inv_freq = 10000.0 ** (-j / d_model)
    a = _angles(_positions(max_len), inv_freq)
    return _interleave(torch.sin(a), torch.cos(a))


def pe_column_index_exponent(max_len: int, d_model: int) -> Tensor:
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pos = _positions(max_len)[:, None]
    col = torch.arange(d_model, dtype=torch.float64)[None, :]
    angle = pos / 10000.0 ** (col / d_model)  # the column's own index in the exponent
    pe[:, 0::2] = torch.sin(angle[:, 0::2])
    pe[:, 1::2] = torch.cos(angle[:, 1::2])
    return pe.float()


def pe_positive_exponent(max_len: int, d_model: int) -> Tensor:
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    a = _angles(_positions(max_len), 10000.0 ** (j2 / d_model))
    return _interleave(torch.sin(a), torch.cos(a))


def pe_log10(max_len: int, d_model: int) -> Tensor:
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    inv_freq = torch.exp(-math.log10(10000.0) * j2 / d_model)  # exp(-log 10000 * 2j / d)
    a = _angles(_positions(max_len), inv_freq)
    return _interleave(torch.sin(a), torch.cos(a))


def pe_halves(max_len: int, d_model: int) -> Tensor:
    a = _angles(_positions(max_len), _inv_freq(d_model))
    return torch.cat([torch.sin(a), torch.cos(a)], dim=-1).float()  # sines, then cosines


def pe_double_two(max_len: int, d_model: int) -> Tensor:
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)  # 2j
    inv_freq = 10000.0 ** (-2 * j2 / d_model)  # w_j = 10000^(-2j/d)
    a = _angles(_positions(max_len), inv_freq)
    return _interleave(torch.sin(a), torch.cos(a))


def pe_transposed(max_len: int, d_model: int) -> Tensor:
    a = _angles(_positions(max_len), _inv_freq(d_model))
    return _interleave(torch.sin(a), torch.cos(a)).T  # one column per position


def pe_linspace_positions(max_len: int, d_model: int) -> Tensor:
    positions = torch.linspace(0, max_len, max_len, dtype=torch.float64)
    a = _angles(positions, _inv_freq(d_model))
    return _interleave(torch.sin(a), torch.cos(a))


def pe_integer_division(max_len: int, d_model: int) -> Tensor:
    j = torch.arange(d_model // 2)
    inv_freq = 10000.0 ** (-(2 * j // d_model)).double()  # 2j // d, integers
    a = _angles(_positions(max_len), inv_freq)
    return _interleave(torch.sin(a), torch.cos(a))


def pe_sine_twice(max_len: int, d_model: int) -> Tensor:
    a = _angles(_positions(max_len), _inv_freq(d_model))
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(a)
    pe[:, 1::2] = torch.sin(a)  # copied the line above
    return pe


# ---------------------------------------------------------------- correct variants


def pe_loop(max_len: int, d_model: int) -> Tensor:
    pe = torch.zeros(max_len, d_model)
    for i in range(max_len):
        for j in range(d_model // 2):
            w = 10000 ** (-2 * j / d_model)
            pe[i, 2 * j] = math.sin(i * w)
            pe[i, 2 * j + 1] = math.cos(i * w)
    return pe


def pe_stack_flatten(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    w = torch.pow(10000.0, -torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = i * w  # (max_len, d_model / 2)
    pe = torch.stack([angles.sin(), angles.cos()], dim=-1)  # (max_len, d_model / 2, 2)
    return pe.flatten(start_dim=1).to(torch.float32)


def pe_numpy(max_len: int, d_model: int) -> Tensor:
    pos = np.arange(max_len)[:, None]
    dims = np.arange(d_model)[None, :]
    rates = 1 / np.power(10000, (2 * (dims // 2)) / np.float64(d_model))
    angles = pos * rates
    angles[:, 0::2] = np.sin(angles[:, 0::2])
    angles[:, 1::2] = np.cos(angles[:, 1::2])
    return torch.from_numpy(angles).float()


CASES = [
    BlindCase(
        CHECK,
        "sin_cos_swapped",
        pe_sin_cos_swapped,
        "mistake",
        "I put the cosines in the even columns and the sines in the odd ones",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        pe_positions_from_one,
        "mistake",
        "I numbered the positions from 1",
    ),
    BlindCase(
        CHECK,
        "exponent_j_not_2j",
        pe_exponent_j_not_2j,
        "mistake",
        "I used the pair index j in the exponent instead of 2j",
    ),
    BlindCase(
        CHECK,
        "column_index_exponent",
        pe_column_index_exponent,
        "mistake",
        "I used each column's own index in the exponent, so cosines have another frequency",
    ),
    BlindCase(
        CHECK,
        "positive_exponent",
        pe_positive_exponent,
        "mistake",
        "I wrote 10000^(2j/d) without the minus sign",
    ),
    BlindCase(
        CHECK,
        "log10",
        pe_log10,
        "mistake",
        "I used math.log10(10000) in the exp form instead of the natural log",
    ),
    BlindCase(
        CHECK,
        "halves",
        pe_halves,
        "mistake",
        "I put all the sines in the first half and all the cosines in the second",
    ),
    BlindCase(
        CHECK,
        "double_two",
        pe_double_two,
        "mistake",
        "my j2 was already 2j and I multiplied by 2 again",
    ),
    BlindCase(
        CHECK, "transposed", pe_transposed, "mistake", "I returned the table as (d_model, max_len)"
    ),
    BlindCase(
        CHECK,
        "linspace_positions",
        pe_linspace_positions,
        "mistake",
        "I made the positions with linspace(0, max_len, max_len)",
    ),
    BlindCase(
        CHECK,
        "integer_division",
        pe_integer_division,
        "mistake",
        "I computed 2 * j // d_model on integers, so every exponent is 0",
    ),
    BlindCase(
        CHECK,
        "sine_twice",
        pe_sine_twice,
        "mistake",
        "I filled the odd columns with the sine as well",
    ),
    BlindCase(CHECK, "loop", pe_loop, "correct", "two Python loops with math.sin and math.cos"),
    BlindCase(
        CHECK,
        "stack_flatten",
        pe_stack_flatten,
        "correct",
        "torch.pow for w_j, sin and cos stacked on a last axis, then flattened",
    ),
    BlindCase(
        CHECK,
        "numpy",
        pe_numpy,
        "correct",
        "the NumPy recipe with 2 * (i // 2) per column, converted to a float tensor",
    ),
]
