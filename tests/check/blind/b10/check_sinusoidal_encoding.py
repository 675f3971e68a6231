"""Blind set B10, check_sinusoidal_encoding (chapter 10): the sinusoidal position table as
readers write it."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


# ---------------------------------------------------------------- mistakes


def pe_sin_cos_swapped(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len).unsqueeze(1).float()
    w = torch.pow(10000.0, -torch.arange(0, d_model, 2).float() / d_model)
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.cos(pos * w)  # cosines first
    pe[:, 1::2] = torch.sin(pos * w)
    return pe


def pe_positions_from_one(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(1, max_len + 1, dtype=torch.float32)[:, None]  # word 1, 2, ...
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(pos * w)
    pe[:, 1::2] = torch.cos(pos * w)
    return pe


def pe_j_not_doubled(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]
    j = torch.arange(d_model // 2, dtype=torch.float32)  # j = 0 .. d/2 - 1
    w = 1.0 / 10000 ** (j / d_model)
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(pos * w)
    pe[:, 1::2] = torch.cos(pos * w)
    return pe


def pe_column_index_exponent(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]
    i = torch.arange(d_model, dtype=torch.float32)  # the column index
    angles = pos / 10000 ** (i / d_model)  # (max_len, d_model)
    pe = angles.clone()
    pe[:, 0::2] = torch.sin(angles[:, 0::2])
    pe[:, 1::2] = torch.cos(angles[:, 1::2])
    return pe


def pe_multiplies(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]
    scale = 10000 ** (torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(pos * scale)  # i * 10000^(2j/d)
    pe[:, 1::2] = torch.cos(pos * scale)
    return pe


def pe_halves(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]
    w = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    return torch.cat([torch.sin(pos * w), torch.cos(pos * w)], dim=-1)  # sines, then cosines


def pe_log10(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]
    w = torch.exp(
        torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log10(10000.0) / d_model)
    )
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(pos * w)
    pe[:, 1::2] = torch.cos(pos * w)
    return pe


def pe_transposed(max_len: int, d_model: int) -> Tensor:
    pe = torch.zeros(d_model, max_len)  # one column per position
    for i in range(max_len):
        for j in range(d_model // 2):
            w = 10000 ** (-2 * j / d_model)
            pe[2 * j, i] = math.sin(i * w)
            pe[2 * j + 1, i] = math.cos(i * w)
    return pe


def pe_floor_division(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len)[:, None]
    two_j = torch.arange(0, d_model, 2)
    w = 10000.0 ** -(two_j // d_model)  # integer tensors
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(pos * w)
    pe[:, 1::2] = torch.cos(pos * w)
    return pe


def pe_one_row_too_many(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len + 1, dtype=torch.float32)[:, None]  # positions 0 .. max_len
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    pe = torch.zeros(max_len + 1, d_model)
    pe[:, 0::2] = torch.sin(pos * w)
    pe[:, 1::2] = torch.cos(pos * w)
    return pe


def pe_max_len_in_exponent(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float32) / max_len)
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(pos * w)
    pe[:, 1::2] = torch.cos(pos * w)
    return pe


def pe_sine_twice(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(pos * w)
    pe[:, 1::2] = torch.sin(pos * w)  # copied from the line above
    return pe


# ---------------------------------------------------------------- correct variants


def pe_stack_interleave(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)  # (max_len, 1)
    w = torch.pow(10000.0, -torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    angles = pos * w  # (max_len, d/2)
    return torch.stack([angles.sin(), angles.cos()], dim=-1).reshape(max_len, d_model)


def pe_numpy(max_len: int, d_model: int) -> Tensor:
    i = np.arange(max_len)[:, None]
    j = np.arange(d_model // 2)[None, :]
    angles = i / np.power(10000, 2 * j / d_model)
    pe = np.empty((max_len, d_model))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles)
    return torch.from_numpy(pe).float()


def pe_python_loops(max_len: int, d_model: int) -> Tensor:
    rows = []
    for i in range(max_len):
        row = []
        for j in range(d_model // 2):
            angle = i / 10000 ** (2 * j / d_model)
            row += [math.sin(angle), math.cos(angle)]
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float32)


def pe_outer_with_device(
    max_len: int, d_model: int, device: torch.device | str | None = None
) -> Tensor:
    """torch.outer of positions and frequencies; an extra optional device argument."""
    pos = torch.arange(max_len, dtype=torch.float64, device=device)
    inv_freq = 1.0 / (10000 ** (torch.arange(0, d_model, 2, device=device).double() / d_model))
    angles = torch.outer(pos, inv_freq)
    pe = torch.empty(max_len, d_model, device=device)
    pe[:, ::2], pe[:, 1::2] = angles.sin(), angles.cos()
    return pe


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
        "I numbered the positions from 1, so the first row is not sin(0), cos(0).",
    ),
    BlindCase(
        CHECK,
        "j_not_doubled",
        pe_j_not_doubled,
        "mistake",
        "I used 10000^(j/d) with j = 0 .. d/2 - 1, forgetting the 2 in 2j.",
    ),
    BlindCase(
        CHECK,
        "column_index_exponent",
        pe_column_index_exponent,
        "mistake",
        "I used each column's own index i in 10000^(i/d), so the cosine of a pair turns at "
        "another speed than its sine.",
    ),
    BlindCase(
        CHECK,
        "multiplies_instead_of_divides",
        pe_multiplies,
        "mistake",
        "I multiplied the position by 10000^(2j/d) instead of dividing by it.",
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
        "log10",
        pe_log10,
        "mistake",
        "I wrote the frequency as exp(-2j log(10000) / d) with math.log10.",
    ),
    BlindCase(
        CHECK,
        "transposed",
        pe_transposed,
        "mistake",
        "I built the table as (d_model, max_len), one column per position.",
    ),
    BlindCase(
        CHECK,
        "integer_division",
        pe_floor_division,
        "mistake",
        "I wrote 2j // d_model on integer tensors, which is 0, so every frequency is 1.",
    ),
    BlindCase(
        CHECK,
        "one_row_too_many",
        pe_one_row_too_many,
        "mistake",
        "I made rows for positions 0 to max_len inclusive.",
    ),
    BlindCase(
        CHECK,
        "max_len_in_exponent",
        pe_max_len_in_exponent,
        "mistake",
        "I divided 2j by max_len instead of d_model in the exponent.",
    ),
    BlindCase(
        CHECK,
        "sine_twice",
        pe_sine_twice,
        "mistake",
        "I copied the sine line for the odd columns and forgot to change it to cos.",
    ),
    BlindCase(
        CHECK,
        "stack_interleave",
        pe_stack_interleave,
        "correct",
        "sin and cos stacked on a last axis and reshaped to interleave them.",
    ),
    BlindCase(
        CHECK,
        "numpy",
        pe_numpy,
        "correct",
        "Computed in NumPy (float64) and converted with torch.from_numpy(...).float().",
    ),
    BlindCase(
        CHECK,
        "python_loops",
        pe_python_loops,
        "correct",
        "Two Python loops with math.sin and math.cos, then one torch.tensor.",
    ),
    BlindCase(
        CHECK,
        "outer_with_device",
        pe_outer_with_device,
        "correct",
        "torch.outer in float64, written into a float32 table; an extra optional device argument.",
    ),
]
