"""Blind set B13, check_sinusoidal_encoding (chapter 10): the sinusoidal position table."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


def _table(angles: Tensor, first=torch.sin, second=torch.cos) -> Tensor:
    pe = torch.zeros(angles.shape[0], 2 * angles.shape[1])
    pe[:, 0::2] = first(angles)
    pe[:, 1::2] = second(angles)
    return pe


# ---------------------------------------------------------------- mistakes


def pe_swapped(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len).float().unsqueeze(1)
    w = 10000 ** (-torch.arange(0, d_model, 2).float() / d_model)
    return _table(pos * w, torch.cos, torch.sin)  # cos in the even columns


def pe_positions_from_one(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(1, max_len + 1).float().unsqueeze(1)  # position 1 is the first word
    w = 10000 ** (-torch.arange(0, d_model, 2).float() / d_model)
    return _table(pos * w)


def pe_j_not_doubled(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len).float().unsqueeze(1)
    j = torch.arange(d_model // 2).float()
    w = 10000 ** (-j / d_model)  # forgot the 2 in 2j
    return _table(pos * w)


def pe_positive_exponent(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len).float().unsqueeze(1)
    w = 10000 ** (torch.arange(0, d_model, 2).float() / d_model)  # lost the minus sign
    return _table(pos * w)


def pe_halves(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len).float().unsqueeze(1)
    w = 10000 ** (-torch.arange(0, d_model, 2).float() / d_model)
    return torch.cat([torch.sin(pos * w), torch.cos(pos * w)], dim=1)  # [sin | cos]


def pe_doubled_twice(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len).float().unsqueeze(1)
    i = torch.arange(0, d_model, 2).float()  # already the even indices 2j
    w = 1.0 / 10000 ** (2 * i / d_model)  # ... and doubled again
    return _table(pos * w)


def pe_integer_division(max_len: int, d_model: int) -> Tensor:
    pe = torch.zeros(max_len, d_model)
    for pos in range(max_len):
        for j in range(d_model // 2):
            w = 1 / 10000 ** (2 * j // d_model)  # // where I meant /
            pe[pos, 2 * j] = math.sin(pos * w)
            pe[pos, 2 * j + 1] = math.cos(pos * w)
    return pe


def pe_column_exponent(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len).float().unsqueeze(1)
    col = torch.arange(d_model).float()
    angles = pos / 10000 ** (col / d_model)  # each column its own frequency
    pe = angles.clone()
    pe[:, 0::2] = torch.sin(angles[:, 0::2])
    pe[:, 1::2] = torch.cos(angles[:, 1::2])
    return pe


def pe_transposed(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len).float().unsqueeze(1)
    w = 10000 ** (-torch.arange(0, d_model, 2).float() / d_model)
    return _table(pos * w).T  # (d_model, max_len), a column per position


def pe_natural_log_base(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len).float().unsqueeze(1)
    w = torch.exp(-torch.arange(0, d_model, 2).float() * math.log10(10000.0) / d_model)
    return _table(pos * w)


# ---------------------------------------------------------------- correct variants


def pe_numpy(max_len: int, d_model: int) -> Tensor:
    import numpy as np

    pos = np.arange(max_len)[:, None]
    w = np.power(10000.0, -np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((max_len, d_model))
    pe[:, 0::2], pe[:, 1::2] = np.sin(pos * w), np.cos(pos * w)
    return torch.from_numpy(pe).float()


def pe_stack_interleave(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]
    w = torch.pow(10000.0, -torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    angles = pos * w
    return torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(1)


def pe_loops(max_len: int, d_model: int) -> Tensor:
    rows = []
    for i in range(max_len):
        row = []
        for j in range(d_model // 2):
            angle = i / 10000 ** (2 * j / d_model)
            row += [math.sin(angle), math.cos(angle)]
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float32)


def pe_cos_as_shifted_sin(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(1e4) / d_model))
    phase = torch.tensor([0.0, math.pi / 2], dtype=torch.float64).repeat(d_model // 2)
    return torch.sin(pos * w.repeat_interleave(2) + phase).float()  # cos x = sin(x + pi/2)


CASES = [
    BlindCase(
        CHECK,
        "sin_cos_swapped",
        pe_swapped,
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
        "j_not_doubled",
        pe_j_not_doubled,
        "mistake",
        "I used 10000^(-j/d) with j = 0..d/2-1, forgetting the 2.",
    ),
    BlindCase(
        CHECK,
        "positive_exponent",
        pe_positive_exponent,
        "mistake",
        "I lost the minus sign: w_j = 10000^(2j/d).",
    ),
    BlindCase(
        CHECK,
        "sin_half_cos_half",
        pe_halves,
        "mistake",
        "I concatenated all sines then all cosines instead of interleaving.",
    ),
    BlindCase(
        CHECK,
        "doubled_twice",
        pe_doubled_twice,
        "mistake",
        "I took the even column indices as j and multiplied by 2 again.",
    ),
    BlindCase(
        CHECK,
        "integer_division",
        pe_integer_division,
        "mistake",
        "I wrote 2 * j // d_model in the exponent, an integer division.",
    ),
    BlindCase(
        CHECK,
        "column_exponent",
        pe_column_exponent,
        "mistake",
        "I gave every column its own exponent col/d, so sin and cos pairs differ.",
    ),
    BlindCase(
        CHECK, "transposed", pe_transposed, "mistake", "I returned the table as (d_model, max_len)."
    ),
    BlindCase(
        CHECK,
        "log10_base",
        pe_natural_log_base,
        "mistake",
        "I used log10(10000) in the exp form instead of the natural log.",
    ),
    BlindCase(
        CHECK,
        "numpy",
        pe_numpy,
        "correct",
        "Built in NumPy float64 and converted to a float32 tensor.",
    ),
    BlindCase(
        CHECK,
        "stack_interleave",
        pe_stack_interleave,
        "correct",
        "float32 throughout; sin and cos stacked on a last axis and flattened.",
    ),
    BlindCase(CHECK, "python_loops", pe_loops, "correct", "Two Python loops with math.sin/cos."),
    BlindCase(
        CHECK,
        "cos_as_shifted_sin",
        pe_cos_as_shifted_sin,
        "correct",
        "One sin over repeated frequencies with a phase of pi/2 in the odd columns.",
    ),
]
