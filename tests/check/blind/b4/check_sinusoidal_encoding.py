"""Blind cases for check_sinusoidal_encoding (chapter 10), written from the chapter's text only."""

from __future__ import annotations

import math

import torch

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


def _table(angles_even, angles_odd, max_len, d_model):
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(angles_even)
    pe[:, 1::2] = torch.cos(angles_odd)
    return pe


def cos_in_even_columns(max_len, d_model):
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.cos(pos * w)
    pe[:, 1::2] = torch.sin(pos * w)
    return pe.float()


def positions_from_one(max_len, d_model):
    pos = torch.arange(1, max_len + 1, dtype=torch.float64)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _table(pos * w, pos * w, max_len, d_model)


def exponent_j_over_d(max_len, d_model):
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j = torch.arange(d_model // 2, dtype=torch.float64)
    w = 10000.0 ** (-j / d_model)
    return _table(pos * w, pos * w, max_len, d_model)


def frequency_per_column(max_len, d_model):
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    col = torch.arange(d_model, dtype=torch.float64)
    angles = pos * 10000.0 ** (-col / d_model)  # (max_len, d_model), one frequency per column
    return _table(angles[:, 0::2], angles[:, 1::2], max_len, d_model)


def sines_then_cosines(max_len, d_model):
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return torch.cat([torch.sin(pos * w), torch.cos(pos * w)], dim=1).float()


def divide_by_frequency(max_len, d_model):
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _table(pos / w, pos / w, max_len, d_model)


def precedence_in_exponent(max_len, d_model):
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j = torch.arange(d_model // 2, dtype=torch.float64)
    w = 10000.0**-2 * j / d_model  # meant 10000 ** (-2 * j / d_model)
    return _table(pos * w, pos * w, max_len, d_model)


def python_loops(max_len, d_model):
    rows = []
    for i in range(max_len):
        row = []
        for j in range(d_model // 2):
            angle = i / 10000 ** (2 * j / d_model)
            row += [math.sin(angle), math.cos(angle)]
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float32).reshape(max_len, d_model)


def stack_and_flatten(max_len, d_model, base=10000.0):
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    inv_freq = torch.exp(
        -math.log(base) * torch.arange(0, d_model, 2, dtype=torch.float64) / d_model
    )
    angles = pos * inv_freq  # (max_len, D/2)
    pe = torch.stack([angles.sin(), angles.cos()], dim=-1)  # (max_len, D/2, 2)
    return pe.flatten(1).float()


CASES = [
    BlindCase(
        CHECK,
        "cos_in_even_columns",
        cos_in_even_columns,
        "mistake",
        "I put the cosines in the even columns and the sines in the odd ones",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        positions_from_one,
        "mistake",
        "I numbered the positions 1..max_len, as one counts words",
    ),
    BlindCase(
        CHECK,
        "exponent_j_over_d",
        exponent_j_over_d,
        "mistake",
        "I used 10000^(-j/d) with j = 0..d/2-1, forgetting the 2 in 2j",
    ),
    BlindCase(
        CHECK,
        "frequency_per_column",
        frequency_per_column,
        "mistake",
        "I gave every column c its own frequency 10000^(-c/d), so the cosine of a pair "
        "has another frequency than its sine",
    ),
    BlindCase(
        CHECK,
        "sines_then_cosines",
        sines_then_cosines,
        "mistake",
        "I concatenated all the sines, then all the cosines, instead of interleaving them",
    ),
    BlindCase(
        CHECK,
        "divide_by_frequency",
        divide_by_frequency,
        "mistake",
        "I computed w_j = 10000^(-2j/d) and then divided the position by it",
    ),
    BlindCase(
        CHECK,
        "precedence_in_exponent",
        precedence_in_exponent,
        "mistake",
        "I wrote 10000**-2*j/d without brackets around the exponent",
    ),
    BlindCase(
        CHECK,
        "python_loops",
        python_loops,
        "correct",
        "two Python loops with math.sin and math.cos, i / 10000^(2j/d), then a tensor",
    ),
    BlindCase(
        CHECK,
        "stack_and_flatten",
        stack_and_flatten,
        "correct",
        "I stacked sin and cos on a last axis and flattened it; an optional base argument",
    ),
]
