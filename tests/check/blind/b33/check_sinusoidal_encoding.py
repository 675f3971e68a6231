"""Blind set B33, check_sinusoidal_encoding (chapter 10): the sinusoidal position table as
readers write it."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


def _table(angles: Tensor, d_model: int) -> Tensor:
    pe = torch.zeros(angles.shape[0], d_model, dtype=angles.dtype)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe


# ---------------------------------------------------------------- mistakes


def pe_sin_cos_swapped(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.cos(pos * w)
    pe[:, 1::2] = torch.sin(pos * w)
    return pe.float()


def pe_sines_only(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j = torch.arange(d_model, dtype=torch.float64) // 2  # pair index of every column
    w = 10000.0 ** (-2 * j / d_model)
    return torch.sin(pos * w).float()  # the cosine is just a shifted sine


def pe_double_counted_exponent(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j = torch.arange(0, d_model, 2, dtype=torch.float64)  # j = 0, 2, 4, ...
    w = 10000.0 ** (-2 * j / d_model)
    return _table(pos * w, d_model).float()


def pe_multiplied_frequency(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    return _table(pos * 10000.0 ** (j2 / d_model), d_model).float()  # i * 10000^(2j/d)


def pe_halves(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return torch.cat([torch.sin(pos * w), torch.cos(pos * w)], dim=1).float()  # sines | cosines


def pe_positions_from_one(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(1, max_len + 1, dtype=torch.float64)[:, None]  # word 1, word 2, ...
    w = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _table(pos * w, d_model).float()


def pe_log10(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    w = torch.exp(-math.log10(10000.0) * j2 / d_model)  # log of 10000
    return _table(pos * w, d_model).float()


def pe_float64(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _table(pos * w, d_model)  # float64 for accuracy


def pe_transposed(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[None, :]  # (1, max_len)
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)[:, None]
    angles = w * pos  # (d/2, max_len)
    pe = torch.zeros(d_model, max_len, dtype=torch.float64)
    pe[0::2] = torch.sin(angles)
    pe[1::2] = torch.cos(angles)
    return pe.float()


def pe_integer_division(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len)[:, None].float()
    j2 = torch.arange(0, d_model, 2)
    w = 10000.0 ** (-(j2 // d_model).float())  # 2j // d
    return _table(pos * w, d_model)


def pe_exponent_j_over_d(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j = torch.arange(d_model // 2, dtype=torch.float64)  # pair index j
    w = 10000.0 ** (-j / d_model)
    return _table(pos * w, d_model).float()


def pe_with_batch_axis(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _table(pos * w, d_model).float().unsqueeze(0)  # (1, max_len, d) to add to x


def pe_numpy(max_len: int, d_model: int) -> np.ndarray:
    pos = np.arange(max_len)[:, None]
    w = 1.0 / np.power(10000.0, np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((max_len, d_model), dtype=np.float32)
    pe[:, 0::2] = np.sin(pos * w)
    pe[:, 1::2] = np.cos(pos * w)
    return pe


# ---------------------------------------------------------------- correct variants


def pe_float32_div_term(max_len: int, d_model: int) -> Tensor:
    """All in float32, the frequencies as exp(-log(10000) 2j / d), as many tutorials do."""
    position = torch.arange(max_len).unsqueeze(1).float()
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


def pe_python_loops(max_len: int, d_model: int) -> Tensor:
    """Two loops with math.sin and math.cos, then one float32 tensor."""
    rows = []
    for i in range(max_len):
        row = []
        for j in range(d_model // 2):
            angle = i / 10000 ** (2 * j / d_model)
            row += [math.sin(angle), math.cos(angle)]
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float32).reshape(max_len, d_model)


def pe_stack_interleave(max_len: int, d_model: int) -> Tensor:
    """sin and cos stacked on a last axis of 2 and flattened, which interleaves them."""
    pos = torch.arange(max_len, dtype=torch.float64)
    w = torch.pow(10000.0, -torch.arange(d_model // 2, dtype=torch.float64) * 2 / d_model)
    angles = torch.outer(pos, w)  # (max_len, d/2)
    pe = torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(1)  # (max_len, d)
    return pe.to(torch.float32)


CASES = [
    BlindCase(
        CHECK,
        "sin_cos_swapped",
        pe_sin_cos_swapped,
        "mistake",
        "I put the cosines in the even columns and the sines in the odd ones.",
    ),
    BlindCase(
        CHECK,
        "sines_only",
        pe_sines_only,
        "mistake",
        "I used the sine in every column, each pair sharing its frequency.",
    ),
    BlindCase(
        CHECK,
        "double_counted_exponent",
        pe_double_counted_exponent,
        "mistake",
        "I took j from arange(0, d, 2) and still wrote 2 * j in the exponent.",
    ),
    BlindCase(
        CHECK,
        "multiplied_frequency",
        pe_multiplied_frequency,
        "mistake",
        "I multiplied the position by 10000^(2j/d) instead of dividing by it.",
    ),
    BlindCase(
        CHECK,
        "halves",
        pe_halves,
        "mistake",
        "I put all the sines in the first half of the columns and the cosines in the second.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        pe_positions_from_one,
        "mistake",
        "I numbered the positions from 1 to max_len.",
    ),
    BlindCase(
        CHECK,
        "log10",
        pe_log10,
        "mistake",
        "I wrote the frequencies as exp(-log(10000) * 2j / d) but used math.log10.",
    ),
    BlindCase(
        CHECK,
        "float64",
        pe_float64,
        "mistake",
        "I computed the table in float64 and returned it without casting to float32.",
    ),
    BlindCase(
        CHECK,
        "transposed",
        pe_transposed,
        "mistake",
        "I built the table as (d_model, max_len), one column per position.",
    ),
    BlindCase(
        CHECK,
        "integer_division",
        pe_integer_division,
        "mistake",
        "I wrote the exponent with // on integer tensors, so 2j // d is 0.",
    ),
    BlindCase(
        CHECK,
        "exponent_j_over_d",
        pe_exponent_j_over_d,
        "mistake",
        "I used 10000^(-j/d) with the pair index j, forgetting the 2.",
    ),
    BlindCase(
        CHECK,
        "with_batch_axis",
        pe_with_batch_axis,
        "mistake",
        "I return the table as (1, max_len, d_model) so it adds to a batch directly.",
    ),
    BlindCase(
        CHECK,
        "numpy",
        pe_numpy,
        "mistake",
        "I wrote it in NumPy and returned the float32 array.",
    ),
    BlindCase(
        CHECK,
        "float32_div_term",
        pe_float32_div_term,
        "correct",
        "Everything in float32, frequencies as exp(arange(0, d, 2) * -log(10000) / d).",
    ),
    BlindCase(
        CHECK,
        "python_loops",
        pe_python_loops,
        "correct",
        "Two Python loops with math.sin and math.cos, turned into a float32 tensor.",
    ),
    BlindCase(
        CHECK,
        "stack_interleave",
        pe_stack_interleave,
        "correct",
        "sin and cos stacked on a new last axis and flattened, which interleaves them.",
    ),
]
