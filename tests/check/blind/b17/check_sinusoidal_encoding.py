"""Blind set B17, check_sinusoidal_encoding (chapter 10): the sinusoidal position table as readers
write it."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


# ---------------------------------------------------------------- mistakes


def pe_sin_cos_swapped(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.cos(pos * w)  # cos first, since cos(0) = 1 starts the row
    pe[:, 1::2] = torch.sin(pos * w)
    return pe.float()


def pe_positions_from_one(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(1, max_len + 1, dtype=torch.float64)[:, None]  # the first word is 1
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * w)
    pe[:, 1::2] = torch.cos(pos * w)
    return pe.float()


def pe_first_row_zeros(max_len: int, d_model: int) -> Tensor:
    pe = torch.zeros(max_len, d_model)
    for pos in range(1, max_len):  # position 0 is the padding slot, left at zero
        for j in range(0, d_model, 2):
            w = 10000 ** (-j / d_model)
            pe[pos, j] = math.sin(pos * w)
            pe[pos, j + 1] = math.cos(pos * w)
    return pe


def pe_exponent_j_not_2j(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j = torch.arange(d_model // 2, dtype=torch.float64)
    w = 1.0 / 10000.0 ** (j / d_model)  # w_j = 10000^(-j/d)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * w)
    pe[:, 1::2] = torch.cos(pos * w)
    return pe.float()


def pe_exponent_positive(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)  # sign dropped
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * w)
    pe[:, 1::2] = torch.cos(pos * w)
    return pe.float()


def pe_halves_not_interleaved(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = pos * w
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1).float()  # sines, cosines


def pe_own_frequency_per_column(max_len: int, d_model: int) -> Tensor:
    pe = torch.zeros(max_len, d_model)
    for pos in range(max_len):
        for i in range(d_model):
            angle = pos / 10000 ** (i / d_model)  # column i's own exponent i/d
            pe[pos, i] = math.sin(angle) if i % 2 == 0 else math.cos(angle)
    return pe


def pe_log10(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    two_j = torch.arange(0, d_model, 2, dtype=torch.float64)
    w = torch.exp(-math.log10(10000.0) * two_j / d_model)  # log of the base
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * w)
    pe[:, 1::2] = torch.cos(pos * w)
    return pe.float()


def pe_transposed(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[None, :]  # positions along the columns
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)[:, None]
    pe = torch.zeros(d_model, max_len, dtype=torch.float64)
    pe[0::2] = torch.sin(w * pos)
    pe[1::2] = torch.cos(w * pos)
    return pe.float()  # (d_model, max_len)


def pe_divide_instead_of_multiply(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = pos / w  # i / w_j
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe.float()


def pe_with_batch_axis(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * w)
    pe[:, 1::2] = torch.cos(pos * w)
    return pe.float().unsqueeze(0)  # (1, max_len, d_model), ready to add to a batch


def pe_numpy(max_len: int, d_model: int):
    pos = np.arange(max_len)[:, None]
    w = 10000.0 ** (-np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((max_len, d_model))
    pe[:, 0::2] = np.sin(pos * w)
    pe[:, 1::2] = np.cos(pos * w)
    return pe  # a NumPy array


# ---------------------------------------------------------------- correct variants


def pe_float32_pow(max_len: int, d_model: int) -> Tensor:
    """float32 throughout, the frequencies with torch.pow."""
    position = torch.arange(max_len).float().unsqueeze(1)
    freqs = torch.pow(10000.0, -torch.arange(0, d_model, 2).float() / d_model)
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(position * freqs)
    pe[:, 1::2] = torch.cos(position * freqs)
    return pe


def pe_stack_interleave(max_len: int, d_model: int) -> Tensor:
    """sin and cos stacked on a new last axis and flattened, which interleaves them."""
    i = torch.arange(max_len, dtype=torch.float64).outer(
        torch.exp(torch.arange(d_model // 2, dtype=torch.float64) * (-2 * math.log(1e4) / d_model))
    )
    return torch.stack([i.sin(), i.cos()], dim=-1).reshape(max_len, d_model).to(torch.float32)


def pe_python_loops(max_len: int, d_model: int) -> Tensor:
    """Two Python loops with math.sin and math.cos, as in the paper's formula."""
    rows = []
    for pos in range(max_len):
        row = []
        for j in range(d_model // 2):
            angle = pos / 10000 ** (2 * j / d_model)
            row += [math.sin(angle), math.cos(angle)]
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float32)


def pe_cos_as_shifted_sin(max_len: int, d_model: int) -> Tensor:
    """cos(x) written as sin(x + pi/2), one sine over all columns; the angles in float64."""
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    col = torch.arange(d_model)
    w = 10000.0 ** (-(col - col % 2).double() / d_model)  # the same w_j for columns 2j, 2j+1
    phase = (col % 2).double() * (math.pi / 2)
    return torch.sin(pos * w + phase).float()


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
        "I numbered the positions from 1, so row 0 holds position 1.",
    ),
    BlindCase(
        CHECK,
        "first_row_zeros",
        pe_first_row_zeros,
        "mistake",
        "My loop starts at position 1, leaving row 0 all zeros (I took it for padding).",
    ),
    BlindCase(
        CHECK,
        "exponent_j_over_d",
        pe_exponent_j_not_2j,
        "mistake",
        "I used 10000^(-j/d) with j = 0 .. d/2 - 1, forgetting the factor 2 in 2j/d.",
    ),
    BlindCase(
        CHECK,
        "exponent_sign_dropped",
        pe_exponent_positive,
        "mistake",
        "I wrote 10000^(2j/d) without the minus sign, so the frequencies grow.",
    ),
    BlindCase(
        CHECK,
        "sines_then_cosines",
        pe_halves_not_interleaved,
        "mistake",
        "I concatenated all the sines and then all the cosines instead of interleaving them.",
    ),
    BlindCase(
        CHECK,
        "exponent_per_column",
        pe_own_frequency_per_column,
        "mistake",
        "I gave every column i its own exponent i/d, so a cosine column does not share the "
        "frequency of the sine before it.",
    ),
    BlindCase(
        CHECK,
        "log10_base",
        pe_log10,
        "mistake",
        "I wrote the frequencies as exp(-log(10000) * 2j/d) with math.log10 instead of the "
        "natural log.",
    ),
    BlindCase(
        CHECK,
        "table_transposed",
        pe_transposed,
        "mistake",
        "I built the table as (d_model, max_len), one column per position.",
    ),
    BlindCase(
        CHECK,
        "divided_by_frequency",
        pe_divide_instead_of_multiply,
        "mistake",
        "I divided the position by w_j instead of multiplying (mixing up w_j with its wavelength).",
    ),
    BlindCase(
        CHECK,
        "batch_axis_added",
        pe_with_batch_axis,
        "mistake",
        "I returned the table with a leading batch axis, (1, max_len, d_model).",
    ),
    BlindCase(
        CHECK,
        "numpy_array",
        pe_numpy,
        "mistake",
        "I built the table with NumPy and returned the array, not a tensor.",
    ),
    BlindCase(
        CHECK,
        "float32_pow",
        pe_float32_pow,
        "correct",
        "float32 throughout, the frequencies with torch.pow(10000, -2j/d).",
    ),
    BlindCase(
        CHECK,
        "stack_interleave",
        pe_stack_interleave,
        "correct",
        "An outer product for the angles; sin and cos stacked on a last axis and reshaped, "
        "which interleaves them.",
    ),
    BlindCase(
        CHECK,
        "python_loops",
        pe_python_loops,
        "correct",
        "Python loops with math.sin and math.cos, turned into a float32 tensor.",
    ),
    BlindCase(
        CHECK,
        "cos_as_shifted_sin",
        pe_cos_as_shifted_sin,
        "correct",
        "One sine over all columns, the odd columns shifted by pi/2 to make the cosines.",
    ),
]
