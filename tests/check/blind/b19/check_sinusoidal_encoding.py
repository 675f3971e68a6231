"""Blind set B19, check_sinusoidal_encoding (chapter 10): the sinusoidal position table."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


def _angles(max_len: int, d_model: int) -> Tensor:
    """``i * w_j`` ``(max_len, d_model / 2)``, right, shared by the mistakes that are elsewhere."""
    i = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    return i * 10000.0 ** (-j2 / d_model)


# ---------------------------------------------------------------- mistakes


def pe_sin_cos_swapped(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.cos(a)
    pe[:, 1::2] = torch.sin(a)
    return pe.float()


def pe_positions_from_one(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(1, max_len + 1, dtype=torch.float32)[:, None]  # positions 1..max_len
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(i * w)
    pe[:, 1::2] = torch.cos(i * w)
    return pe


def pe_j_not_2j(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float32)[:, None]
    j = torch.arange(d_model // 2, dtype=torch.float32)
    w = 10000.0 ** (-j / d_model)  # forgot the 2 in 2j / d
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(i * w)
    pe[:, 1::2] = torch.cos(i * w)
    return pe


def pe_positive_exponent(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float32)[:, None]
    w = 10000.0 ** (torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)  # no minus
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(i * w)
    pe[:, 1::2] = torch.cos(i * w)
    return pe


def pe_halves(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return torch.cat([torch.sin(a), torch.cos(a)], dim=-1).float()  # all sines, then all cosines


def pe_float64(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    pe = torch.empty(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(a)
    pe[:, 1::2] = torch.cos(a)
    return pe  # kept in float64 for precision


def pe_transposed(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model).T  # (d/2, max_len)
    pe = torch.empty(d_model, max_len, dtype=torch.float64)
    pe[0::2] = torch.sin(a)
    pe[1::2] = torch.cos(a)
    return pe.float()  # one column per position


def pe_column_exponent(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float64)[:, None]
    col = torch.arange(d_model, dtype=torch.float64)
    angles = i * 10000.0 ** (-col / d_model)  # each column its own exponent
    pe = torch.where(col.long() % 2 == 0, torch.sin(angles), torch.cos(angles))
    return pe.float()


def pe_log10(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    w = torch.exp(-math.log10(10000.0) * j2 / d_model)  # exp(-log(10000) 2j/d)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(i * w)
    pe[:, 1::2] = torch.cos(i * w)
    return pe.float()


def pe_all_sines(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return torch.sin(a).repeat_interleave(2, dim=1).float()  # each frequency in two columns


# ---------------------------------------------------------------- correct variants


def pe_stack_flatten(max_len: int, d_model: int) -> Tensor:
    """sin and cos stacked on a new last axis, then flattened: interleaved columns."""
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    freq = torch.pow(10000.0, -torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = pos * freq
    return torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(1).to(torch.float32)


def pe_python_loops(max_len: int, d_model: int) -> Tensor:
    """Two Python loops and math.sin/math.cos, as in many blog posts."""
    rows = []
    for i in range(max_len):
        row = []
        for j in range(d_model // 2):
            w = 1.0 / (10000 ** (2 * j / d_model))
            row += [math.sin(i * w), math.cos(i * w)]
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float32).reshape(max_len, d_model)


def pe_float32_div_term(max_len: int, d_model: int) -> Tensor:
    """The PyTorch tutorial's div_term computed in float32 throughout."""
    position = torch.arange(max_len).unsqueeze(1).float()
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
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
        "I numbered the positions from 1.",
    ),
    BlindCase(
        CHECK,
        "exponent_j_not_2j",
        pe_j_not_2j,
        "mistake",
        "I used 10000^(-j/d) with j the pair index, forgetting the 2.",
    ),
    BlindCase(
        CHECK,
        "positive_exponent",
        pe_positive_exponent,
        "mistake",
        "I wrote 10000^(2j/d), without the minus sign.",
    ),
    BlindCase(
        CHECK,
        "sin_half_cos_half",
        pe_halves,
        "mistake",
        "I concatenated all the sines and then all the cosines instead of interleaving them.",
    ),
    BlindCase(
        CHECK,
        "returns_float64",
        pe_float64,
        "mistake",
        "I computed in float64 and forgot to convert back to float32.",
    ),
    BlindCase(
        CHECK,
        "transposed",
        pe_transposed,
        "mistake",
        "I built the table (d_model, max_len), one column per position.",
    ),
    BlindCase(
        CHECK,
        "exponent_per_column",
        pe_column_exponent,
        "mistake",
        "I gave every column c the frequency 10000^(-c/d), so a cosine has a different "
        "frequency from its sine.",
    ),
    BlindCase(
        CHECK,
        "log10",
        pe_log10,
        "mistake",
        "I wrote exp(-log(10000) 2j/d) with math.log10.",
    ),
    BlindCase(
        CHECK,
        "all_sines",
        pe_all_sines,
        "mistake",
        "I repeated each sine in two columns and forgot the cosines.",
    ),
    BlindCase(
        CHECK,
        "stack_flatten",
        pe_stack_flatten,
        "correct",
        "sin and cos stacked on a new axis and flattened to interleave them.",
    ),
    BlindCase(
        CHECK,
        "python_loops",
        pe_python_loops,
        "correct",
        "Python loops with math.sin and math.cos, then one tensor.",
    ),
    BlindCase(
        CHECK,
        "float32_div_term",
        pe_float32_div_term,
        "correct",
        "The PyTorch tutorial's exp/log div_term, all in float32.",
    ),
]
