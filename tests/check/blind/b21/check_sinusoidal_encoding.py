"""Blind set B21, check_sinusoidal_encoding (chapter 10): the sinusoidal table as readers write it."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


def _angles(max_len: int, d_model: int) -> Tensor:
    """``i * w_j`` ``(max_len, d_model / 2)``, right frequencies."""
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    return pos * 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)


# ---------------------------------------------------------------- mistakes


def pe_sin_cos_swapped(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.cos(a)
    pe[:, 1::2] = torch.sin(a)
    return pe.float()


def pe_loop_from_one(max_len: int, d_model: int) -> Tensor:
    pe = torch.zeros(max_len, d_model)
    for pos in range(1, max_len):  # row 0 stays as initialised
        for j in range(d_model // 2):
            w = 10000 ** (-2 * j / d_model)
            pe[pos, 2 * j] = math.sin(pos * w)
            pe[pos, 2 * j + 1] = math.cos(pos * w)
    return pe


def pe_positions_from_one(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(1, max_len + 1, dtype=torch.float64)[:, None]  # positions 1..max_len
    a = pos * 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(a), torch.cos(a)
    return pe.float()


def pe_exponent_j_not_2j(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j = torch.arange(d_model // 2, dtype=torch.float64)
    a = pos * 10000.0 ** (-j / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(a), torch.cos(a)
    return pe.float()


def pe_frequency_per_column(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    i = torch.arange(d_model, dtype=torch.float64)  # the column index
    a = pos * 10000.0 ** (-2 * i / d_model)
    pe = torch.where(i.long() % 2 == 0, torch.sin(a), torch.cos(a))
    return pe.float()


def pe_divides_by_frequency(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    a = pos / w
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(a), torch.cos(a)
    return pe.float()


def pe_halves_not_interleaved(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return torch.cat([torch.sin(a), torch.cos(a)], dim=-1).float()


def pe_transposed(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(a), torch.cos(a)
    return pe.T.float()  # (d_model, max_len): one column per position


def pe_max_len_in_exponent(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    a = pos * 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / max_len)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(a), torch.cos(a)
    return pe.float()


def pe_integer_division(max_len: int, d_model: int) -> Tensor:
    pe = torch.zeros(max_len, d_model)
    for pos in range(max_len):
        for j in range(d_model // 2):
            w = 1 / 10000 ** (2 * j // d_model)  # 2j/d as an int
            pe[pos, 2 * j] = math.sin(pos * w)
            pe[pos, 2 * j + 1] = math.cos(pos * w)
    return pe


def pe_sine_everywhere(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(a)
    pe[:, 1::2] = torch.sin(a)
    return pe.float()


def pe_log_base_e(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    a = pos * torch.exp(-math.log10(10000.0) * j2 / d_model)  # exp of a log10
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(a), torch.cos(a)
    return pe.float()


# ---------------------------------------------------------------- correct variants


def pe_python_loop(max_len: int, d_model: int) -> Tensor:
    rows = []
    for i in range(max_len):
        row = []
        for j in range(d_model // 2):
            w = 10000 ** (-2 * j / d_model)
            row += [math.sin(i * w), math.cos(i * w)]
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float32).reshape(max_len, d_model)


def pe_stack_interleave(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    inv_freq = 1.0 / 10000 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    a = pos * inv_freq
    return torch.stack([a.sin(), a.cos()], dim=-1).flatten(1).to(torch.float32)


def pe_numpy(max_len: int, d_model: int) -> Tensor:
    pos = np.arange(max_len)[:, None]
    j = np.arange(d_model // 2)[None, :]
    a = pos / np.power(10000.0, 2 * j / d_model)
    pe = np.empty((max_len, d_model))
    pe[:, ::2] = np.sin(a)
    pe[:, 1::2] = np.cos(a)
    return torch.from_numpy(pe).float()


def pe_outer_and_view(max_len: int, d_model: int) -> Tensor:
    w = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(1e4) / d_model))
    a = torch.outer(torch.arange(max_len, dtype=torch.float64), w)  # (max_len, d/2)
    pe = torch.empty(max_len, d_model // 2, 2, dtype=torch.float64)
    pe[..., 0], pe[..., 1] = torch.sin(a), torch.cos(a)
    return pe.view(max_len, d_model).float()


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
        "loop_from_position_one",
        pe_loop_from_one,
        "mistake",
        "My loop over positions started at 1, so row 0 stays all zeros.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        pe_positions_from_one,
        "mistake",
        "I numbered the positions 1..max_len instead of 0..max_len-1.",
    ),
    BlindCase(
        CHECK,
        "exponent_j_not_2j",
        pe_exponent_j_not_2j,
        "mistake",
        "I used 10000^(-j/d) with j the pair index, forgetting the 2.",
    ),
    BlindCase(
        CHECK,
        "frequency_per_column",
        pe_frequency_per_column,
        "mistake",
        "I took the frequency from the column index i as 10000^(-2i/d), so a sine and its "
        "cosine do not share a frequency.",
    ),
    BlindCase(
        CHECK,
        "divides_by_frequency",
        pe_divides_by_frequency,
        "mistake",
        "I divided the position by w_j instead of multiplying.",
    ),
    BlindCase(
        CHECK,
        "halves_not_interleaved",
        pe_halves_not_interleaved,
        "mistake",
        "I concatenated all the sines then all the cosines instead of interleaving them.",
    ),
    BlindCase(
        CHECK,
        "transposed",
        pe_transposed,
        "mistake",
        "I returned the table (d_model, max_len).",
    ),
    BlindCase(
        CHECK,
        "max_len_in_exponent",
        pe_max_len_in_exponent,
        "mistake",
        "I divided the exponent by max_len instead of d_model.",
    ),
    BlindCase(
        CHECK,
        "integer_division_exponent",
        pe_integer_division,
        "mistake",
        "I wrote the exponent as 2 * j // d_model, an integer division, so every frequency is 1.",
    ),
    BlindCase(
        CHECK,
        "sine_everywhere",
        pe_sine_everywhere,
        "mistake",
        "I copied the sine line for the odd columns and forgot to change it to cos.",
    ),
    BlindCase(
        CHECK,
        "log10_in_exp",
        pe_log_base_e,
        "mistake",
        "I wrote exp(-log10(10000) * 2j / d), mixing log10 into the exp form.",
    ),
    BlindCase(
        CHECK,
        "python_loop",
        pe_python_loop,
        "correct",
        "Nested Python loops with math.sin/math.cos, then a float32 tensor.",
    ),
    BlindCase(
        CHECK,
        "stack_interleave",
        pe_stack_interleave,
        "correct",
        "Sines and cosines stacked on a new last axis and flattened, which interleaves them.",
    ),
    BlindCase(
        CHECK, "numpy", pe_numpy, "correct", "Built in NumPy and converted with torch.from_numpy."
    ),
    BlindCase(
        CHECK,
        "outer_and_view",
        pe_outer_and_view,
        "correct",
        "torch.outer for the angles, a (max_len, d/2, 2) table viewed as (max_len, d).",
    ),
]
