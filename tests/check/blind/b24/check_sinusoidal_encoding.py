"""Blind set B24, check_sinusoidal_encoding (chapter 10): the sinusoidal table as readers write it."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


def _fill(angles_sin: Tensor, angles_cos: Tensor) -> Tensor:
    """Interleave: sin in the even columns, cos in the odd ones; float32."""
    pe = torch.empty(angles_sin.shape[0], 2 * angles_sin.shape[1], dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angles_sin)
    pe[:, 1::2] = torch.cos(angles_cos)
    return pe.float()


# ---------------------------------------------------------------- mistakes


def pe_sin_cos_swapped(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.cos(pos * w)
    pe[:, 1::2] = torch.sin(pos * w)
    return pe.float()


def pe_all_sines(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * w)
    pe[:, 1::2] = torch.sin(pos * w)  # copied the line above
    return pe.float()


def pe_positions_from_one(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(1, max_len + 1, dtype=torch.float64)[:, None]  # the 1st word is 1
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _fill(pos * w, pos * w)


def pe_exponent_j_over_d(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j = torch.arange(d_model // 2, dtype=torch.float64)
    w = 10000.0 ** (-j / d_model)  # forgot the 2 of 2j
    return _fill(pos * w, pos * w)


def pe_frequency_per_column(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    i = torch.arange(d_model, dtype=torch.float64)
    angles = pos * 10000.0 ** (-i / d_model)  # (max_len, d_model), column i's own frequency
    pe = torch.where(i.long() % 2 == 0, torch.sin(angles), torch.cos(angles))
    return pe.float()


def pe_positive_exponent(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    w = torch.pow(10000.0, j2 / d_model)  # 10000^(2j/d)
    return _fill(pos * w, pos * w)


def pe_sin_block_cos_block(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return torch.cat([torch.sin(pos * w), torch.cos(pos * w)], dim=1).float()


def pe_log10(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    w = torch.exp(-math.log10(10000.0) * j2 / d_model)
    return _fill(pos * w, pos * w)


def pe_integer_division(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len)[:, None]
    exponent = torch.arange(0, d_model, 2) // d_model  # integer tensors
    w = 1.0 / 10000.0**exponent
    return _fill(pos * w, pos * w)


def pe_transposed(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[None, :]  # positions along the columns
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)[:, None]
    pe = torch.zeros(d_model, max_len, dtype=torch.float64)
    pe[0::2] = torch.sin(w * pos)
    pe[1::2] = torch.cos(w * pos)
    return pe.float()  # (d_model, max_len)


def pe_frequencies_from_one(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j = torch.arange(1, d_model // 2 + 1, dtype=torch.float64)  # j = 1 .. d/2
    w = 10000.0 ** (-2 * j / d_model)
    return _fill(pos * w, pos * w)


def pe_batch_axis(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _fill(pos * w, pos * w).unsqueeze(0)  # (1, max_len, D), ready to add to (B, T, D)


# ---------------------------------------------------------------- correct variants


def pe_stack_flatten(max_len: int, d_model: int) -> Tensor:
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(-1)  # (L, 1)
    inv_freq = torch.pow(10000.0, -torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = position * inv_freq  # (L, D/2)
    pe = torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(-2)  # sin, cos, sin, cos...
    return pe.to(torch.float32)


def pe_python_loops(max_len: int, d_model: int) -> Tensor:
    rows = []
    for pos in range(max_len):
        row = []
        for j in range(d_model // 2):
            angle = pos / 10000 ** (2 * j / d_model)
            row += [math.sin(angle), math.cos(angle)]
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float32).reshape(max_len, d_model)


def pe_numpy(max_len: int, d_model: int, base: float = 10000.0) -> Tensor:
    pos = np.arange(max_len)[:, None]
    i = np.arange(d_model)[None, :]
    angles = pos / np.power(base, (2 * (i // 2)) / d_model)  # column 2j and 2j + 1 share w_j
    table = np.where(i % 2 == 0, np.sin(angles), np.cos(angles))
    return torch.from_numpy(table).float()


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
        "all_sines",
        pe_all_sines,
        "mistake",
        "I copied the sine line for the odd columns and forgot to change it to cos.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        pe_positions_from_one,
        "mistake",
        "I numbered the positions 1 .. max_len instead of 0 .. max_len - 1.",
    ),
    BlindCase(
        CHECK,
        "exponent_j_over_d",
        pe_exponent_j_over_d,
        "mistake",
        "I used j = 0, 1, 2, ... in 10000^(-j/d), forgetting the factor 2.",
    ),
    BlindCase(
        CHECK,
        "frequency_per_column",
        pe_frequency_per_column,
        "mistake",
        "I gave every column i its own frequency 10000^(-i/d), so a sine and its cosine do not "
        "share one.",
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
        "sin_block_then_cos_block",
        pe_sin_block_cos_block,
        "mistake",
        "I concatenated all the sines, then all the cosines, instead of interleaving them.",
    ),
    BlindCase(
        CHECK,
        "log10_in_exp",
        pe_log10,
        "mistake",
        "I wrote the frequency as exp(-log(10000) 2j/d) but with math.log10.",
    ),
    BlindCase(
        CHECK,
        "integer_division",
        pe_integer_division,
        "mistake",
        "My exponent 2j // d_model is an integer division, so every frequency is 1.",
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
        "frequencies_from_j_1",
        pe_frequencies_from_one,
        "mistake",
        "I counted j from 1 to d/2, so the first pair is not the frequency 1.",
    ),
    BlindCase(
        CHECK,
        "leading_batch_axis",
        pe_batch_axis,
        "mistake",
        "I returned the table as (1, max_len, d_model), ready to add to a batch.",
    ),
    BlindCase(
        CHECK,
        "stack_and_flatten",
        pe_stack_flatten,
        "correct",
        "sin and cos stacked on a last axis and flattened, which interleaves them.",
    ),
    BlindCase(
        CHECK,
        "python_loops",
        pe_python_loops,
        "correct",
        "Two Python loops with math.sin and math.cos, then a float32 tensor.",
    ),
    BlindCase(
        CHECK,
        "numpy_with_base",
        pe_numpy,
        "correct",
        "NumPy with 2 * (i // 2) for the pair's exponent; an extra base argument.",
    ),
]
