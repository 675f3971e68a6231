"""Blind set B9, check_sinusoidal_encoding (chapter 10): the sinusoidal position table."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"

# ---------------------------------------------------------------- mistakes


def pe_swapped(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    w = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.cos(pos * w)
    pe[:, 1::2] = torch.sin(pos * w)
    return pe.float()


def pe_positions_from_one(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(1, max_len + 1, dtype=torch.float64).unsqueeze(1)  # first word = 1
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * w)
    pe[:, 1::2] = torch.cos(pos * w)
    return pe.float()


def pe_exponent_j_over_d(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    j = torch.arange(d_model // 2, dtype=torch.float64)
    w = 10000.0 ** (-j / d_model)  # j instead of 2j
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * w)
    pe[:, 1::2] = torch.cos(pos * w)
    return pe.float()


def pe_multiplied_by_period(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    div_term = 10000.0 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * div_term)  # should be pos / div_term
    pe[:, 1::2] = torch.cos(pos * div_term)
    return pe.float()


def pe_halves_concatenated(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = pos * w
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=1).float()  # sines, then cosines


def pe_max_len_in_exponent(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / max_len)  # typo
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * w)
    pe[:, 1::2] = torch.cos(pos * w)
    return pe.float()


def pe_frequency_per_column(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    w = 10000.0 ** (-torch.arange(d_model, dtype=torch.float64) / d_model)  # one per column
    angles = pos * w  # (max_len, D)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angles[:, 0::2])
    pe[:, 1::2] = torch.cos(angles[:, 1::2])  # column 2j+1 gets exponent (2j+1)/d
    return pe.float()


def pe_integer_division(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len).unsqueeze(1)
    two_j = torch.arange(0, d_model, 2)
    w = 10000.0 ** (-(two_j // d_model))  # integer division: always 0
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(pos * w)
    pe[:, 1::2] = torch.cos(pos * w)
    return pe


def pe_transposed(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = w.unsqueeze(1) * pos  # (D/2, max_len)
    pe = torch.zeros(d_model, max_len, dtype=torch.float64)
    pe[0::2] = torch.sin(angles)
    pe[1::2] = torch.cos(angles)
    return pe.float()  # (d_model, max_len)


def pe_log_base_10(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    w = torch.exp(-math.log10(10000.0) * j2 / d_model)  # log10 where the natural log belongs
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * w)
    pe[:, 1::2] = torch.cos(pos * w)
    return pe.float()


# ---------------------------------------------------------------- correct variants


def pe_python_loops(max_len: int, d_model: int) -> Tensor:
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    for i in range(max_len):
        for j in range(d_model // 2):
            angle = i / 10000 ** (2 * j / d_model)
            pe[i, 2 * j] = math.sin(angle)
            pe[i, 2 * j + 1] = math.cos(angle)
    return pe.float()


def pe_stack_interleave(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = torch.pow(10000.0, -torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = pos * w
    pe = torch.stack([angles.sin(), angles.cos()], dim=-1)  # (max_len, D/2, 2)
    return pe.flatten(1).to(torch.float32)


def pe_outer_and_view(max_len: int, d_model: int) -> Tensor:
    j = torch.arange(d_model // 2, dtype=torch.float64)
    inv_freq = 1.0 / (10000.0 ** (2 * j / d_model))
    angles = torch.outer(torch.arange(max_len, dtype=torch.float64), inv_freq)
    pe = torch.empty(max_len, d_model // 2, 2, dtype=torch.float64)
    pe[..., 0] = angles.sin()
    pe[..., 1] = angles.cos()
    return pe.view(max_len, d_model).float()


def pe_cos_as_shifted_sin(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    col = torch.arange(d_model)
    w = 10000.0 ** (-(col - col % 2).double() / d_model)  # 2j for both columns 2j, 2j+1
    phase = (col % 2).double() * (math.pi / 2)  # cos x = sin(x + pi/2)
    return torch.sin(pos * w + phase).float()


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
        "I numbered the positions 1..max_len instead of 0..max_len-1.",
    ),
    BlindCase(
        CHECK,
        "exponent_j_not_2j",
        pe_exponent_j_over_d,
        "mistake",
        "I used 10000^(-j/d) with j = 0..d/2-1, forgetting the factor 2.",
    ),
    BlindCase(
        CHECK,
        "multiplied_by_div_term",
        pe_multiplied_by_period,
        "mistake",
        "I computed div_term = 10000^(2j/d) and multiplied the positions by it instead of "
        "dividing.",
    ),
    BlindCase(
        CHECK,
        "sines_then_cosines",
        pe_halves_concatenated,
        "mistake",
        "I concatenated all the sines and then all the cosines instead of interleaving them.",
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
        "frequency_per_column",
        pe_frequency_per_column,
        "mistake",
        "I computed a frequency for every column 10000^(-c/d), so the cosine in column "
        "2j+1 uses the exponent (2j+1)/d instead of sharing 2j/d with its sine.",
    ),
    BlindCase(
        CHECK,
        "integer_division_in_exponent",
        pe_integer_division,
        "mistake",
        "I wrote the exponent with // on integer tensors, so it is always 0 and every "
        "frequency is 1.",
    ),
    BlindCase(
        CHECK,
        "transposed_table",
        pe_transposed,
        "mistake",
        "I built the table as (d_model, max_len), one column per position.",
    ),
    BlindCase(
        CHECK,
        "log10_in_exp",
        pe_log_base_10,
        "mistake",
        "I wrote exp(-log10(10000) * 2j / d), mixing log base 10 with exp.",
    ),
    BlindCase(
        CHECK,
        "python_loops",
        pe_python_loops,
        "correct",
        "I filled the table with two Python loops and math.sin / math.cos.",
    ),
    BlindCase(
        CHECK,
        "stack_and_flatten",
        pe_stack_interleave,
        "correct",
        "I stacked sin and cos on a last axis and flattened it to interleave.",
    ),
    BlindCase(
        CHECK,
        "outer_and_view",
        pe_outer_and_view,
        "correct",
        "I used torch.outer for the angles and a (max_len, D/2, 2) buffer viewed as (max_len, D).",
    ),
    BlindCase(
        CHECK,
        "cos_as_shifted_sin",
        pe_cos_as_shifted_sin,
        "correct",
        "I wrote every column as a sine, with a phase of pi/2 on the odd columns "
        "(cos x = sin(x + pi/2)).",
    ),
]
