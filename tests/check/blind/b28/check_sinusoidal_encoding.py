"""Blind set B28, check_sinusoidal_encoding (chapter 10): the sinusoidal position table as
readers write it."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


def _fill(angles: Tensor, d_model: int) -> Tensor:
    """sin in the even columns, cos in the odd ones, float32."""
    pe = torch.zeros(angles.shape[0], d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe.float()


# ---------------------------------------------------------------- mistakes


def pe_j_not_2j(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j = torch.arange(d_model // 2, dtype=torch.float64)
    return _fill(pos * 10000.0 ** (-j / d_model), d_model)  # w_j = 10000^(-j/d)


def pe_column_index_exponent(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    col = torch.arange(d_model, dtype=torch.float64)  # every column its own frequency
    angles = pos / 10000.0 ** (col / d_model)  # (max_len, d)
    pe = torch.where(torch.arange(d_model) % 2 == 0, torch.sin(angles), torch.cos(angles))
    return pe.float()


def pe_halves(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return torch.cat([torch.sin(pos * w), torch.cos(pos * w)], dim=1).float()  # sines, cosines


def pe_transposed(max_len: int, d_model: int) -> Tensor:
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)[:, None]  # (d/2, 1)
    pos = torch.arange(max_len, dtype=torch.float64)[None, :]  # (1, max_len)
    angles = pos * 10000.0 ** (-j2 / d_model)  # (d/2, max_len)
    pe = torch.zeros(d_model, max_len, dtype=torch.float64)
    pe[0::2] = torch.sin(angles)
    pe[1::2] = torch.cos(angles)
    return pe.float()  # one column per position


def pe_integer_division(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j = torch.arange(d_model // 2)
    exponent = (2 * j) // d_model  # 2j / d
    return _fill(pos / 10000.0**exponent, d_model)


def pe_exponent_sign(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    return _fill(pos * 10000.0 ** (j2 / d_model), d_model)  # w_j = 10000^(2j/d)


def pe_linspace_positions(max_len: int, d_model: int) -> Tensor:
    pos = torch.linspace(0, max_len, max_len, dtype=torch.float64)[:, None]  # 0 .. max_len
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    return _fill(pos * 10000.0 ** (-j2 / d_model), d_model)


def pe_base_1000(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    return _fill(pos * 1000.0 ** (-j2 / d_model), d_model)


def pe_numpy(max_len: int, d_model: int) -> np.ndarray:
    pos = np.arange(max_len)[:, None]
    w = 1.0 / 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((max_len, d_model), dtype=np.float32)
    pe[:, 0::2] = np.sin(pos * w)
    pe[:, 1::2] = np.cos(pos * w)
    return pe


def pe_with_batch_axis(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    return _fill(pos * 10000.0 ** (-j2 / d_model), d_model).unsqueeze(0)  # (1, max_len, d)


def pe_degrees(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    angles = pos * 10000.0 ** (-j2 / d_model)
    return _fill(angles * 2 * math.pi, d_model)  # a full turn per unit of angle


def pe_copy_paste_slice(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * w)
    pe[:, 0::2] = torch.cos(pos * w)
    return pe.float()


# ---------------------------------------------------------------- correct variants


def pe_python_loops(max_len: int, d_model: int) -> Tensor:
    rows = []
    for i in range(max_len):
        row = []
        for j in range(d_model // 2):
            w = 10000 ** (-2 * j / d_model)
            row += [math.sin(i * w), math.cos(i * w)]
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float32).reshape(max_len, d_model)


def pe_stack_interleave(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(-1)
    w = torch.pow(10000.0, -torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = pos * w  # (max_len, d/2)
    return torch.stack([angles.sin(), angles.cos()], dim=-1).reshape(max_len, d_model).float()


def pe_complex_exponential(max_len: int, d_model: int) -> Tensor:
    """exp(i * angle) = cos + i sin; its real and imaginary parts, swapped to sin, cos."""
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(1e4) / d_model))
    z = torch.polar(torch.ones(max_len, d_model // 2, dtype=torch.float64), pos * w)
    return torch.view_as_real(z).flip(-1).reshape(max_len, d_model).to(torch.float32)


def pe_outer_product(max_len: int, d_model: int, base: float = 10000.0) -> Tensor:
    """torch.outer for the angles; an extra base argument with the paper's default."""
    inv_freq = 1.0 / base ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = torch.outer(torch.arange(max_len, dtype=torch.float64), inv_freq)
    pe = torch.empty(max_len, d_model)
    pe[:, ::2] = angles.sin()
    pe[:, 1::2] = angles.cos()
    return pe


CASES = [
    BlindCase(
        CHECK,
        "exponent_j_over_d",
        pe_j_not_2j,
        "mistake",
        "I used 10000^(-j/d) with j = 0..d/2-1, dropping the 2 of 2j.",
    ),
    BlindCase(
        CHECK,
        "column_index_in_exponent",
        pe_column_index_exponent,
        "mistake",
        "I gave every column k the frequency 10000^(-k/d), so the cosine of a pair does not "
        "share the sine's frequency.",
    ),
    BlindCase(
        CHECK,
        "sines_then_cosines",
        pe_halves,
        "mistake",
        "I concatenated all the sines and then all the cosines instead of interleaving them.",
    ),
    BlindCase(
        CHECK,
        "one_column_per_position",
        pe_transposed,
        "mistake",
        "I built the table as (d_model, max_len), a column per position.",
    ),
    BlindCase(
        CHECK,
        "integer_division_exponent",
        pe_integer_division,
        "mistake",
        "I wrote the exponent as (2 * j) // d_model, which is 0 for every j.",
    ),
    BlindCase(
        CHECK,
        "exponent_sign",
        pe_exponent_sign,
        "mistake",
        "I multiplied the position by 10000^(2j/d) instead of dividing by it.",
    ),
    BlindCase(
        CHECK,
        "linspace_positions",
        pe_linspace_positions,
        "mistake",
        "I made the positions with torch.linspace(0, max_len, max_len), which are not whole "
        "numbers.",
    ),
    BlindCase(
        CHECK,
        "base_1000",
        pe_base_1000,
        "mistake",
        "I typed 1000 for the base instead of 10000.",
    ),
    BlindCase(
        CHECK,
        "numpy_array",
        pe_numpy,
        "mistake",
        "I wrote it with NumPy and return a NumPy array, not a tensor.",
    ),
    BlindCase(
        CHECK,
        "batch_axis_added",
        pe_with_batch_axis,
        "mistake",
        "I returned the table with a leading batch axis, (1, max_len, d_model), to add to x "
        "directly.",
    ),
    BlindCase(
        CHECK,
        "angles_times_two_pi",
        pe_degrees,
        "mistake",
        "I multiplied the angles by 2 pi, thinking w_j counts turns per position.",
    ),
    BlindCase(
        CHECK,
        "cosines_over_sines",
        pe_copy_paste_slice,
        "mistake",
        "I copied the sine line for the cosines and kept the slice 0::2, so the cosines "
        "overwrite the sines and the odd columns stay 0.",
    ),
    BlindCase(
        CHECK,
        "python_loops",
        pe_python_loops,
        "correct",
        "Two Python loops with math.sin and math.cos, turned into a float32 tensor.",
    ),
    BlindCase(
        CHECK,
        "stack_and_reshape",
        pe_stack_interleave,
        "correct",
        "sin and cos stacked on a new last axis and reshaped, which interleaves them.",
    ),
    BlindCase(
        CHECK,
        "complex_exponential",
        pe_complex_exponential,
        "correct",
        "torch.polar for exp(i * angle), view_as_real and a flip to put the sine first.",
    ),
    BlindCase(
        CHECK,
        "outer_with_base_argument",
        pe_outer_product,
        "correct",
        "torch.outer for the angles; an extra base argument that defaults to 10000.",
    ),
]
