"""Blind set B20, check_sinusoidal_encoding (chapter 10): the sinusoidal position table as
readers write it."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


def _angles(max_len: int, d_model: int) -> Tensor:
    """i * w_j, (max_len, d_model / 2), in float64."""
    i = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    return i * 10000.0 ** (-j2 / d_model)


def _interleave(sin: Tensor, cos: Tensor) -> Tensor:
    return torch.stack([sin, cos], dim=-1).flatten(-2).float()


# ---------------------------------------------------------------- mistakes


def pe_swapped(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.cos(a)
    pe[:, 1::2] = torch.sin(a)
    return pe.float()


def pe_positions_from_one(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(1, max_len + 1, dtype=torch.float64)[:, None]  # first word = position 1
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    a = i * 10000.0 ** (-j2 / d_model)
    return _interleave(torch.sin(a), torch.cos(a))


def pe_j_not_2j(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float64)[:, None]
    j = torch.arange(d_model // 2, dtype=torch.float64)
    a = i / 10000.0 ** (j / d_model)
    return _interleave(torch.sin(a), torch.cos(a))


def pe_column_index(max_len: int, d_model: int) -> Tensor:
    pe = torch.zeros(max_len, d_model)
    for pos in range(max_len):
        for col in range(d_model):
            angle = pos / 10000 ** (2 * col / d_model)
            pe[pos, col] = math.sin(angle) if col % 2 == 0 else math.cos(angle)
    return pe


def pe_concatenated(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return torch.cat([torch.sin(a), torch.cos(a)], dim=-1).float()  # sines, then cosines


def pe_positive_exponent(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    a = i * torch.exp(j2 * math.log(10000.0) / d_model)
    return _interleave(torch.sin(a), torch.cos(a))


def pe_log10(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    a = i * torch.exp(-math.log10(10000.0) * j2 / d_model)
    return _interleave(torch.sin(a), torch.cos(a))


def pe_base_1000(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    a = i * 1000.0 ** (-j2 / d_model)
    return _interleave(torch.sin(a), torch.cos(a))


def pe_transposed(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return _interleave(torch.sin(a), torch.cos(a)).T  # (d_model, max_len)


def pe_batch_dim(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return _interleave(torch.sin(a), torch.cos(a)).unsqueeze(0)  # (1, max_len, d_model)


def pe_only_sines(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model)
    return torch.sin(a).repeat_interleave(2, dim=-1).float()


def pe_divide_d_minus_one(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    a = i * 10000.0 ** (-j2 / (d_model - 1))  # the last exponent reaches 1
    return _interleave(torch.sin(a), torch.cos(a))


# ---------------------------------------------------------------- correct variants


def pe_math_loop(max_len: int, d_model: int) -> Tensor:
    rows = []
    for pos in range(max_len):
        row = []
        for j in range(d_model // 2):
            w = 10000 ** (-2 * j / d_model)
            row += [math.sin(pos * w), math.cos(pos * w)]
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float32).reshape(max_len, d_model)


def pe_numpy(max_len: int, d_model: int) -> Tensor:
    pos = np.arange(max_len)[:, None]
    w = np.power(10000.0, -np.arange(0, d_model, 2) / d_model)
    pe = np.empty((max_len, d_model))
    pe[:, ::2] = np.sin(pos * w)
    pe[:, 1::2] = np.cos(pos * w)
    return torch.from_numpy(pe).to(torch.float32)


def pe_stack_flatten(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    w = torch.pow(10000.0, -torch.arange(d_model // 2, dtype=torch.float64) * 2 / d_model)
    a = i * w
    return torch.stack((a.sin(), a.cos()), dim=2).view(max_len, d_model).float()


def pe_cos_as_shifted_sin(max_len: int, d_model: int) -> Tensor:
    a = _angles(max_len, d_model).repeat_interleave(2, dim=1)  # (max_len, d_model)
    phase = torch.tensor([0.0, math.pi / 2], dtype=torch.float64).repeat(d_model // 2)
    return torch.sin(a + phase).float()  # cos(x) = sin(x + pi/2)


CASES = [
    BlindCase(CHECK, "sin_cos_swapped", pe_swapped, "mistake", "I put cos in even columns."),
    BlindCase(
        CHECK,
        "positions_from_one",
        pe_positions_from_one,
        "mistake",
        "I numbered positions from 1.",
    ),
    BlindCase(
        CHECK,
        "exponent_j_over_d",
        pe_j_not_2j,
        "mistake",
        "I wrote w_j = 10000^(-j/d) with j the pair index, forgetting the 2.",
    ),
    BlindCase(
        CHECK,
        "column_index_exponent",
        pe_column_index,
        "mistake",
        "In my double loop I used 2 * col / d with col the column, for sin and cos alike.",
    ),
    BlindCase(
        CHECK,
        "sin_then_cos_blocks",
        pe_concatenated,
        "mistake",
        "I concatenated all sines then all cosines instead of interleaving.",
    ),
    BlindCase(
        CHECK,
        "positive_exponent",
        pe_positive_exponent,
        "mistake",
        "I wrote exp(+2j log(10000) / d), dropping the minus.",
    ),
    BlindCase(
        CHECK,
        "log10_in_exp",
        pe_log10,
        "mistake",
        "I used math.log10(10000) inside exp instead of the natural log.",
    ),
    BlindCase(CHECK, "base_1000", pe_base_1000, "mistake", "I typed 1000 for the base."),
    BlindCase(
        CHECK,
        "transposed",
        pe_transposed,
        "mistake",
        "I returned (d_model, max_len).",
    ),
    BlindCase(
        CHECK,
        "batch_axis",
        pe_batch_dim,
        "mistake",
        "I returned it as (1, max_len, d_model), ready to add to a batch.",
    ),
    BlindCase(
        CHECK,
        "sines_only",
        pe_only_sines,
        "mistake",
        "I repeated each sine twice and forgot the cosines.",
    ),
    BlindCase(
        CHECK,
        "divide_by_d_minus_1",
        pe_divide_d_minus_one,
        "mistake",
        "I divided the exponent by d_model - 1.",
    ),
    BlindCase(
        CHECK,
        "python_math_loop",
        pe_math_loop,
        "correct",
        "A double loop with math.sin and math.cos.",
    ),
    BlindCase(CHECK, "numpy", pe_numpy, "correct", "Built in NumPy and converted to float32."),
    BlindCase(
        CHECK,
        "stack_view",
        pe_stack_flatten,
        "correct",
        "torch.pow for the frequencies, stack (sin, cos) on a last axis and view.",
    ),
    BlindCase(
        CHECK,
        "phase_shift",
        pe_cos_as_shifted_sin,
        "correct",
        "Each angle twice and one sin with a phase of pi/2 on odd columns.",
    ),
]
