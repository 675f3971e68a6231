"""Blind set B14, check_sinusoidal_encoding (chapter 10): the sine/cosine position table."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


def _table(angles: Tensor, first, second) -> Tensor:
    pe = torch.zeros(angles.shape[0], 2 * angles.shape[1])
    pe[:, 0::2] = first(angles)
    pe[:, 1::2] = second(angles)
    return pe


def _angles(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float64)[:, None]
    return i * 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)


# ---------------------------------------------------------------- mistakes


def pe_swapped(max_len: int, d_model: int) -> Tensor:
    return _table(_angles(max_len, d_model), torch.cos, torch.sin)  # cos in the even columns


def pe_positions_from_one(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(1, max_len + 1, dtype=torch.float64)[:, None]  # the first word is 1
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _table(i * w, torch.sin, torch.cos)


def pe_j_not_2j(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float64)[:, None]
    j = torch.arange(d_model // 2, dtype=torch.float64)
    return _table(i * 10000.0 ** (-j / d_model), torch.sin, torch.cos)  # forgot the 2


def pe_positive_exponent(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    return _table(i * 10000.0 ** (j2 / d_model), torch.sin, torch.cos)


def pe_double_two(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)  # already 2j
    return _table(i * 10000.0 ** (-2 * j2 / d_model), torch.sin, torch.cos)


def pe_halves(max_len: int, d_model: int) -> Tensor:
    angles = _angles(max_len, d_model)
    return torch.cat([angles.sin(), angles.cos()], dim=-1).float()  # sines, then cosines


def pe_column_frequency(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float64)[:, None]
    c = torch.arange(d_model, dtype=torch.float64)
    angles = i * 10000.0 ** (-c / d_model)  # each column its own frequency
    pe = torch.empty(max_len, d_model)
    pe[:, 0::2] = angles[:, 0::2].sin()
    pe[:, 1::2] = angles[:, 1::2].cos()
    return pe


def pe_transposed(max_len: int, d_model: int) -> Tensor:
    return _table(_angles(max_len, d_model), torch.sin, torch.cos).T  # (d_model, max_len)


def pe_divide_position(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _table(i / w, torch.sin, torch.cos)  # i / w_j


def pe_sin_everywhere(max_len: int, d_model: int) -> Tensor:
    return _table(_angles(max_len, d_model), torch.sin, torch.sin)  # cos is a shifted sin


def pe_log_natural_base(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    w = torch.exp(-math.log10(10000.0) * j2 / d_model)  # log of 10000 for the exp
    return _table(i * w, torch.sin, torch.cos)


# ---------------------------------------------------------------- correct variants


def pe_stack_interleave(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    inv = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(1e4) / d_model))
    angles = pos * inv
    return torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(1).to(torch.float32)


def pe_numpy(max_len, d_model, base: float = 10000.0):
    pe = np.zeros((max_len, d_model))
    pos = np.arange(max_len)[:, None]
    div = np.power(base, np.arange(0, d_model, 2) / d_model)
    pe[:, 0::2] = np.sin(pos / div)
    pe[:, 1::2] = np.cos(pos / div)
    return torch.from_numpy(pe).float()


def pe_loops(max_len: int, d_model: int) -> Tensor:
    pe = torch.zeros(max_len, d_model)
    for i in range(max_len):
        for j in range(d_model // 2):
            w = 1.0 / 10000 ** (2 * j / d_model)
            pe[i, 2 * j] = math.sin(i * w)
            pe[i, 2 * j + 1] = math.cos(i * w)
    return pe


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
        "I numbered the positions from 1, so the first row is not sin(0), cos(0).",
    ),
    BlindCase(
        CHECK,
        "j_not_2j",
        pe_j_not_2j,
        "mistake",
        "I used 10000^(-j/d) with j = 0..d/2-1, forgetting the 2.",
    ),
    BlindCase(
        CHECK,
        "positive_exponent",
        pe_positive_exponent,
        "mistake",
        "I wrote 10000^(2j/d), dropping the minus sign of the exponent.",
    ),
    BlindCase(
        CHECK,
        "double_two",
        pe_double_two,
        "mistake",
        "arange(0, d, 2) already gives 2j, and I multiplied it by 2 again.",
    ),
    BlindCase(
        CHECK,
        "halves",
        pe_halves,
        "mistake",
        "I concatenated all sines then all cosines instead of interleaving them.",
    ),
    BlindCase(
        CHECK,
        "column_frequency",
        pe_column_frequency,
        "mistake",
        "I gave each column c the frequency 10000^(-c/d), so a cosine column does not "
        "share its sine's frequency.",
    ),
    BlindCase(
        CHECK, "transposed", pe_transposed, "mistake", "I returned the table (d_model, max_len)."
    ),
    BlindCase(
        CHECK,
        "position_over_frequency",
        pe_divide_position,
        "mistake",
        "I divided the position by the frequency, i / w_j, instead of multiplying.",
    ),
    BlindCase(
        CHECK,
        "sin_everywhere",
        pe_sin_everywhere,
        "mistake",
        "I used sin in both columns of each pair.",
    ),
    BlindCase(
        CHECK,
        "log10_in_exp",
        pe_log_natural_base,
        "mistake",
        "I wrote exp(-log10(10000) * 2j / d), mixing up the logarithm's base.",
    ),
    BlindCase(
        CHECK,
        "stack_interleave",
        pe_stack_interleave,
        "correct",
        "sin and cos stacked on a last axis and flattened, which interleaves them.",
    ),
    BlindCase(
        CHECK,
        "numpy",
        pe_numpy,
        "correct",
        "NumPy with pos / 10000^(2j/d), converted to a float32 tensor; extra base argument.",
    ),
    BlindCase(CHECK, "python_loops", pe_loops, "correct", "Two Python loops with math.sin/cos."),
]
