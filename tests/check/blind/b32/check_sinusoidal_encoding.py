"""Blind set B32, check_sinusoidal_encoding (chapter 10): the sinusoidal position table."""

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


def pe_halves(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return torch.cat([a.sin(), a.cos()], dim=-1).float()  # sines first half, cosines second


def pe_positions_from_one(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(1, max_len + 1, dtype=torch.float64)[:, None]  # position 1 first
    a = pos * 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = a.sin(), a.cos()
    return pe.float()


def pe_j_not_2j(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j = torch.arange(d_model // 2, dtype=torch.float64)
    a = pos * 10000.0 ** (-j / d_model)  # j / d instead of 2j / d
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = a.sin(), a.cos()
    return pe.float()


def pe_positive_exponent(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    a = pos * 10000.0 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = a.sin(), a.cos()
    return pe.float()


def pe_log10(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    two_j = torch.arange(0, d_model, 2, dtype=torch.float64)
    a = pos * torch.exp(-math.log10(10000.0) * two_j / d_model)  # log10 where ln belongs
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = a.sin(), a.cos()
    return pe.float()


def pe_integer_exponent(max_len: int, d_model: int) -> Tensor:
    pe = torch.zeros(max_len, d_model)
    for i in range(max_len):
        for j in range(d_model // 2):
            w = 10000 ** (-(2 * j // d_model))  # integer division: always 10000 ** 0
            pe[i, 2 * j] = math.sin(i * w)
            pe[i, 2 * j + 1] = math.cos(i * w)
    return pe


def pe_own_column_frequency(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    cols = torch.arange(d_model, dtype=torch.float64)
    a = pos * 10000.0 ** (-cols / d_model)  # every column its own frequency
    pe = a.sin()
    pe[:, 1::2] = a[:, 1::2].cos()  # so the cosine uses 10000^(-(2j+1)/d)
    return pe.float()


def pe_d_model_512(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    a = pos * 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / 512)  # the paper's d
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = a.sin(), a.cos()
    return pe.float()


def pe_transposed(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = a.sin(), a.cos()
    return pe.T.float()  # (d_model, max_len), one column per position


def pe_float64(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = a.sin(), a.cos()
    return pe  # kept float64 for accuracy


def pe_normalized_positions(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None] / max_len  # positions in [0, 1)
    a = pos * 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = a.sin(), a.cos()
    return pe.float()


def pe_inclusive_range(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len + 1, dtype=torch.float64)[:, None]  # positions 0 .. max_len
    a = pos * 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.zeros(max_len + 1, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = a.sin(), a.cos()
    return pe.float()


def pe_cos_even(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = a.cos(), a.sin()
    return pe.float()


def pe_sin_only(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = a.sin(), a.sin() + math.pi / 2  # cos(x) = sin(x + pi/2), I thought
    return pe.float()


# ---------------------------------------------------------------- correct variants


def pe_loop(max_len: int, d_model: int) -> Tensor:
    pe = torch.zeros(max_len, d_model)
    for i in range(max_len):
        for j in range(d_model // 2):
            w = 10000.0 ** (-2 * j / d_model)
            pe[i, 2 * j] = math.sin(i * w)
            pe[i, 2 * j + 1] = math.cos(i * w)
    return pe


def pe_stack_interleave(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)  # (L, D/2)
    return torch.stack([a.sin(), a.cos()], dim=-1).flatten(-2).to(torch.float32)  # s0 c0 s1 c1


def pe_numpy(max_len: int, d_model: int, base: float = 10000.0) -> Tensor:
    pos = np.arange(max_len)[:, None]
    i = np.arange(d_model)[None, :]
    angle = pos / np.power(base, (2 * (i // 2)) / d_model)
    angle[:, 0::2] = np.sin(angle[:, 0::2])
    angle[:, 1::2] = np.cos(angle[:, 1::2])
    return torch.from_numpy(angle).float()


def pe_complex_exponential(max_len: int, d_model: int) -> Tensor:
    z = torch.polar(
        torch.ones(max_len, d_model // 2, dtype=torch.float64), _angles(max_len, d_model)
    )
    return torch.view_as_real(z)[..., [1, 0]].reshape(max_len, d_model).float()  # (sin, cos)


CASES = [
    BlindCase(
        CHECK,
        "halves_not_interleaved",
        pe_halves,
        "mistake",
        "I put all the sines in the first half of the columns and the cosines in the second.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        pe_positions_from_one,
        "mistake",
        "I numbered the positions from 1, so row 0 is not sin(0), cos(0).",
    ),
    BlindCase(
        CHECK,
        "j_over_d",
        pe_j_not_2j,
        "mistake",
        "I used 10000^(-j/d) with j the pair index, forgetting the factor 2.",
    ),
    BlindCase(
        CHECK,
        "positive_exponent",
        pe_positive_exponent,
        "mistake",
        "I wrote 10000^(2j/d) without the minus, so the frequencies grow.",
    ),
    BlindCase(
        CHECK,
        "log10_for_ln",
        pe_log10,
        "mistake",
        "I computed the frequency as exp(-log10(10000) * 2j / d) instead of the natural log.",
    ),
    BlindCase(
        CHECK,
        "integer_division_exponent",
        pe_integer_exponent,
        "mistake",
        "I wrote 10000 ** (-(2 * j // d_model)); the integer division makes every frequency 1.",
    ),
    BlindCase(
        CHECK,
        "own_column_frequency",
        pe_own_column_frequency,
        "mistake",
        "I gave every column k the frequency 10000^(-k/d), so the cosine of pair j uses 2j + 1.",
    ),
    BlindCase(
        CHECK,
        "d_512_hard_coded",
        pe_d_model_512,
        "mistake",
        "I divided the exponent by 512, the paper's d_model, instead of d_model.",
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
        "float64_table",
        pe_float64,
        "mistake",
        "I returned the table in float64 instead of float32.",
    ),
    BlindCase(
        CHECK,
        "normalized_positions",
        pe_normalized_positions,
        "mistake",
        "I divided the positions by max_len first.",
    ),
    BlindCase(
        CHECK,
        "inclusive_range",
        pe_inclusive_range,
        "mistake",
        "I made positions 0..max_len inclusive, one row too many.",
    ),
    BlindCase(
        CHECK,
        "cos_in_even_columns",
        pe_cos_even,
        "mistake",
        "I put the cosines in the even columns and the sines in the odd ones.",
    ),
    BlindCase(
        CHECK,
        "shift_outside_sin",
        pe_sin_only,
        "mistake",
        "For the cosine I wrote sin(x) + pi/2 instead of sin(x + pi/2).",
    ),
    BlindCase(
        CHECK,
        "double_loop",
        pe_loop,
        "correct",
        "Two Python loops with math.sin and math.cos.",
    ),
    BlindCase(
        CHECK,
        "stack_interleave",
        pe_stack_interleave,
        "correct",
        "stack([sin, cos], -1).flatten(-2) to interleave the columns.",
    ),
    BlindCase(
        CHECK,
        "numpy_with_base",
        pe_numpy,
        "correct",
        "numpy with 2 * (i // 2) for each column's exponent; an extra base argument.",
    ),
    BlindCase(
        CHECK,
        "complex_exponential",
        pe_complex_exponential,
        "correct",
        "exp(i * angle) with torch.polar; the imaginary and real parts are the sine and cosine.",
    ),
]
