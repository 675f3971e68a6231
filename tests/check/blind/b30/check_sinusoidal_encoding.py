"""Blind set B30, check_sinusoidal_encoding (chapter 10): the sinusoidal position table, as
readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


def _angles(max_len: int, d_model: int) -> Tensor:
    """i * w_j with the right frequencies, (max_len, D/2), in float64."""
    i = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    return i * 10000.0 ** (-j2 / d_model)


def _interleave(even: Tensor, odd: Tensor) -> Tensor:
    return torch.stack([even, odd], dim=-1).flatten(-2).float()


# ---------------------------------------------------------------- mistakes


def pe_sin_cos_swapped(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return _interleave(torch.cos(a), torch.sin(a))


def pe_positions_from_one(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(1, max_len + 1, dtype=torch.float64)[:, None]  # position 1 is the first word
    a = i * 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _interleave(torch.sin(a), torch.cos(a))


def pe_exponent_j_not_2j(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float64)[:, None]
    j = torch.arange(d_model // 2, dtype=torch.float64)
    a = i * 10000.0 ** (-j / d_model)
    return _interleave(torch.sin(a), torch.cos(a))


def pe_exponent_doubled(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float64)[:, None]
    two_j = torch.arange(0, d_model, 2, dtype=torch.float64)  # already 2j
    a = i / 10000.0 ** (2 * two_j / d_model)
    return _interleave(torch.sin(a), torch.cos(a))


def pe_frequencies_rising(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float64)[:, None]
    a = i * 10000.0 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _interleave(torch.sin(a), torch.cos(a))


def pe_halves_not_interleaved(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return torch.cat([torch.sin(a), torch.cos(a)], dim=-1).float()  # sines, then cosines


def pe_transposed(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return _interleave(torch.sin(a), torch.cos(a)).T  # (d_model, max_len), one column a position


def pe_integer_division(max_len: int, d_model: int) -> Tensor:
    pe = torch.zeros(max_len, d_model)
    for i in range(max_len):
        for c in range(0, d_model, 2):
            w = 1 / 10000 ** (c // d_model)  # c // d_model is 0 for every column
            pe[i, c] = math.sin(i * w)
            pe[i, c + 1] = math.cos(i * w)
    return pe


def pe_with_batch_axis(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return _interleave(torch.sin(a), torch.cos(a)).unsqueeze(0)  # (1, max_len, D) to add to x


def pe_frequency_per_column(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float64)[:, None]
    cols = torch.arange(d_model, dtype=torch.float64)
    a = i * 10000.0 ** (-cols / d_model)  # column c's own frequency
    pe = torch.sin(a)
    pe[:, 1::2] = torch.cos(a[:, 1::2])
    return pe.float()


def pe_degrees(max_len: int, d_model: int) -> Tensor:
    a = torch.rad2deg(_angles(max_len, d_model))  # the angle i * w_j in degrees
    return _interleave(torch.sin(a), torch.cos(a))


def pe_base_1000(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    a = i * torch.exp(-math.log(1000.0) * j2 / d_model)
    return _interleave(torch.sin(a), torch.cos(a))


# ---------------------------------------------------------------- correct variants


def pe_log_space(max_len: int, d_model: int) -> Tensor:
    """exp(-2j ln(10000)/d) written with a slice assignment into a float64 table."""
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    div = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(1e4) / d_model))
    pe[:, 0::2] = torch.sin(pos * div)
    pe[:, 1::2] = torch.cos(pos * div)
    return pe.to(torch.float32)


def pe_complex_exponential(max_len: int, d_model: int) -> Tensor:
    """e^{i theta}: view_as_real gives (cos, sin), so the pair is flipped to (sin, cos)."""
    theta = torch.outer(
        torch.arange(max_len, dtype=torch.float64),
        torch.pow(10.0, -8.0 * torch.arange(d_model // 2, dtype=torch.float64) / d_model),
    )
    z = torch.polar(torch.ones_like(theta), theta)
    return torch.view_as_real(z).flip(-1).reshape(max_len, d_model).float()


def pe_python_loops(max_len: int, d_model: int) -> Tensor:
    rows = []
    for pos in range(max_len):
        row = []
        for j in range(d_model // 2):
            w = 10000 ** (-2 * j / d_model)
            row += [math.sin(pos * w), math.cos(pos * w)]
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float32)


CASES = [
    BlindCase(
        CHECK,
        "sin_cos_swapped",
        pe_sin_cos_swapped,
        "mistake",
        "I put the cosines in the even columns and the sines in the odd ones.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        pe_positions_from_one,
        "mistake",
        "I numbered the positions from 1, so row 0 is position 1 and there is no row of "
        "sin 0 / cos 0.",
    ),
    BlindCase(
        CHECK,
        "exponent_j_over_d",
        pe_exponent_j_not_2j,
        "mistake",
        "I used 10000^(-j/d) with the pair index j, dropping the 2.",
    ),
    BlindCase(
        CHECK,
        "exponent_doubled",
        pe_exponent_doubled,
        "mistake",
        "arange(0, d, 2) already gives 2j, and I multiplied it by 2 again.",
    ),
    BlindCase(
        CHECK,
        "frequencies_rising",
        pe_frequencies_rising,
        "mistake",
        "I lost the minus sign in the exponent, so the frequencies grow with j.",
    ),
    BlindCase(
        CHECK,
        "halves_not_interleaved",
        pe_halves_not_interleaved,
        "mistake",
        "I concatenated all the sines and then all the cosines instead of alternating columns.",
    ),
    BlindCase(
        CHECK,
        "transposed_table",
        pe_transposed,
        "mistake",
        "I returned the table as (d_model, max_len).",
    ),
    BlindCase(
        CHECK,
        "integer_division_in_exponent",
        pe_integer_division,
        "mistake",
        "I wrote c // d_model in the exponent, which is 0, so every frequency is 1.",
    ),
    BlindCase(
        CHECK,
        "batch_axis_added",
        pe_with_batch_axis,
        "mistake",
        "I returned it as (1, max_len, d_model), ready to add to a batch.",
    ),
    BlindCase(
        CHECK,
        "frequency_per_column",
        pe_frequency_per_column,
        "mistake",
        "I gave each column c its own frequency 10000^(-c/d), so a cosine column does not "
        "share the frequency of the sine before it.",
    ),
    BlindCase(
        CHECK,
        "angles_in_degrees",
        pe_degrees,
        "mistake",
        "I converted the angles to degrees before taking sin and cos.",
    ),
    BlindCase(
        CHECK,
        "base_1000",
        pe_base_1000,
        "mistake",
        "I typed log(1000.0) for the base instead of log(10000.0).",
    ),
    BlindCase(
        CHECK,
        "log_space_slices",
        pe_log_space,
        "correct",
        "The frequencies as exp(-2j ln(1e4)/d), slice assignment into a float64 table, cast "
        "to float32.",
    ),
    BlindCase(
        CHECK,
        "complex_exponential",
        pe_complex_exponential,
        "correct",
        "torch.polar gives e^{i theta}; view_as_real flipped to (sin, cos) pairs; the "
        "frequencies as 10^(-8j/d).",
    ),
    BlindCase(
        CHECK,
        "python_loops",
        pe_python_loops,
        "correct",
        "Two Python loops with math.sin and math.cos, then torch.tensor in float32.",
    ),
]
