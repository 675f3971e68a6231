"""Blind set B12, check_sinusoidal_encoding (chapter 10): the sinusoidal position table."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


def _angles(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    return pos * torch.pow(10000.0, -j2 / d_model)  # (max_len, D/2)


def _interleave(a: Tensor, b: Tensor) -> Tensor:
    return torch.stack([a, b], dim=-1).flatten(-2).float()


# ---------------------------------------------------------------- mistakes


def pe_swapped(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return _interleave(torch.cos(a), torch.sin(a))  # cos first


def pe_positions_from_one(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(1, max_len + 1, dtype=torch.float64).unsqueeze(1)  # positions 1..L
    a = pos * torch.pow(10000.0, -torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _interleave(torch.sin(a), torch.cos(a))


def pe_j_not_2j(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    j = torch.arange(d_model // 2, dtype=torch.float64)
    a = pos * 10000.0 ** (-j / d_model)  # exponent j/d
    return _interleave(torch.sin(a), torch.cos(a))


def pe_growing_freq(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    a = pos * 10000.0 ** (j2 / d_model)  # forgot the minus sign
    return _interleave(torch.sin(a), torch.cos(a))


def pe_column_exponent(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    col = torch.arange(d_model, dtype=torch.float64)
    a = pos / 10000.0 ** (col / d_model)  # each column its own frequency
    pe = torch.where(col.long() % 2 == 0, torch.sin(a), torch.cos(a))
    return pe.float()


def pe_concatenated(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return torch.cat([torch.sin(a), torch.cos(a)], dim=-1).float()  # [sin | cos]


def pe_transposed(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return _interleave(torch.sin(a), torch.cos(a)).T  # (d_model, max_len)


def pe_two_pi(max_len: int, d_model: int) -> Tensor:
    a = 2 * math.pi * _angles(max_len, d_model)  # the wavelength is 2 pi 10000^(2j/d)
    return _interleave(torch.sin(a), torch.cos(a))


def pe_integer_division(max_len: int, d_model: int) -> Tensor:
    pe = torch.zeros(max_len, d_model)
    for pos in range(max_len):
        for i in range(0, d_model, 2):
            w = 1 / 10000 ** (i // d_model)  # integer division: always 10000^0
            pe[pos, i] = math.sin(pos * w)
            pe[pos, i + 1] = math.cos(pos * w)
    return pe


# ---------------------------------------------------------------- correct variants


def pe_loops(max_len: int, d_model: int) -> Tensor:
    pe = torch.zeros(max_len, d_model)
    for pos in range(max_len):
        for i in range(0, d_model, 2):
            w = 10000 ** (-i / d_model)
            pe[pos, i] = math.sin(pos * w)
            pe[pos, i + 1] = math.cos(pos * w)
    return pe


def pe_stack_flatten(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return torch.stack((a.sin(), a.cos()), dim=2).reshape(max_len, d_model).to(torch.float32)


def pe_float32_div(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]
    div = torch.exp(torch.arange(0, d_model, 2).float() * (math.log(10000.0) / d_model))
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(pos / div)
    pe[:, 1::2] = torch.cos(pos / div)
    return pe


CASES = [
    BlindCase(
        CHECK,
        "sin_cos_swapped",
        pe_swapped,
        "mistake",
        "I put the cosine in the even columns and the sine in the odd ones.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        pe_positions_from_one,
        "mistake",
        "I numbered the positions from 1, so the first row is not sin 0 / cos 0.",
    ),
    BlindCase(
        CHECK,
        "exponent_j_over_d",
        pe_j_not_2j,
        "mistake",
        "I used 10000^(-j/d) with j the pair index, forgetting the 2.",
    ),
    BlindCase(
        CHECK,
        "growing_frequencies",
        pe_growing_freq,
        "mistake",
        "I multiplied the position by 10000^(2j/d) instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "column_exponent",
        pe_column_exponent,
        "mistake",
        "I gave each column its own exponent col/d, so a cosine column does not share its "
        "sine's frequency.",
    ),
    BlindCase(
        CHECK,
        "concatenated",
        pe_concatenated,
        "mistake",
        "I put all sines in the first half and all cosines in the second.",
    ),
    BlindCase(
        CHECK, "transposed", pe_transposed, "mistake", "I returned the table as (d_model, max_len)."
    ),
    BlindCase(
        CHECK,
        "two_pi",
        pe_two_pi,
        "mistake",
        "I multiplied the angle by 2 pi, mixing up frequency and wavelength.",
    ),
    BlindCase(
        CHECK,
        "integer_division",
        pe_integer_division,
        "mistake",
        "I wrote i // d_model in the exponent, which is always 0.",
    ),
    BlindCase(
        CHECK, "python_loops", pe_loops, "correct", "Two Python loops with math.sin and math.cos."
    ),
    BlindCase(
        CHECK,
        "stack_reshape",
        pe_stack_flatten,
        "correct",
        "sin and cos stacked on a new last axis and reshaped to interleave them.",
    ),
    BlindCase(
        CHECK,
        "float32_div_term",
        pe_float32_div,
        "correct",
        "The Annotated Transformer's float32 div_term with exp and log.",
    ),
]
