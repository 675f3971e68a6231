"""Blind set B25, check_sinusoidal_encoding (chapter 10): the sinusoidal table as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


def _angles(max_len: int, d_model: int) -> Tensor:
    """The right angles i * w_j, (max_len, d_model / 2), in float64."""
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    return position * torch.exp(-math.log(10000.0) * j2 / d_model)


# ---------------------------------------------------------------- mistakes


def pe_column_index_exponent(max_len: int, d_model: int) -> Tensor:
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    i = torch.arange(d_model, dtype=torch.float64)  # the column index
    angles = position / 10000 ** (i / d_model)  # (max_len, d_model)
    pe = torch.empty(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angles[:, 0::2])
    pe[:, 1::2] = torch.cos(angles[:, 1::2])
    return pe.float()


def pe_exponent_j_over_d(max_len: int, d_model: int) -> Tensor:
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    j = torch.arange(d_model // 2, dtype=torch.float64)
    angles = position * 10000 ** (-j / d_model)  # forgot the 2 of 2j
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angles), torch.cos(angles)
    return pe.float()


def pe_two_times_even_index(max_len: int, d_model: int) -> Tensor:
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    j = torch.arange(0, d_model, 2, dtype=torch.float64)  # j = 0, 2, 4, ...
    angles = position * 10000 ** (-2 * j / d_model)  # 2j / d
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angles), torch.cos(angles)
    return pe.float()


def pe_halves(max_len: int, d_model: int) -> Tensor:
    angles = _angles(max_len, d_model)
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1).float()  # sines | cosines


def pe_positions_from_one(max_len: int, d_model: int) -> Tensor:
    position = torch.arange(1, max_len + 1, dtype=torch.float64)[:, None]  # the first word is 1
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    angles = position * torch.exp(-math.log(10000.0) * j2 / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angles), torch.cos(angles)
    return pe.float()


def pe_log10(max_len: int, d_model: int) -> Tensor:
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    angles = position * torch.exp(-math.log10(10000.0) * j2 / d_model)  # log of 10000
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angles), torch.cos(angles)
    return pe.float()


def pe_positive_exponent(max_len: int, d_model: int) -> Tensor:
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    angles = position * 10000 ** (j2 / d_model)  # i * 10000^(2j/d)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angles), torch.cos(angles)
    return pe.float()


def pe_integer_division(max_len: int, d_model: int) -> Tensor:
    pe = torch.zeros(max_len, d_model)
    for i in range(max_len):
        for j in range(d_model // 2):
            w = 10000 ** (-2 * j // d_model)  # floor division of the exponent
            pe[i, 2 * j] = math.sin(i * w)
            pe[i, 2 * j + 1] = math.cos(i * w)
    return pe


def pe_transposed(max_len: int, d_model: int) -> Tensor:
    angles = _angles(max_len, d_model)
    pe = torch.stack([torch.sin(angles), torch.cos(angles)], dim=-1).flatten(1)
    return pe.T.float()  # one column per position


def pe_with_batch_axis(max_len: int, d_model: int) -> Tensor:
    angles = _angles(max_len, d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angles), torch.cos(angles)
    return pe.float().unsqueeze(0)  # (1, max_len, d): ready to add to a batch


def pe_cos_even(max_len: int, d_model: int) -> Tensor:
    angles = _angles(max_len, d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.cos(angles), torch.sin(angles)
    return pe.float()


def pe_base_1000(max_len: int, d_model: int) -> Tensor:
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    angles = position / 1000 ** (j2 / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angles), torch.cos(angles)
    return pe.float()


def pe_degrees(max_len: int, d_model: int) -> Tensor:
    angles = torch.rad2deg(_angles(max_len, d_model))  # the angle of position i, in degrees
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angles), torch.cos(angles)
    return pe.float()


# ---------------------------------------------------------------- correct variants


def pe_python_loops(max_len: int, d_model: int) -> Tensor:
    rows = []
    for i in range(max_len):
        row = []
        for j in range(d_model // 2):
            w = 10000.0 ** (-2 * j / d_model)
            row += [math.sin(i * w), math.cos(i * w)]
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float32).reshape(max_len, d_model)


def pe_stack_interleave(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    w = 1.0 / torch.pow(10000.0, torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    ang = pos * w
    return torch.stack((ang.sin(), ang.cos()), dim=-1).reshape(max_len, d_model).float()


def pe_complex(max_len: int, d_model: int) -> Tensor:
    angles = _angles(max_len, d_model)
    z = torch.polar(torch.ones_like(angles), angles)  # e^{i angle} = cos + i sin
    return torch.stack([z.imag, z.real], dim=-1).flatten(1).to(torch.float32)


def pe_outer(max_len: int, d_model: int, base: float = 10000.0) -> Tensor:
    j = torch.arange(d_model // 2, dtype=torch.float64)
    freqs = base ** (-2.0 * j / d_model)
    angles = torch.outer(torch.arange(max_len, dtype=torch.float64), freqs)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, ::2] = angles.sin()
    pe[:, 1::2] = angles.cos()
    return pe.float()


CASES = [
    BlindCase(
        CHECK,
        "column_index_exponent",
        pe_column_index_exponent,
        "mistake",
        "I used the column index in 10000^(i/d) for every column, so a sine and its cosine get "
        "different frequencies.",
    ),
    BlindCase(
        CHECK,
        "exponent_j_over_d",
        pe_exponent_j_over_d,
        "mistake",
        "I wrote 10000^(-j/d) with j = 0, 1, 2, ..., dropping the 2 of 2j.",
    ),
    BlindCase(
        CHECK,
        "two_times_even_index",
        pe_two_times_even_index,
        "mistake",
        "I took j = 0, 2, 4, ... from arange(0, d, 2) and still multiplied by 2 in 2j/d.",
    ),
    BlindCase(
        CHECK,
        "sines_then_cosines",
        pe_halves,
        "mistake",
        "I put all the sines in the first half of the row and all the cosines in the second.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        pe_positions_from_one,
        "mistake",
        "I numbered the positions from 1, so row 0 is the table's row 1.",
    ),
    BlindCase(
        CHECK,
        "log10_of_base",
        pe_log10,
        "mistake",
        "I wrote exp(-log10(10000) * 2j / d), the base-10 logarithm inside exp.",
    ),
    BlindCase(
        CHECK,
        "positive_exponent",
        pe_positive_exponent,
        "mistake",
        "I multiplied the position by 10000^(2j/d) instead of dividing by it.",
    ),
    BlindCase(
        CHECK,
        "floor_division_exponent",
        pe_integer_division,
        "mistake",
        "I wrote the exponent as -2 * j // d_model, which Python floors to 0 or -1.",
    ),
    BlindCase(
        CHECK,
        "transposed_table",
        pe_transposed,
        "mistake",
        "I returned the table as (d_model, max_len), one column per position.",
    ),
    BlindCase(
        CHECK,
        "batch_axis_added",
        pe_with_batch_axis,
        "mistake",
        "I returned the table with a batch axis, (1, max_len, d_model), as the module stores it.",
    ),
    BlindCase(
        CHECK,
        "cosine_in_even_columns",
        pe_cos_even,
        "mistake",
        "I put the cosines in the even columns and the sines in the odd ones.",
    ),
    BlindCase(
        CHECK,
        "base_1000",
        pe_base_1000,
        "mistake",
        "I used 1000 as the base of the frequencies instead of 10000.",
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
        "python_loops",
        pe_python_loops,
        "correct",
        "Two Python loops with math.sin and math.cos, each row built as a list.",
    ),
    BlindCase(
        CHECK,
        "stack_interleave",
        pe_stack_interleave,
        "correct",
        "sin and cos stacked on a last axis and reshaped, so they interleave; 1 / 10000^(2j/d) "
        "with torch.pow.",
    ),
    BlindCase(
        CHECK,
        "complex_exponential",
        pe_complex,
        "correct",
        "torch.polar for e^{i angle}; the imaginary part is the sine, the real part the cosine.",
    ),
    BlindCase(
        CHECK,
        "outer_with_base_argument",
        pe_outer,
        "correct",
        "torch.outer of positions and frequencies, an optional base argument defaulting to 10000.",
    ),
]
