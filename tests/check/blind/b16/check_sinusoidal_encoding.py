"""Blind set B16, check_sinusoidal_encoding (chapter 10): the sinusoidal position table as readers
write it."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


def _fill(angles: Tensor, d_model: int) -> Tensor:
    """Sines in the even columns and cosines in the odd ones, float32."""
    pe = torch.zeros(angles.shape[0], d_model, dtype=angles.dtype)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe.float()


# ---------------------------------------------------------------- mistakes


def pe_sin_cos_swapped(max_len: int, d_model: int) -> Tensor:
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    omega = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.cos(position * omega)  # cos first, as cos(0) = 1 marks position 0
    pe[:, 1::2] = torch.sin(position * omega)
    return pe.float()


def pe_positions_from_one(max_len: int, d_model: int) -> Tensor:
    position = torch.arange(1, max_len + 1, dtype=torch.float64)[:, None]  # the 1st word is 1
    omega = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _fill(position * omega, d_model)


def pe_exponent_without_two(max_len: int, d_model: int) -> Tensor:
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    j = torch.arange(d_model // 2, dtype=torch.float64)  # j = 0 .. d/2 - 1
    omega = 1.0 / 10000.0 ** (j / d_model)
    return _fill(position * omega, d_model)


def pe_column_index_exponent(max_len: int, d_model: int) -> Tensor:
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    i = torch.arange(d_model, dtype=torch.float64)  # one frequency per column
    angles = position / 10000.0 ** (i / d_model)  # (max_len, d_model)
    pe = torch.empty(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angles[:, 0::2])
    pe[:, 1::2] = torch.cos(angles[:, 1::2])
    return pe.float()


def pe_halves(max_len: int, d_model: int) -> Tensor:
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    omega = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2) / d_model)
    angles = position * omega
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=1).float()  # [sin | cos]


def pe_frequency_inverted(max_len: int, d_model: int) -> Tensor:
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    scale = 10000.0 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _fill(position * scale, d_model)  # i * 10000^(2j/d)


def pe_log10(max_len: int, d_model: int) -> Tensor:
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log10(10000.0) / d_model))
    return _fill(position * div_term, d_model)


def pe_integer_division(max_len: int, d_model: int) -> Tensor:
    angles = torch.zeros(max_len, d_model // 2, dtype=torch.float64)
    for pos in range(max_len):
        for j in range(d_model // 2):
            angles[pos, j] = pos / 10000 ** (2 * j // d_model)  # the exponent 2j/d
    return _fill(angles, d_model)


def pe_transposed(max_len: int, d_model: int) -> Tensor:
    position = torch.arange(max_len, dtype=torch.float64)[None, :]  # positions along columns
    omega = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)[:, None]
    pe = torch.zeros(d_model, max_len, dtype=torch.float64)
    pe[0::2] = torch.sin(omega * position)
    pe[1::2] = torch.cos(omega * position)
    return pe.float()  # (d_model, max_len)


def pe_batch_axis(max_len: int, d_model: int) -> Tensor:
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    omega = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _fill(position * omega, d_model).unsqueeze(0)  # (1, max_len, d_model), adds to x


# ---------------------------------------------------------------- correct variants


def pe_numpy(max_len: int, d_model: int) -> Tensor:
    pos = np.arange(max_len)[:, np.newaxis]
    i = np.arange(d_model)[np.newaxis, :]
    angle_rates = 1 / np.power(10000, (2 * (i // 2)) / np.float64(d_model))
    angles = pos * angle_rates
    angles[:, 0::2] = np.sin(angles[:, 0::2])
    angles[:, 1::2] = np.cos(angles[:, 1::2])
    return torch.from_numpy(angles).float()


def pe_float32_stack(max_len: int, d_model: int) -> Tensor:
    """All in float32, sines and cosines stacked on a last axis and flattened to interleave."""
    position = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)
    omega = torch.pow(10000.0, -torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    angles = position * omega  # (max_len, d/2)
    return torch.stack([angles.sin(), angles.cos()], dim=-1).reshape(max_len, d_model)


def pe_python_loops(max_len: int, d_model: int) -> Tensor:
    table = [
        [
            math.sin(i / 10000 ** (c / d_model))
            if c % 2 == 0
            else math.cos(i / 10000 ** ((c - 1) / d_model))
            for c in range(d_model)
        ]
        for i in range(max_len)
    ]
    return torch.tensor(table, dtype=torch.float32).reshape(max_len, d_model)


def pe_half_width_exponent(max_len: int, d_model: int) -> Tensor:
    """omega_j = 10000^(-j / (d/2)), the same numbers; the cosines as shifted sines."""
    half = d_model // 2
    omega = 10000.0 ** (-torch.arange(half, dtype=torch.float64) / half)
    angles = torch.outer(torch.arange(max_len, dtype=torch.float64), omega)
    pe = torch.empty(max_len, half, 2, dtype=torch.float64)
    pe[..., 0] = torch.sin(angles)
    pe[..., 1] = torch.sin(angles + math.pi / 2)
    return pe.flatten(1).to(torch.float32)


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
        "I numbered the positions 1..max_len, so row 0 is not sin 0 / cos 0.",
    ),
    BlindCase(
        CHECK,
        "exponent_j_over_d",
        pe_exponent_without_two,
        "mistake",
        "I wrote the frequency as 10000^(-j/d) with j = 0..d/2-1, dropping the 2.",
    ),
    BlindCase(
        CHECK,
        "exponent_from_column_index",
        pe_column_index_exponent,
        "mistake",
        "I computed one frequency per column, 10000^(-c/d), so the cosine in column 2j+1 has "
        "the exponent (2j+1)/d instead of 2j/d.",
    ),
    BlindCase(
        CHECK,
        "sines_then_cosines_halves",
        pe_halves,
        "mistake",
        "I concatenated all sines and then all cosines instead of interleaving them.",
    ),
    BlindCase(
        CHECK,
        "frequency_inverted",
        pe_frequency_inverted,
        "mistake",
        "I multiplied the position by 10000^(2j/d) instead of dividing by it.",
    ),
    BlindCase(
        CHECK,
        "log10_instead_of_ln",
        pe_log10,
        "mistake",
        "I wrote the exp/log form with math.log10(10000) instead of math.log(10000).",
    ),
    BlindCase(
        CHECK,
        "integer_division_in_exponent",
        pe_integer_division,
        "mistake",
        "I wrote the exponent as 2 * j // d_model, integer division, so every frequency is 1.",
    ),
    BlindCase(
        CHECK,
        "transposed_table",
        pe_transposed,
        "mistake",
        "My table has the features on the rows and the positions on the columns, "
        "(d_model, max_len).",
    ),
    BlindCase(
        CHECK,
        "batch_axis_added",
        pe_batch_axis,
        "mistake",
        "I returned the table as (1, max_len, d_model) so it can be added to a batch.",
    ),
    BlindCase(
        CHECK,
        "numpy_angle_rates",
        pe_numpy,
        "correct",
        "NumPy, with 2 * (i // 2) as the exponent of every column, converted with "
        "torch.from_numpy(...).float().",
    ),
    BlindCase(
        CHECK,
        "float32_stack_interleave",
        pe_float32_stack,
        "correct",
        "Everything in float32; sines and cosines stacked on a last axis and reshaped, which "
        "interleaves them.",
    ),
    BlindCase(
        CHECK,
        "python_loops",
        pe_python_loops,
        "correct",
        "Nested list comprehensions with math.sin and math.cos, then torch.tensor.",
    ),
    BlindCase(
        CHECK,
        "half_width_exponent_shifted_sine",
        pe_half_width_exponent,
        "correct",
        "omega_j = 10000^(-j / (d/2)) and the cosine written as sin(x + pi/2), interleaved "
        "through a (max_len, d/2, 2) tensor.",
    ),
]
