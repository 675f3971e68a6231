"""Blind cases for check_sinusoidal_encoding (chapter 10)."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


def _angles(max_len, d_model, two_j):
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    return pos * 10000.0 ** (-two_j / d_model)


def _interleave(sin, cos):
    return torch.stack([sin, cos], dim=-1).flatten(-2).float()


def pe_swapped(max_len, d_model):
    a = _angles(max_len, d_model, torch.arange(0, d_model, 2, dtype=torch.float64))
    return _interleave(torch.cos(a), torch.sin(a))


def pe_positions_from_one(max_len, d_model):
    pos = torch.arange(1, max_len + 1, dtype=torch.float64)[:, None]
    a = pos * 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _interleave(torch.sin(a), torch.cos(a))


def pe_j_not_doubled(max_len, d_model):
    a = _angles(max_len, d_model, torch.arange(d_model // 2, dtype=torch.float64))  # j, not 2j
    return _interleave(torch.sin(a), torch.cos(a))


def pe_every_column_index(max_len, d_model):
    i = torch.arange(d_model, dtype=torch.float64)
    a = torch.arange(max_len, dtype=torch.float64)[:, None] * 10000.0 ** (-i / d_model)
    pe = torch.where(
        i.long() % 2 == 0, torch.sin(a), torch.cos(a)
    )  # exponent from the column itself
    return pe.float()


def pe_positive_exponent(max_len, d_model):
    two_j = torch.arange(0, d_model, 2, dtype=torch.float64)
    a = torch.arange(max_len, dtype=torch.float64)[:, None] / 10000.0 ** (-two_j / d_model)
    return _interleave(torch.sin(a), torch.cos(a))


def pe_halves(max_len, d_model):
    a = _angles(max_len, d_model, torch.arange(0, d_model, 2, dtype=torch.float64))
    return torch.cat(
        [torch.sin(a), torch.cos(a)], dim=-1
    ).float()  # sines first half, cosines second


def pe_ln_1000(max_len, d_model):
    two_j = torch.arange(0, d_model, 2, dtype=torch.float64)
    inv = torch.exp(-math.log(1000.0) * two_j / d_model)  # 1000 instead of 10000
    a = torch.arange(max_len, dtype=torch.float64)[:, None] * inv
    return _interleave(torch.sin(a), torch.cos(a))


def pe_transposed(max_len, d_model):
    a = _angles(max_len, d_model, torch.arange(0, d_model, 2, dtype=torch.float64))
    return _interleave(torch.sin(a), torch.cos(a)).T


def pe_batched(max_len, d_model):
    a = _angles(max_len, d_model, torch.arange(0, d_model, 2, dtype=torch.float64))
    return _interleave(torch.sin(a), torch.cos(a)).unsqueeze(
        0
    )  # (1, max_len, d_model) ready to add


def pe_args_swapped(d_model, max_len):
    a = _angles(max_len, d_model, torch.arange(0, d_model, 2, dtype=torch.float64))
    return _interleave(torch.sin(a), torch.cos(a))


def pe_numpy_loop(max_len: int, d_model: int) -> Tensor:
    pe = np.zeros((max_len, d_model))
    for pos in range(max_len):
        for j in range(d_model // 2):
            w = 1.0 / (10000 ** (2 * j / d_model))
            pe[pos, 2 * j] = math.sin(pos * w)
            pe[pos, 2 * j + 1] = math.cos(pos * w)
    return torch.from_numpy(pe).float()


def pe_float32_outer(max_len: int, d_model: int, base: float = 10000.0) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)
    freqs = torch.pow(base, -torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = torch.outer(pos, freqs)
    pe = torch.zeros(max_len, d_model)
    pe[:, ::2] = angles.sin()
    pe[:, 1::2] = angles.cos()
    return pe


CASES = [
    BlindCase(
        CHECK,
        "sin_cos_swapped",
        pe_swapped,
        "mistake",
        "puts the cosines in the even columns and the sines in the odd ones",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        pe_positions_from_one,
        "mistake",
        "numbers the positions from 1, so the first row is not sin(0)=0, cos(0)=1",
    ),
    BlindCase(
        CHECK,
        "exponent_j_not_2j",
        pe_j_not_doubled,
        "mistake",
        "uses 10000^(-j/d) with j = 0..d/2-1 instead of 10000^(-2j/d)",
    ),
    BlindCase(
        CHECK,
        "exponent_from_column_index",
        pe_every_column_index,
        "mistake",
        "uses the column index i itself in 10000^(-i/d), so the cosine of a pair gets a different frequency from its sine",
    ),
    BlindCase(
        CHECK,
        "positive_exponent",
        pe_positive_exponent,
        "mistake",
        "divides the position by 10000^(-2j/d) instead of multiplying, so the frequencies grow",
    ),
    BlindCase(
        CHECK,
        "sines_then_cosines_halves",
        pe_halves,
        "mistake",
        "concatenates all sines then all cosines instead of interleaving them",
    ),
    BlindCase(
        CHECK,
        "base_1000",
        pe_ln_1000,
        "mistake",
        "writes exp(-ln(1000) * 2j / d), base 1000 instead of 10000",
    ),
    BlindCase(
        CHECK,
        "transposed_table",
        pe_transposed,
        "mistake",
        "returns the table as (d_model, max_len)",
    ),
    BlindCase(
        CHECK,
        "slip_arguments_swapped",
        pe_args_swapped,
        "mistake",
        "writes the signature as (d_model, max_len), the two arguments in the other order",
    ),
    BlindCase(
        CHECK,
        "adds_batch_axis",
        pe_batched,
        "mistake",
        "returns a (1, max_len, d_model) table with a batch axis instead of (max_len, d_model)",
    ),
    BlindCase(
        CHECK,
        "numpy_double_loop",
        pe_numpy_loop,
        "correct",
        "fills a NumPy array with two Python loops and math.sin/cos, then converts to float32",
    ),
    BlindCase(
        CHECK,
        "outer_product_base_arg",
        pe_float32_outer,
        "correct",
        "uses torch.outer and torch.pow and takes an optional base=10000 argument",
    ),
]
