"""Blind set B22, check_sinusoidal_encoding (chapter 10): the sinusoidal table as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


def _angles(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    return i * 10000.0 ** (-j2 / d_model)  # (max_len, d/2)


def _interleave(even: Tensor, odd: Tensor) -> Tensor:
    return torch.stack([even, odd], dim=-1).flatten(-2).float()


# ---------------------------------------------------------------- mistakes


def pe_sin_cos_swapped(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return _interleave(torch.cos(a), torch.sin(a))


def pe_positions_from_one(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(1, max_len + 1, dtype=torch.float64)[:, None]  # positions 1..max_len
    a = i * 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _interleave(torch.sin(a), torch.cos(a))


def pe_j_not_2j(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float64)[:, None]
    j = torch.arange(d_model // 2, dtype=torch.float64)
    a = i * 10000.0 ** (-j / d_model)
    return _interleave(torch.sin(a), torch.cos(a))


def pe_double_two(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float64)[:, None]
    j = torch.arange(0, d_model, 2, dtype=torch.float64)  # already 2j
    a = i * 10000.0 ** (-2 * j / d_model)
    return _interleave(torch.sin(a), torch.cos(a))


def pe_positive_exponent(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float64)[:, None]
    a = i * 10000.0 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _interleave(torch.sin(a), torch.cos(a))


def pe_halves(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return torch.cat([torch.sin(a), torch.cos(a)], dim=-1).float()  # all sines, then all cosines


def pe_per_column_exponent(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float64)[:, None]
    col = torch.arange(d_model, dtype=torch.float64)
    a = i * 10000.0 ** (-col / d_model)  # each column its own frequency
    pe = torch.where(col.long() % 2 == 0, torch.sin(a), torch.cos(a))
    return pe.float()


def pe_no_log_base(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    a = i * torch.exp(-j2 / d_model)  # forgot the log(10000) factor
    return _interleave(torch.sin(a), torch.cos(a))


def pe_transposed(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return _interleave(torch.sin(a), torch.cos(a)).T  # (d_model, max_len), one column a position


def pe_linspace_positions(max_len: int, d_model: int) -> Tensor:
    i = torch.linspace(0, max_len, max_len, dtype=torch.float64)[:, None]
    a = i * 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _interleave(torch.sin(a), torch.cos(a))


def pe_zero_first_row(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    pe = _interleave(torch.sin(a), torch.cos(a))
    pe[0] = 0.0  # position 0 is for padding
    return pe


def pe_degrees(max_len: int, d_model: int) -> Tensor:
    a = torch.deg2rad(_angles(max_len, d_model))  # treated the angles as degrees
    return _interleave(torch.sin(a), torch.cos(a))


# ---------------------------------------------------------------- correct variants


def pe_annotated(max_len: int, d_model: int) -> Tensor:
    pe = torch.zeros(max_len, d_model)
    position = torch.arange(0, max_len).unsqueeze(1).float()
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * -(math.log(10000.0) / d_model))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


def pe_python_loops(max_len: int, d_model: int) -> Tensor:
    rows = []
    for i in range(max_len):
        row = []
        for j in range(d_model // 2):
            w = 1.0 / 10000 ** (2 * j / d_model)
            row += [math.sin(i * w), math.cos(i * w)]
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float32)


def pe_outer_pow(max_len: int, d_model: int, base: float = 10000.0) -> Tensor:
    freqs = torch.pow(base, -torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = torch.outer(torch.arange(max_len, dtype=torch.float64), freqs)
    pe = torch.stack((angles.sin(), angles.cos()), dim=2).reshape(max_len, d_model)
    return pe.to(torch.float32)


CASES = [
    BlindCase(
        CHECK,
        "sin_cos_swapped",
        pe_sin_cos_swapped,
        "mistake",
        "I put cosines in the even columns and sines in the odd ones.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        pe_positions_from_one,
        "mistake",
        "I numbered the positions from 1.",
    ),
    BlindCase(CHECK, "j_not_2j", pe_j_not_2j, "mistake", "I used 10000^(-j/d) with j = 0..d/2-1."),
    BlindCase(
        CHECK,
        "double_two",
        pe_double_two,
        "mistake",
        "My j already ran over 0, 2, 4... and I multiplied it by 2 again.",
    ),
    BlindCase(
        CHECK,
        "positive_exponent",
        pe_positive_exponent,
        "mistake",
        "I forgot the minus in the exponent.",
    ),
    BlindCase(
        CHECK,
        "halves",
        pe_halves,
        "mistake",
        "I concatenated all sines then all cosines instead of interleaving.",
    ),
    BlindCase(
        CHECK,
        "per_column_exponent",
        pe_per_column_exponent,
        "mistake",
        "I gave every column its own exponent col/d, so sine and cosine pairs differ.",
    ),
    BlindCase(
        CHECK,
        "no_log_base",
        pe_no_log_base,
        "mistake",
        "I wrote exp(-2j/d) and forgot the log(10000).",
    ),
    BlindCase(CHECK, "transposed", pe_transposed, "mistake", "I returned (d_model, max_len)."),
    BlindCase(
        CHECK,
        "linspace_positions",
        pe_linspace_positions,
        "mistake",
        "I made the positions with linspace(0, max_len, max_len).",
    ),
    BlindCase(
        CHECK,
        "zero_first_row",
        pe_zero_first_row,
        "mistake",
        "I zeroed row 0, keeping it for padding.",
    ),
    BlindCase(
        CHECK, "degrees", pe_degrees, "mistake", "I converted the angles from degrees to radians."
    ),
    BlindCase(
        CHECK, "annotated", pe_annotated, "correct", "The Annotated Transformer's float32 div_term."
    ),
    BlindCase(
        CHECK,
        "python_loops",
        pe_python_loops,
        "correct",
        "Two Python loops with math.sin and math.cos.",
    ),
    BlindCase(
        CHECK,
        "outer_pow",
        pe_outer_pow,
        "correct",
        "torch.outer and torch.pow, stack and reshape; an optional base argument.",
    ),
]
