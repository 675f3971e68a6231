"""Blind set B18, check_sinusoidal_encoding (chapter 10): the sinusoidal position table as readers
write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


# ---------------------------------------------------------------- mistakes


def pe_sin_cos_swapped(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len).unsqueeze(1).float()
    freq = torch.pow(10000.0, -torch.arange(0, d_model, 2).float() / d_model)
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.cos(pos * freq)  # cos first, then sin
    pe[:, 1::2] = torch.sin(pos * freq)
    return pe


def pe_positions_from_one(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(1, max_len + 1, dtype=torch.float32)[:, None]  # the first word is 1
    freq = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(pos * freq)
    pe[:, 1::2] = torch.cos(pos * freq)
    return pe


def pe_exponent_j_not_2j(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]
    j = torch.arange(d_model // 2, dtype=torch.float32)  # j = 0 .. d/2 - 1
    freq = 10000.0 ** (-j / d_model)
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(pos * freq)
    pe[:, 1::2] = torch.cos(pos * freq)
    return pe


def pe_frequency_per_column(max_len: int, d_model: int) -> Tensor:
    pe = torch.zeros(max_len, d_model)
    for pos in range(max_len):
        for i in range(d_model):
            angle = pos / 10000 ** (i / d_model)  # each column i its own frequency
            pe[pos, i] = math.sin(angle) if i % 2 == 0 else math.cos(angle)
    return pe


def pe_positive_exponent(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)
    freq = torch.pow(10000.0, torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    angles = pos * freq  # i * 10000^(2j/d)
    pe = torch.empty(max_len, d_model)
    pe[:, 0::2] = angles.sin()
    pe[:, 1::2] = angles.cos()
    return pe


def pe_halves_concatenated(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)
    freq = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2).float() / d_model)
    angles = pos * freq
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1)  # sines, then cosines


def pe_transposed(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float32)
    freq = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    angles = freq[:, None] * pos[None, :]  # (D/2, max_len)
    pe = torch.zeros(d_model, max_len)
    pe[0::2] = torch.sin(angles)
    pe[1::2] = torch.cos(angles)
    return pe


def pe_integer_division(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len).unsqueeze(1)
    two_j = torch.arange(0, d_model, 2)
    freq = 1.0 / 10000 ** (two_j // d_model)  # 2j / d on integer tensors
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(pos * freq)
    pe[:, 1::2] = torch.cos(pos * freq)
    return pe


def pe_only_sines(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)
    freq = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(pos * freq)
    pe[:, 1::2] = torch.sin(pos * freq)  # copied the line above
    return pe


def pe_log_base_10(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)
    div = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log10(10000.0) / d_model))
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(pos * div)
    pe[:, 1::2] = torch.cos(pos * div)
    return pe


# ---------------------------------------------------------------- correct variants


def pe_stack_interleave(max_len: int, d_model: int) -> Tensor:
    """sin and cos stacked on a new last axis, then flattened: columns interleave."""
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]
    omega = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    angles = pos * omega  # (max_len, D/2)
    return torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(start_dim=1)


def pe_python_loops(max_len: int, d_model: int) -> Tensor:
    """Two Python loops with the math module, omega_j = 1 / 10000^(j / (d/2))."""
    rows = []
    for i in range(max_len):
        row = []
        for j in range(d_model // 2):
            w = 1.0 / 10000 ** (j / (d_model / 2))
            row += [math.sin(i * w), math.cos(i * w)]
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float32)


def pe_column_formula(max_len: int, d_model: int) -> Tensor:
    """Every column at once: exponent 2 * (i // 2) / d, then sin on even and cos on odd
    columns through torch.where; computed in float64 and returned as float32."""
    i = torch.arange(d_model)
    angles = torch.arange(max_len, dtype=torch.float64)[:, None] / 10000.0 ** (
        2 * (i // 2) / d_model
    )
    return torch.where(i % 2 == 0, torch.sin(angles), torch.cos(angles)).to(torch.float32)


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
        "I counted the positions from 1, so row 0 is position 1.",
    ),
    BlindCase(
        CHECK,
        "exponent_j_not_2j",
        pe_exponent_j_not_2j,
        "mistake",
        "I used j / d as the exponent, j = 0 .. d/2 - 1, forgetting the factor 2.",
    ),
    BlindCase(
        CHECK,
        "frequency_per_column",
        pe_frequency_per_column,
        "mistake",
        "I gave each column i the frequency 10000^(-i/d), so a cosine column does not share its "
        "sine's frequency.",
    ),
    BlindCase(
        CHECK,
        "positive_exponent",
        pe_positive_exponent,
        "mistake",
        "I multiplied the position by 10000^(2j/d) instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "halves_concatenated",
        pe_halves_concatenated,
        "mistake",
        "I concatenated all the sines and then all the cosines instead of interleaving them.",
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
        pe_integer_division,
        "mistake",
        "I wrote 2j // d on integer tensors, so every exponent is 0 and every frequency 1.",
    ),
    BlindCase(
        CHECK,
        "only_sines",
        pe_only_sines,
        "mistake",
        "I copied the sine line for the odd columns and forgot to change it to cos.",
    ),
    BlindCase(
        CHECK,
        "log_base_10",
        pe_log_base_10,
        "mistake",
        "In the exp/log form I used math.log10 instead of the natural log.",
    ),
    BlindCase(
        CHECK,
        "stack_interleave",
        pe_stack_interleave,
        "correct",
        "sin and cos stacked on a last axis and flattened, which interleaves the columns.",
    ),
    BlindCase(
        CHECK,
        "python_loops",
        pe_python_loops,
        "correct",
        "Python loops with math.sin/cos and omega_j = 10000^(-j / (d/2)).",
    ),
    BlindCase(
        CHECK,
        "column_formula_where",
        pe_column_formula,
        "correct",
        "All columns at once with exponent 2 * (i // 2) / d and torch.where for sin or cos; "
        "float64 inside, float32 out.",
    ),
]
