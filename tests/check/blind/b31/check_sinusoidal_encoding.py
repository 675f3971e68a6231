"""Blind set B31, check_sinusoidal_encoding (chapter 10): the sine/cosine position table."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


def _interleave(sin: Tensor, cos: Tensor) -> Tensor:
    return torch.stack([sin, cos], dim=-1).flatten(-2)  # columns sin0, cos0, sin1, cos1, ...


# ---------------------------------------------------------------- mistakes


def pe_sin_cos_swapped(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _interleave(torch.cos(pos * w), torch.sin(pos * w)).float()  # cos first


def pe_positions_from_one(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(1, max_len + 1, dtype=torch.float64)[:, None]  # position 1 is the first
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _interleave(torch.sin(pos * w), torch.cos(pos * w)).float()


def pe_exponent_j_over_d(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j = torch.arange(d_model // 2, dtype=torch.float64)
    w = 10000.0 ** (-j / d_model)  # j, not 2j
    return _interleave(torch.sin(pos * w), torch.cos(pos * w)).float()


def pe_exponent_per_column(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    col = torch.arange(d_model, dtype=torch.float64)
    angles = pos / 10000.0 ** (col / d_model)  # each column its own exponent
    pe = torch.empty(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angles[:, 0::2])
    pe[:, 1::2] = torch.cos(angles[:, 1::2])
    return pe.float()


def pe_halves(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return torch.cat([torch.sin(pos * w), torch.cos(pos * w)], dim=-1).float()  # [sin | cos]


def pe_base_1000(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 1000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _interleave(torch.sin(pos * w), torch.cos(pos * w)).float()


def pe_inverted_frequencies(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)  # no minus
    return _interleave(torch.sin(pos * w), torch.cos(pos * w)).float()


def pe_integer_exponent(max_len: int, d_model: int) -> Tensor:
    pe = torch.zeros(max_len, d_model)
    for i in range(max_len):
        for j in range(d_model // 2):
            w = 10000 ** (-(2 * j // d_model))  # integer division: always 10000**0
            pe[i, 2 * j] = math.sin(i * w)
            pe[i, 2 * j + 1] = math.cos(i * w)
    return pe


def pe_transposed(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[None, :]  # positions along the columns
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)[:, None]
    pe = torch.empty(d_model, max_len, dtype=torch.float64)
    pe[0::2] = torch.sin(w * pos)
    pe[1::2] = torch.cos(w * pos)
    return pe.float()  # (d_model, max_len)


def pe_with_batch_axis(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = _interleave(torch.sin(pos * w), torch.cos(pos * w)).float()
    return pe.unsqueeze(0)  # (1, max_len, d_model), ready to add to x


def pe_sine_everywhere(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j = torch.arange(d_model, dtype=torch.float64) // 2  # pair index of each column
    w = 10000.0 ** (-2 * j / d_model)
    return torch.sin(pos * w).float()  # forgot the cosines


def pe_log10(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    w = torch.exp(-math.log10(10000.0) * j2 / d_model)  # exp of a log, but the log was log10
    return _interleave(torch.sin(pos * w), torch.cos(pos * w)).float()


def pe_linspace_positions(max_len: int, d_model: int) -> Tensor:
    pos = torch.linspace(0, max_len, max_len, dtype=torch.float64)[:, None]  # 0 .. max_len
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _interleave(torch.sin(pos * w), torch.cos(pos * w)).float()


def pe_d_minus_two(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    w = 10000.0 ** (-j2 / (d_model - 2))  # so that the last pair reaches 10000 exactly
    return _interleave(torch.sin(pos * w), torch.cos(pos * w)).float()


# ---------------------------------------------------------------- correct variants


def pe_loops(max_len: int, d_model: int) -> Tensor:
    pe = torch.zeros(max_len, d_model)
    for i in range(max_len):
        for j in range(d_model // 2):
            w = 10000.0 ** (-2 * j / d_model)
            pe[i, 2 * j] = math.sin(i * w)
            pe[i, 2 * j + 1] = math.cos(i * w)
    return pe


def pe_pow_half_width(max_len: int, d_model: int) -> Tensor:
    j = torch.arange(d_model // 2, dtype=torch.float64)
    w = torch.pow(10000.0, -j / (d_model / 2))  # 2j/d = j/(d/2)
    angles = torch.outer(torch.arange(max_len, dtype=torch.float64), w)
    pe = torch.stack((angles.sin(), angles.cos()), dim=2).reshape(max_len, d_model)
    return pe.to(torch.float32)


def pe_float32_exp_log(max_len: int, d_model: int) -> Tensor:
    position = torch.arange(max_len).unsqueeze(1).float()
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


def pe_cos_as_shifted_sin(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    col = torch.arange(d_model)
    w = 10000.0 ** (-(col - col % 2).double() / d_model)  # 2j for both columns of a pair
    phase = (col % 2).double() * (math.pi / 2)  # cos x = sin(x + pi/2)
    return torch.sin(pos * w + phase).float()


CASES = [
    BlindCase(
        CHECK,
        "sin_cos_swapped",
        pe_sin_cos_swapped,
        "mistake",
        "I put the cosine in the even columns and the sine in the odd ones.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        pe_positions_from_one,
        "mistake",
        "I numbered the positions 1..max_len, so the first row is not position 0.",
    ),
    BlindCase(
        CHECK,
        "exponent_j_over_d",
        pe_exponent_j_over_d,
        "mistake",
        "I used 10000^(-j/d) with j the pair index, forgetting the 2.",
    ),
    BlindCase(
        CHECK,
        "exponent_per_column",
        pe_exponent_per_column,
        "mistake",
        "I gave every column k its own frequency 10000^(-k/d), so a cosine column does not "
        "share its sine's frequency.",
    ),
    BlindCase(
        CHECK,
        "sin_half_then_cos_half",
        pe_halves,
        "mistake",
        "I concatenated all sines then all cosines instead of interleaving them.",
    ),
    BlindCase(
        CHECK,
        "base_1000",
        pe_base_1000,
        "mistake",
        "I wrote 1000 instead of 10000 as the base.",
    ),
    BlindCase(
        CHECK,
        "frequencies_inverted",
        pe_inverted_frequencies,
        "mistake",
        "I multiplied by 10000^(2j/d) instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "integer_division_in_exponent",
        pe_integer_exponent,
        "mistake",
        "I wrote 2 * j // d_model in the exponent; the integer division makes it 0.",
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
        "batch_axis_added",
        pe_with_batch_axis,
        "mistake",
        "I returned (1, max_len, d_model) so that it adds to a batch directly.",
    ),
    BlindCase(
        CHECK,
        "sine_everywhere",
        pe_sine_everywhere,
        "mistake",
        "I used the sine in every column and forgot the cosines.",
    ),
    BlindCase(
        CHECK,
        "log10_in_exp",
        pe_log10,
        "mistake",
        "I wrote the frequency as exp(-log(10000) 2j/d) but used math.log10.",
    ),
    BlindCase(
        CHECK,
        "linspace_positions",
        pe_linspace_positions,
        "mistake",
        "I made the positions with torch.linspace(0, max_len, max_len), which are not integers.",
    ),
    BlindCase(
        CHECK,
        "denominator_d_minus_2",
        pe_d_minus_two,
        "mistake",
        "I divided the exponent by d_model - 2 so that the last frequency is exactly 1/10000.",
    ),
    BlindCase(
        CHECK,
        "python_loops",
        pe_loops,
        "correct",
        "Two Python loops with math.sin and math.cos.",
    ),
    BlindCase(
        CHECK,
        "pow_over_half_width",
        pe_pow_half_width,
        "correct",
        "Frequencies 10000^(-j/(d/2)), torch.outer, sines and cosines stacked and reshaped.",
    ),
    BlindCase(
        CHECK,
        "float32_exp_log",
        pe_float32_exp_log,
        "correct",
        "The Annotated Transformer's version, all in float32.",
    ),
    BlindCase(
        CHECK,
        "cos_as_shifted_sine",
        pe_cos_as_shifted_sin,
        "correct",
        "One sine for all columns, the odd ones shifted by pi/2.",
    ),
]
