"""Blind set B8, check_sinusoidal_encoding (chapter 10): the sinusoidal position table."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


def _angles(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    return pos * 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)


# ---------------------------------------------------------------- mistakes


def sin_cos_swapped(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.cos(a), torch.sin(a)
    return pe.float()


def positions_from_one(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(1, max_len + 1, dtype=torch.float64)[:, None]  # "the first word"
    a = pos * 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(a), torch.cos(a)
    return pe.float()


def exponent_without_the_two(max_len: int, d_model: int) -> Tensor:
    j = torch.arange(d_model // 2, dtype=torch.float64)
    a = torch.arange(max_len, dtype=torch.float64)[:, None] * 10000.0 ** (-j / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(a), torch.cos(a)
    return pe.float()


def frequencies_grow(max_len: int, d_model: int) -> Tensor:
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    a = torch.arange(max_len, dtype=torch.float64)[:, None] * torch.exp(
        math.log(10000.0) * j2 / d_model  # lost the minus sign
    )
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(a), torch.cos(a)
    return pe.float()


def halves_not_interleaved(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return torch.cat([torch.sin(a), torch.cos(a)], dim=1).float()  # tensor2tensor layout


def own_exponent_per_column(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(d_model, dtype=torch.float64)
    a = torch.arange(max_len, dtype=torch.float64)[:, None] / 10000.0 ** (i / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(a[:, 0::2]), torch.cos(a[:, 1::2])
    return pe.float()


def returns_float64(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(a), torch.cos(a)
    return pe  # forgot .float()


def table_transposed(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(a), torch.cos(a)
    return pe.T.float()  # (d_model, max_len), as in the heatmap


def integer_division_in_exponent(max_len: int, d_model: int) -> Tensor:
    pe = np.zeros((max_len, d_model))
    for pos in range(max_len):
        for i in range(0, d_model, 2):
            angle = pos / 10000 ** (2 * (i // 2) // d_model)  # // where / was meant
            pe[pos, i] = math.sin(angle)
            pe[pos, i + 1] = math.cos(angle)
    return torch.tensor(pe, dtype=torch.float32)


def exponent_uses_max_len(max_len: int, d_model: int) -> Tensor:
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    a = torch.arange(max_len, dtype=torch.float64)[:, None] * 10000.0 ** (-j2 / max_len)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(a), torch.cos(a)
    return pe.float()


def double_index_loop(max_len: int, d_model: int) -> Tensor:
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    for pos in range(max_len):
        for i in range(0, d_model, 2):
            pe[pos, i] = math.sin(pos / 10000 ** ((2 * i) / d_model))  # i is already 2j
            pe[pos, i + 1] = math.cos(pos / 10000 ** ((2 * i) / d_model))
    return pe.float()


# ---------------------------------------------------------------- correct variants


def stack_and_flatten(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return torch.stack([a.sin(), a.cos()], dim=-1).flatten(1).float()  # sin, cos, sin, ...


def python_loops(max_len: int, d_model: int) -> Tensor:
    pe = torch.empty(max_len, d_model, dtype=torch.float64)
    for pos in range(max_len):
        for j in range(d_model // 2):
            w = 10000 ** (-2 * j / d_model)
            pe[pos, 2 * j] = math.sin(pos * w)
            pe[pos, 2 * j + 1] = math.cos(pos * w)
    return pe.to(torch.float32)


def numpy_outer(max_len: int, d_model: int) -> Tensor:
    w = np.power(10000.0, -np.arange(0, d_model, 2) / d_model)
    a = np.outer(np.arange(max_len), w)
    pe = np.empty((max_len, d_model // 2, 2))
    pe[..., 0], pe[..., 1] = np.sin(a), np.cos(a)
    return torch.from_numpy(pe.reshape(max_len, d_model)).float()


CASES = [
    BlindCase(
        CHECK,
        "sin_cos_swapped",
        sin_cos_swapped,
        "mistake",
        "I put the cosines in the even columns and the sines in the odd ones",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        positions_from_one,
        "mistake",
        "I numbered the positions from 1 (arange(1, max_len + 1)), so no row is position 0",
    ),
    BlindCase(
        CHECK,
        "exponent_without_the_two",
        exponent_without_the_two,
        "mistake",
        "I used j / d_model with j = 0..d/2-1 in the exponent, forgetting the 2 in 2j/d",
    ),
    BlindCase(
        CHECK,
        "frequencies_grow",
        frequencies_grow,
        "mistake",
        "I wrote exp(log(10000) * 2j / d) without the minus sign, so frequencies grow",
    ),
    BlindCase(
        CHECK,
        "halves_not_interleaved",
        halves_not_interleaved,
        "mistake",
        "I concatenated all sines then all cosines instead of interleaving them",
    ),
    BlindCase(
        CHECK,
        "own_exponent_per_column",
        own_exponent_per_column,
        "mistake",
        "I gave each column i its own exponent i/d, so the cosine column 2j+1 uses "
        "(2j+1)/d instead of sharing 2j/d with its sine",
    ),
    BlindCase(
        CHECK,
        "returns_float64",
        returns_float64,
        "mistake",
        "I computed in float64 and forgot to cast the table back to float32",
    ),
    BlindCase(
        CHECK,
        "table_transposed",
        table_transposed,
        "mistake",
        "I returned the table as (d_model, max_len), the way the heatmap shows it",
    ),
    BlindCase(
        CHECK,
        "integer_division_in_exponent",
        integer_division_in_exponent,
        "mistake",
        "in my loop I wrote 2 * (i // 2) // d_model, an integer division, so the "
        "exponent is always 0",
    ),
    BlindCase(
        CHECK,
        "exponent_uses_max_len",
        exponent_uses_max_len,
        "mistake",
        "I divided by max_len in the exponent instead of d_model",
    ),
    BlindCase(
        CHECK,
        "double_index_loop",
        double_index_loop,
        "mistake",
        "my loop steps i over the even columns and still uses 2 * i in the exponent",
    ),
    BlindCase(
        CHECK,
        "stack_and_flatten",
        stack_and_flatten,
        "correct",
        "sin and cos stacked on a last axis and flattened, which interleaves them",
    ),
    BlindCase(
        CHECK,
        "python_loops",
        python_loops,
        "correct",
        "two Python loops over positions and frequency index j, in float64",
    ),
    BlindCase(
        CHECK,
        "numpy_outer",
        numpy_outer,
        "correct",
        "NumPy outer product, written into (max_len, d/2, 2) and reshaped, then float32",
    ),
]
