"""Chapter 10, "Your turn": ``sinusoidal_encoding(max_len, d_model) -> (max_len, d_model)``.

Row i: ``sin(i w_j)`` in column 2j and ``cos(i w_j)`` in column 2j + 1, ``w_j = 10000^(-2j/d)``.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


# --- mistakes ---------------------------------------------------------------------------------


def positions_from_one(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(1, max_len + 1, dtype=torch.float64)[:, None]  # the 1st position is 1
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * w)
    pe[:, 1::2] = torch.cos(pos * w)
    return pe.float()


def sines_then_cosines_halves(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return torch.cat([torch.sin(pos * w), torch.cos(pos * w)], dim=1).float()  # [sin | cos]


def every_column_own_frequency(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    col = torch.arange(d_model, dtype=torch.float64)
    angles = pos * 10000.0 ** (-col / d_model)  # column c uses 10000^(-c/d)
    pe = torch.where(col.long() % 2 == 0, torch.sin(angles), torch.cos(angles))
    return pe.float()


def integer_exponent(max_len: int, d_model: int) -> Tensor:
    pe = torch.zeros(max_len, d_model)
    for i in range(max_len):
        for j in range(d_model // 2):
            w = 10000 ** -(2 * j // d_model)  # integer division: always 10000 ** 0
            pe[i, 2 * j] = math.sin(i * w)
            pe[i, 2 * j + 1] = math.cos(i * w)
    return pe


def log10_instead_of_ln(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    inv_freq = torch.exp(-math.log10(10000.0) * j2 / d_model)  # log10 where ln belongs
    pe = torch.empty(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * inv_freq)
    pe[:, 1::2] = torch.cos(pos * inv_freq)
    return pe.float()


def transposed_table(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = w[:, None] * pos[None, :]  # (d/2, max_len): frequencies down, positions across
    pe = torch.empty(d_model, max_len, dtype=torch.float64)
    pe[0::2] = torch.sin(angles)
    pe[1::2] = torch.cos(angles)
    return pe.float()


def factor_two_forgotten(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j = torch.arange(d_model // 2, dtype=torch.float64)
    w = 10000.0 ** (-j / d_model)  # j / d instead of 2j / d
    pe = torch.empty(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * w), torch.cos(pos * w)
    return pe.float()


def exponent_sign_flipped(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)  # 10000^(+2j/d)
    pe = torch.empty(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * w), torch.cos(pos * w)
    return pe.float()


def sine_in_both_columns(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.empty(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * w)
    pe[:, 1::2] = torch.sin(pos * w)  # copied the line above and forgot to change it
    return pe.float()


def one_row_short(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(1, max_len, dtype=torch.float64)[:, None]  # positions 1 .. max_len - 1
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.empty(len(pos), d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * w), torch.cos(pos * w)
    return pe.float()


# --- correct variants -------------------------------------------------------------------------


def python_loops(max_len: int, d_model: int) -> Tensor:
    rows = []
    for i in range(max_len):
        row = []
        for j in range(d_model // 2):
            w = 1.0 / 10000 ** (2 * j / d_model)
            row += [math.sin(i * w), math.cos(i * w)]
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float32)


def stack_and_flatten(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)
    w = torch.pow(10000.0, -torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = torch.outer(pos, w)  # (max_len, d/2)
    pe = torch.stack([angles.sin(), angles.cos()], dim=-1)  # (max_len, d/2, 2)
    return pe.flatten(start_dim=1).to(torch.float32)  # sin, cos, sin, cos, ...


def float32_division_form(max_len: int, d_model: int) -> Tensor:
    position = torch.arange(max_len).float().unsqueeze(1)
    div_term = 10000 ** (torch.arange(0, d_model, 2).float() / d_model)
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(position / div_term)
    pe[:, 1::2] = torch.cos(position / div_term)
    return pe


CASES = [
    BlindCase(
        CHECK,
        "positions_from_one",
        positions_from_one,
        "mistake",
        "I numbered the positions 1..max_len instead of 0..max_len-1.",
    ),
    BlindCase(
        CHECK,
        "sines_then_cosines_halves",
        sines_then_cosines_halves,
        "mistake",
        "I put all the sines in the first half of the columns and all the cosines in the second "
        "half instead of interleaving them.",
    ),
    BlindCase(
        CHECK,
        "every_column_own_frequency",
        every_column_own_frequency,
        "mistake",
        "I gave each column c the frequency 10000^(-c/d), so each cosine column has a different "
        "frequency from its sine partner.",
    ),
    BlindCase(
        CHECK,
        "integer_exponent",
        integer_exponent,
        "mistake",
        "I wrote the exponent as 2 * j // d_model, integer division, so every frequency is 1.",
    ),
    BlindCase(
        CHECK,
        "log10_instead_of_ln",
        log10_instead_of_ln,
        "mistake",
        "I wrote exp(-log10(10000) * 2j / d) with the base-10 logarithm instead of the natural one.",
    ),
    BlindCase(
        CHECK,
        "transposed_table",
        transposed_table,
        "mistake",
        "I built the table with frequencies down the rows and positions across, (d_model, max_len).",
    ),
    BlindCase(
        CHECK,
        "factor_two_forgotten",
        factor_two_forgotten,
        "mistake",
        "I used w_j = 10000^(-j/d) with j = 0..d/2-1, forgetting the factor 2.",
    ),
    BlindCase(
        CHECK,
        "exponent_sign_flipped",
        exponent_sign_flipped,
        "mistake",
        "I used 10000^(+2j/d), so the frequencies grow with j instead of shrinking.",
    ),
    BlindCase(
        CHECK,
        "sine_in_both_columns",
        sine_in_both_columns,
        "mistake",
        "I copied the sine line for the odd columns and forgot to change it to cosine.",
    ),
    BlindCase(
        CHECK,
        "one_row_short",
        one_row_short,
        "mistake",
        "I used torch.arange(1, max_len) for the positions, which is one row short and starts "
        "at 1.",
    ),
    BlindCase(
        CHECK,
        "python_loops",
        python_loops,
        "correct",
        "I filled the table with two Python loops and math.sin / math.cos.",
    ),
    BlindCase(
        CHECK,
        "stack_and_flatten",
        stack_and_flatten,
        "correct",
        "I stacked sin and cos on a new last axis and flattened, which interleaves them.",
    ),
    BlindCase(
        CHECK,
        "float32_division_form",
        float32_division_form,
        "correct",
        "I divided the positions by 10000^(2j/d) and computed everything in float32.",
    ),
]
