"""Blind cases for check_sinusoidal_encoding (chapter 10), written from the chapter's text only."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


def _angles(max_len: int, d_model: int, first: int = 0, exponent_of=None) -> Tensor:
    pos = torch.arange(first, first + max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64) if exponent_of is None else exponent_of
    return pos * torch.pow(10000.0, -j2 / d_model)


def _interleave(sin: Tensor, cos: Tensor) -> Tensor:
    return torch.stack([sin, cos], dim=-1).flatten(-2).float()


# ---- mistakes -------------------------------------------------------------------------------


def sin_cos_swapped(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return _interleave(torch.cos(a), torch.sin(a))


def positions_from_one(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model, first=1)  # positions 1 .. max_len
    return _interleave(torch.sin(a), torch.cos(a))


def exponent_j_not_2j(max_len: int, d_model: int) -> Tensor:
    j = torch.arange(d_model // 2, dtype=torch.float64)  # j itself in the exponent
    a = _angles(max_len, d_model, exponent_of=j)
    return _interleave(torch.sin(a), torch.cos(a))


def frequency_per_column(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    col = torch.arange(d_model, dtype=torch.float64)
    a = pos * 10000.0 ** (-col / d_model)  # every column its own frequency
    pe = torch.empty(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(a[:, 0::2])
    pe[:, 1::2] = torch.cos(a[:, 1::2])
    return pe.float()


def positive_exponent(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    a = pos * 10000.0 ** (j2 / d_model)
    return _interleave(torch.sin(a), torch.cos(a))


def halves_not_interleaved(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return torch.cat([torch.sin(a), torch.cos(a)], dim=-1).float()


def transposed_table(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return _interleave(torch.sin(a), torch.cos(a)).T.contiguous()


def divided_by_frequency(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    a = pos / 10000.0 ** (-j2 / d_model)  # divided where I should multiply
    return _interleave(torch.sin(a), torch.cos(a))


def natural_log_base(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    a = pos * torch.exp(-math.log10(10000.0) * j2 / d_model)  # log10 instead of ln
    return _interleave(torch.sin(a), torch.cos(a))


# ---- reader's slip ------------------------------------------------------------------------------


class SinusoidalTable(nn.Module):
    def __init__(self, max_len: int, d_model: int) -> None:
        super().__init__()
        a = _angles(max_len, d_model)
        self.register_buffer("pe", _interleave(torch.sin(a), torch.cos(a)))

    def forward(self) -> Tensor:
        return self.pe


# ---- correct variants ---------------------------------------------------------------------------


def double_loop(max_len: int, d_model: int) -> Tensor:
    pe = torch.zeros(max_len, d_model)
    for i in range(max_len):
        for j in range(d_model // 2):
            w = 10000 ** (-2 * j / d_model)
            pe[i, 2 * j] = math.sin(i * w)
            pe[i, 2 * j + 1] = math.cos(i * w)
    return pe


def float32_pow(max_len: int, d_model: int) -> Tensor:
    position = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)
    freq = 1.0 / (10000.0 ** (torch.arange(0, d_model, 2, dtype=torch.float32) / d_model))
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(position * freq)
    pe[:, 1::2] = torch.cos(position * freq)
    return pe


def outer_and_stack(max_len: int, d_model: int) -> Tensor:
    inv = torch.exp(
        torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(10000.0) / d_model)
    )
    angles = torch.outer(torch.arange(max_len, dtype=torch.float64), inv)
    return (
        torch.stack((angles.sin(), angles.cos()), dim=2).reshape(max_len, d_model).to(torch.float32)
    )


CASES = [
    BlindCase(
        CHECK,
        "sin_cos_swapped",
        sin_cos_swapped,
        "mistake",
        "I put the cosines in the even columns and the sines in the odd ones",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        positions_from_one,
        "mistake",
        "I numbered the positions from 1, so the first row is not sin 0 / cos 0",
    ),
    BlindCase(
        CHECK,
        "exponent_j_not_2j",
        exponent_j_not_2j,
        "mistake",
        "I used 10000^(-j/d) with j = 0 .. d/2 - 1 instead of 10000^(-2j/d)",
    ),
    BlindCase(
        CHECK,
        "frequency_per_column",
        frequency_per_column,
        "mistake",
        "I gave every column c its own frequency 10000^(-c/d), so the cosine of a pair has another frequency than its sine",
    ),
    BlindCase(
        CHECK,
        "positive_exponent",
        positive_exponent,
        "mistake",
        "I forgot the minus sign in the exponent, 10000^(2j/d)",
    ),
    BlindCase(
        CHECK,
        "halves_not_interleaved",
        halves_not_interleaved,
        "mistake",
        "I put all the sines in the first half of the columns and all the cosines in the second",
    ),
    BlindCase(
        CHECK,
        "transposed_table",
        transposed_table,
        "mistake",
        "I returned the table as (d_model, max_len)",
    ),
    BlindCase(
        CHECK,
        "divided_by_frequency",
        divided_by_frequency,
        "mistake",
        "I divided the position by w_j instead of multiplying",
    ),
    BlindCase(
        CHECK,
        "natural_log_base",
        natural_log_base,
        "mistake",
        "I wrote the frequency with exp and log10(10000) instead of the natural log",
    ),
    BlindCase(
        CHECK,
        "sinusoidal_table_module",
        SinusoidalTable,
        "mistake",
        "I wrote an nn.Module that stores the table as a buffer and passed the class instead of a function",
    ),
    BlindCase(
        CHECK,
        "double_loop",
        double_loop,
        "correct",
        "I filled the table entry by entry with two Python loops and math.sin / math.cos",
    ),
    BlindCase(
        CHECK,
        "float32_pow",
        float32_pow,
        "correct",
        "I computed the frequencies with ** in float32 as in most tutorials",
    ),
    BlindCase(
        CHECK,
        "outer_and_stack",
        outer_and_stack,
        "correct",
        "I took an outer product and interleaved sin and cos with stack and reshape",
    ),
]
