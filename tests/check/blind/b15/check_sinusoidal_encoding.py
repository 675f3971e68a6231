"""Blind set B15, check_sinusoidal_encoding (chapter 10): the sinusoidal position table."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


def _angles(max_len: int, d_model: int, start: int = 0) -> Tensor:
    pos = torch.arange(start, start + max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    return pos * torch.pow(10000.0, -j2 / d_model)


def _interleave(sin: Tensor, cos: Tensor) -> Tensor:
    return torch.stack([sin, cos], dim=-1).flatten(-2).float()


# ---------------------------------------------------------------- mistakes


def pe_swapped(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return _interleave(torch.cos(a), torch.sin(a))


def pe_from_one(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model, start=1)  # positions 1..max_len
    return _interleave(torch.sin(a), torch.cos(a))


def pe_j_not_2j(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j = torch.arange(d_model // 2, dtype=torch.float64)
    a = pos * 10000.0 ** (-j / d_model)
    return _interleave(torch.sin(a), torch.cos(a))


def pe_positive_exponent(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    a = pos * 10000.0 ** (j2 / d_model)
    return _interleave(torch.sin(a), torch.cos(a))


def pe_per_column(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    c = torch.arange(d_model, dtype=torch.float64)  # each column its own frequency
    a = pos * 10000.0 ** (-c / d_model)
    pe = torch.empty(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(a[:, 0::2])
    pe[:, 1::2] = torch.cos(a[:, 1::2])
    return pe.float()


def pe_halves(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return torch.cat([torch.sin(a), torch.cos(a)], dim=-1).float()  # [sin | cos]


def pe_transposed(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return _interleave(torch.sin(a), torch.cos(a)).T


def pe_integer_division(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len)[:, None]
    j2 = torch.arange(0, d_model, 2)
    a = pos / 10000 ** (j2 // d_model)  # integer division: exponent 0
    return _interleave(torch.sin(a), torch.cos(a))


def pe_divides_by_freq(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    a = pos / torch.exp(-math.log(10000.0) * j2 / d_model)  # divided by w_j
    return _interleave(torch.sin(a), torch.cos(a))


def pe_base_e(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    a = pos * torch.exp(-10000.0 * j2 / d_model / 10000.0 * math.log(10.0))  # base 10, not 10000
    return _interleave(torch.sin(a), torch.cos(a))


# ---------------------------------------------------------------- correct variants


def pe_loops(max_len: int, d_model: int) -> Tensor:
    """Two Python loops with math.sin and math.cos."""
    pe = torch.zeros(max_len, d_model)
    for i in range(max_len):
        for j in range(d_model // 2):
            w = 10000 ** (-2 * j / d_model)
            pe[i, 2 * j] = math.sin(i * w)
            pe[i, 2 * j + 1] = math.cos(i * w)
    return pe


def pe_div_term(max_len: int, d_model: int) -> Tensor:
    """The Annotated Transformer's div_term, computed in float64, returned float32."""
    position = torch.arange(0, max_len, dtype=torch.double).unsqueeze(1)
    div_term = 1.0 / (10000.0 ** (torch.arange(0, d_model, 2, dtype=torch.double) / d_model))
    pe = torch.zeros(max_len, d_model, dtype=torch.double)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe.to(torch.float32)


def pe_outer_stack(max_len: int, d_model: int, base: float = 10000.0) -> Tensor:
    """torch.outer and stack/reshape to interleave; an extra base argument."""
    inv = base ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    a = torch.outer(torch.arange(max_len, dtype=torch.float64), inv)
    return torch.stack((a.sin(), a.cos()), dim=2).reshape(max_len, d_model).float()


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
        pe_from_one,
        "mistake",
        "I numbered positions from 1, so the first row is not sin(0), cos(0).",
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
        "positive_exponent",
        pe_positive_exponent,
        "mistake",
        "I multiplied by 10000^(2j/d) instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "frequency_per_column",
        pe_per_column,
        "mistake",
        "I gave every column its own exponent c/d, so sin and cos of a pair differ.",
    ),
    BlindCase(
        CHECK,
        "halves_not_interleaved",
        pe_halves,
        "mistake",
        "I put all sines in the first half and all cosines in the second.",
    ),
    BlindCase(CHECK, "transposed", pe_transposed, "mistake", "I return (d_model, max_len)."),
    BlindCase(
        CHECK,
        "integer_division",
        pe_integer_division,
        "mistake",
        "I wrote j2 // d_model, so every frequency is 1.",
    ),
    BlindCase(
        CHECK,
        "divides_by_frequency",
        pe_divides_by_freq,
        "mistake",
        "I divided the position by w_j (already the inverse) instead of multiplying.",
    ),
    BlindCase(
        CHECK,
        "base_ten",
        pe_base_e,
        "mistake",
        "I used base 10 instead of 10000 in the frequencies.",
    ),
    BlindCase(
        CHECK,
        "python_loops",
        pe_loops,
        "correct",
        "Two loops with math.sin / math.cos into a float32 table.",
    ),
    BlindCase(
        CHECK,
        "div_term_double",
        pe_div_term,
        "correct",
        "div_term as 1 / 10000^(2j/d) in float64, cast to float32.",
    ),
    BlindCase(
        CHECK,
        "outer_stack_base_arg",
        pe_outer_stack,
        "correct",
        "torch.outer and stack/reshape; an extra base argument with default 10000.",
    ),
]
