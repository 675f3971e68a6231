"""Blind set B29, check_sinusoidal_encoding (chapter 10): the sine/cosine position table."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


def _interleave(sin: Tensor, cos: Tensor) -> Tensor:
    pe = torch.empty(sin.shape[0], 2 * sin.shape[1], dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = sin, cos
    return pe.float()


# ---------------------------------------------------------------- mistakes


def pe_cos_first(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _interleave(torch.cos(pos * w), torch.sin(pos * w))  # cos in the even columns


def pe_positions_from_one(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(1, max_len + 1, dtype=torch.float64)[:, None]  # the first word is 1
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _interleave(torch.sin(pos * w), torch.cos(pos * w))


def pe_exponent_per_column(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    div = 10000.0 ** (torch.arange(d_model, dtype=torch.float64) / d_model)  # one per column
    pe = pos / div  # (max_len, d_model)
    pe[:, 0::2] = torch.sin(pe[:, 0::2])
    pe[:, 1::2] = torch.cos(pe[:, 1::2])
    return pe.float()


def pe_two_counted_twice(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    two_j = torch.arange(0, d_model, 2, dtype=torch.float64)  # 2j
    w = 10000.0 ** (-(2 * two_j) / d_model)  # 10000^(2j/d)
    return _interleave(torch.sin(pos * w), torch.cos(pos * w))


def pe_pair_index_without_two(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j = torch.arange(d_model // 2, dtype=torch.float64)
    w = 10000.0 ** (-j / d_model)  # j / d
    return _interleave(torch.sin(pos * w), torch.cos(pos * w))


def pe_halves(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return torch.cat([torch.sin(pos * w), torch.cos(pos * w)], dim=1).float()  # [sin | cos]


def pe_log10(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    w = torch.exp(-math.log10(10000.0) * j2 / d_model)  # 10000 = 10^4
    return _interleave(torch.sin(pos * w), torch.cos(pos * w))


def pe_positive_exponent(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _interleave(torch.sin(pos * w), torch.cos(pos * w))


def pe_integer_table(max_len: int, d_model: int) -> Tensor:
    position = torch.arange(max_len).unsqueeze(1)  # (max_len, 1)
    pe = torch.zeros(max_len, d_model, dtype=position.dtype)
    w = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2) / d_model)
    pe[:, 0::2] = torch.sin(position * w)
    pe[:, 1::2] = torch.cos(position * w)
    return pe


def pe_transposed(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[None, :]  # positions along the columns
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)[:, None]
    pe = torch.empty(d_model, max_len, dtype=torch.float64)
    pe[0::2], pe[1::2] = torch.sin(w * pos), torch.cos(w * pos)
    return pe.float()  # (d_model, max_len)


def pe_odd_indices(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    idx = torch.arange(1, d_model, 2, dtype=torch.float64)  # 1, 3, 5, ...
    w = 10000.0 ** (-idx / d_model)
    return _interleave(torch.sin(pos * w), torch.cos(pos * w))


def pe_one_row_short(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(1, max_len, dtype=torch.float64)[:, None]  # range(1, max_len)
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return _interleave(torch.sin(pos * w), torch.cos(pos * w))


# ---------------------------------------------------------------- correct variants


def pe_python_loops(max_len: int, d_model: int) -> Tensor:
    rows = []
    for i in range(max_len):
        row = []
        for j in range(d_model // 2):
            angle = i / 10000 ** (2 * j / d_model)
            row += [math.sin(angle), math.cos(angle)]
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float32).reshape(max_len, d_model)


def pe_stack_flatten(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(-1)
    inv_freq = 1.0 / torch.pow(10000.0, torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = pos * inv_freq  # (max_len, d/2)
    return torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(-2).to(torch.float32)


def pe_complex_rotation(max_len: int, d_model: int) -> Tensor:
    """exp(i * pos * w): the imaginary part is the sine, the real part the cosine."""
    pos = torch.arange(max_len, dtype=torch.float64)
    w = torch.logspace(0, -1, d_model // 2 + 1, base=10000.0, dtype=torch.float64)[:-1]
    z = torch.polar(torch.ones(max_len, d_model // 2, dtype=torch.float64), torch.outer(pos, w))
    return torch.view_as_real(z).flip(-1).reshape(max_len, d_model).float()


CASES = [
    BlindCase(
        CHECK,
        "cos_in_even_columns",
        pe_cos_first,
        "mistake",
        "I put the cosines in the even columns and the sines in the odd ones.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        pe_positions_from_one,
        "mistake",
        "I numbered the positions from 1, so the first row is not sin 0, cos 0.",
    ),
    BlindCase(
        CHECK,
        "exponent_per_column",
        pe_exponent_per_column,
        "mistake",
        "I divided by 10000^(k/d) with k the column index, so each cosine column gets its own, "
        "slower frequency instead of its sine's.",
    ),
    BlindCase(
        CHECK,
        "two_counted_twice",
        pe_two_counted_twice,
        "mistake",
        "I took arange(0, d, 2) as j and still wrote 2j in the exponent, so it is 4j/d.",
    ),
    BlindCase(
        CHECK,
        "exponent_j_over_d",
        pe_pair_index_without_two,
        "mistake",
        "I used the pair index j with 10000^(j/d), dropping the 2.",
    ),
    BlindCase(
        CHECK,
        "sines_then_cosines",
        pe_halves,
        "mistake",
        "I concatenated all the sines and then all the cosines instead of interleaving them.",
    ),
    BlindCase(
        CHECK,
        "log10_in_exp",
        pe_log10,
        "mistake",
        "I wrote the frequencies as exp(-log(10000) 2j/d) but with math.log10 instead of math.log.",
    ),
    BlindCase(
        CHECK,
        "positive_exponent",
        pe_positive_exponent,
        "mistake",
        "I multiplied the position by 10000^(2j/d) instead of dividing by it.",
    ),
    BlindCase(
        CHECK,
        "integer_table",
        pe_integer_table,
        "mistake",
        "I made the table with the dtype of the arange of positions, which is long, so every "
        "sine and cosine is truncated to an integer.",
    ),
    BlindCase(
        CHECK,
        "transposed",
        pe_transposed,
        "mistake",
        "I built the table with the dimensions as rows and the positions as columns: "
        "(d_model, max_len).",
    ),
    BlindCase(
        CHECK,
        "odd_column_indices",
        pe_odd_indices,
        "mistake",
        "I took the exponents from the odd column indices 1, 3, 5, ... instead of 0, 2, 4, ...",
    ),
    BlindCase(
        CHECK,
        "one_row_short",
        pe_one_row_short,
        "mistake",
        "I looped over range(1, max_len), which starts at position 1 and gives one row too few.",
    ),
    BlindCase(
        CHECK,
        "python_loops",
        pe_python_loops,
        "correct",
        "Two Python loops with math.sin and math.cos, the table made at the end.",
    ),
    BlindCase(
        CHECK,
        "stack_and_flatten",
        pe_stack_flatten,
        "correct",
        "The sine and cosine stacked on a last axis and flattened, which interleaves them.",
    ),
    BlindCase(
        CHECK,
        "complex_rotation",
        pe_complex_rotation,
        "correct",
        "Each pair as the complex number exp(i pos w_j) from torch.polar, with the frequencies "
        "from torch.logspace; sine and cosine read off its two parts.",
    ),
]
