"""Blind set B34, check_sinusoidal_encoding (chapter 10): the sinusoidal table by readers."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


def _angles(max_len: int, d_model: int, dtype=torch.float64) -> Tensor:
    pos = torch.arange(max_len, dtype=dtype)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=dtype) / d_model)
    return pos * w  # (max_len, D/2)


def _interleave(a: Tensor, b: Tensor) -> Tensor:
    return torch.stack([a, b], dim=-1).flatten(-2).float()


# ---------------------------------------------------------------- mistakes


def pe_swapped(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return _interleave(torch.cos(a), torch.sin(a))  # cos first


def pe_halves(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return torch.cat([torch.sin(a), torch.cos(a)], dim=-1).float()  # sines then cosines


def pe_positions_from_one(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(1, max_len + 1, dtype=torch.float64)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _interleave(torch.sin(pos * w), torch.cos(pos * w))


def pe_j_not_2j(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j = torch.arange(d_model // 2, dtype=torch.float64)
    w = 10000.0 ** (-j / d_model)  # forgot the 2 in 2j
    return _interleave(torch.sin(pos * w), torch.cos(pos * w))


def pe_positive_exponent(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _interleave(torch.sin(pos * w), torch.cos(pos * w))  # multiplied by the wavelength


def pe_every_column(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    i = torch.arange(d_model, dtype=torch.float64)
    w = 10000.0 ** (-2 * i / d_model)  # one frequency per column
    pe = torch.where(i.long() % 2 == 0, torch.sin(pos * w), torch.cos(pos * w))
    return pe.float()


def pe_column_index(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    i = torch.arange(d_model, dtype=torch.float64)
    w = 10000.0 ** (-i / d_model)  # the column index i in place of 2j
    pe = torch.where(i.long() % 2 == 0, torch.sin(pos * w), torch.cos(pos * w))
    return pe.float()


def pe_float64(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(a)
    pe[:, 1::2] = torch.cos(a)
    return pe  # kept float64 for precision


def pe_transposed(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return _interleave(torch.sin(a), torch.cos(a)).T  # (d_model, max_len)


def pe_batch_dim(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return _interleave(torch.sin(a), torch.cos(a)).unsqueeze(0)  # (1, max_len, D) to add


def pe_log_base_e(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = torch.exp(-math.log10(10000.0) * torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _interleave(torch.sin(pos * w), torch.cos(pos * w))  # log10 instead of ln


def pe_cos_minus(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return _interleave(torch.sin(a), 1 - torch.cos(a))  # so that row 0 is all zeros


def pe_d_model_minus_one(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / (d_model - 2))
    return _interleave(torch.sin(pos * w), torch.cos(pos * w))  # last frequency exactly 1e-4


# ---------------------------------------------------------------- correct variants


def pe_loops(max_len: int, d_model: int) -> Tensor:
    pe = torch.zeros(max_len, d_model)
    for i in range(max_len):
        for j in range(d_model // 2):
            w = 10000 ** (-2 * j / d_model)
            pe[i, 2 * j] = math.sin(i * w)
            pe[i, 2 * j + 1] = math.cos(i * w)
    return pe


def pe_exp_log_float32(max_len: int, d_model: int) -> Tensor:
    position = torch.arange(max_len).unsqueeze(1).float()
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


def pe_outer_stack(max_len: int, d_model: int) -> Tensor:
    inv = 1.0 / torch.pow(10000.0, torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    ang = torch.outer(torch.arange(max_len, dtype=torch.float64), inv)
    return torch.stack((ang.sin(), ang.cos()), dim=2).reshape(max_len, d_model).to(torch.float32)


CASES = [
    BlindCase(
        CHECK,
        "cos_sin_swapped",
        pe_swapped,
        "mistake",
        "I put the cosine in the even columns and the sine in the odd ones",
    ),
    BlindCase(
        CHECK,
        "halves_not_interleaved",
        pe_halves,
        "mistake",
        "I put all the sines in the first half and all the cosines in the second",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        pe_positions_from_one,
        "mistake",
        "I numbered the positions from 1",
    ),
    BlindCase(
        CHECK,
        "exponent_j_over_d",
        pe_j_not_2j,
        "mistake",
        "I used j / d_model in the exponent instead of 2j / d_model",
    ),
    BlindCase(
        CHECK,
        "positive_exponent",
        pe_positive_exponent,
        "mistake",
        "I forgot the minus sign in the exponent",
    ),
    BlindCase(
        CHECK,
        "frequency_per_column",
        pe_every_column,
        "mistake",
        "I gave every column its own frequency 10000^(-2i/d)",
    ),
    BlindCase(
        CHECK,
        "column_index_exponent",
        pe_column_index,
        "mistake",
        "I used the column index i in 10000^(-i/d), so the cosine column has its own frequency",
    ),
    BlindCase(CHECK, "float64_table", pe_float64, "mistake", "I returned the table in float64"),
    BlindCase(
        CHECK, "table_transposed", pe_transposed, "mistake", "I returned a (d_model, max_len) table"
    ),
    BlindCase(
        CHECK,
        "batch_axis",
        pe_batch_dim,
        "mistake",
        "I returned (1, max_len, d_model) so it adds to a batch",
    ),
    BlindCase(
        CHECK,
        "log10",
        pe_log_base_e,
        "mistake",
        "I wrote exp(-log10(10000) * 2j / d) instead of the natural log",
    ),
    BlindCase(
        CHECK,
        "one_minus_cos",
        pe_cos_minus,
        "mistake",
        "I used 1 - cos so that position 0 is all zeros",
    ),
    BlindCase(
        CHECK,
        "divide_by_d_minus_2",
        pe_d_model_minus_one,
        "mistake",
        "I divided the exponent by d_model - 2 so the last frequency is 1/10000",
    ),
    BlindCase(
        CHECK,
        "nested_loops",
        pe_loops,
        "correct",
        "I filled the table with two Python loops and math.sin/cos",
    ),
    BlindCase(
        CHECK,
        "exp_log_float32",
        pe_exp_log_float32,
        "correct",
        "I computed the frequencies with exp and log in float32",
    ),
    BlindCase(
        CHECK,
        "outer_and_stack",
        pe_outer_stack,
        "correct",
        "I used torch.outer and stacked sin and cos to interleave them",
    ),
]
