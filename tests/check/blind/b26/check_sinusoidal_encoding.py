"""Blind set B26, check_sinusoidal_encoding (chapter 10): the sinusoidal position table as readers
write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


def _angles(positions: Tensor, d_model: int) -> Tensor:
    """Right angles i * w_j for the given positions, shared by the mistakes that are elsewhere."""
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    return positions[:, None].double() * torch.pow(10000.0, -j2 / d_model)


def _interleave(angles: Tensor) -> Tensor:
    pe = torch.empty(angles.shape[0], 2 * angles.shape[1], dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe.float()


# ---------------------------------------------------------------- mistakes


def pe_halves(max_len: int, d_model: int) -> Tensor:
    angles = _angles(torch.arange(max_len), d_model)
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1).float()  # sines, then cosines


def pe_frequency_per_column(max_len: int, d_model: int) -> Tensor:
    position = torch.arange(max_len, dtype=torch.float32)[:, None]
    div = 10000 ** (torch.arange(d_model, dtype=torch.float32) / d_model)  # one per column
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(position / div[0::2])
    pe[:, 1::2] = torch.cos(position / div[1::2])
    return pe


def pe_positions_from_one(max_len: int, d_model: int) -> Tensor:
    return _interleave(_angles(torch.arange(1, max_len + 1), d_model))  # positions 1..max_len


def pe_frequency_inverted(max_len: int, d_model: int) -> Tensor:
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    return _interleave(position * 10000 ** (j2 / d_model))  # i * 10000^(2j/d)


def pe_transposed(max_len: int, d_model: int) -> Tensor:
    return _interleave(_angles(torch.arange(max_len), d_model)).T  # one column per position


def pe_batch_axis(max_len: int, d_model: int) -> Tensor:
    pe = _interleave(_angles(torch.arange(max_len), d_model))
    return pe.unsqueeze(0)  # (1, max_len, d_model), ready to add to a batch


def pe_log10(max_len: int, d_model: int) -> Tensor:
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    inv_freq = torch.exp(-math.log10(10000.0) * j2 / d_model)  # 10000^(-2j/d) through a log
    return _interleave(position * inv_freq)


def pe_stack_then_reshape(max_len: int, d_model: int) -> Tensor:
    angles = _angles(torch.arange(max_len), d_model).float()
    pe = torch.stack([torch.sin(angles), torch.cos(angles)])  # (2, max_len, d/2)
    return pe.reshape(max_len, d_model)


def pe_floor_division(max_len: int, d_model: int) -> Tensor:
    position = torch.arange(max_len).unsqueeze(1)
    j = torch.arange(d_model // 2)
    exponent = 2 * j // d_model  # 2j / d
    return _interleave(position / 10000.0**exponent)


def pe_two_pi(max_len: int, d_model: int) -> Tensor:
    angles = _angles(torch.arange(max_len), d_model)
    return _interleave(2 * math.pi * angles)  # a frequency w turns 2 pi w radians per step


def pe_linspace(max_len: int, d_model: int) -> Tensor:
    positions = torch.linspace(0, max_len, max_len)  # max_len positions from 0
    return _interleave(_angles(positions, d_model))


# ---------------------------------------------------------------- correct variants


def pe_python_loops(max_len: int, d_model: int) -> Tensor:
    rows = []
    for i in range(max_len):
        row = []
        for j in range(d_model // 2):
            w = 10000 ** (-2 * j / d_model)
            row += [math.sin(i * w), math.cos(i * w)]
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float32).reshape(max_len, d_model)


def pe_stack_last_axis(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float32).unsqueeze(-1)
    w = torch.pow(10000.0, -torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    angles = i * w  # (max_len, d/2)
    return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(start_dim=1)


def pe_complex(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float64)
    w = 1.0 / 10000.0 ** (torch.arange(d_model // 2, dtype=torch.float64) * 2 / d_model)
    z = torch.polar(torch.ones(max_len, d_model // 2, dtype=torch.float64), torch.outer(i, w))
    cos_sin = torch.view_as_real(z)  # (..., 2): real = cos, imag = sin
    return cos_sin.flip(-1).reshape(max_len, d_model).to(torch.float32)


CASES = [
    BlindCase(
        CHECK,
        "sines_then_cosines_halves",
        pe_halves,
        "mistake",
        "I concatenated all the sines and then all the cosines instead of alternating them.",
    ),
    BlindCase(
        CHECK,
        "frequency_per_column",
        pe_frequency_per_column,
        "mistake",
        "I gave every column c its own frequency 10000^(-c/d), so a cosine column does not "
        "share its sine's frequency.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        pe_positions_from_one,
        "mistake",
        "I numbered the positions 1..max_len.",
    ),
    BlindCase(
        CHECK,
        "frequency_inverted",
        pe_frequency_inverted,
        "mistake",
        "I multiplied the position by 10000^(2j/d) instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "transposed_table",
        pe_transposed,
        "mistake",
        "I return the table as (d_model, max_len).",
    ),
    BlindCase(
        CHECK,
        "batch_axis_added",
        pe_batch_axis,
        "mistake",
        "I return (1, max_len, d_model) so that it adds to a batch.",
    ),
    BlindCase(
        CHECK,
        "log10_in_exponent",
        pe_log10,
        "mistake",
        "I wrote the frequency as exp(-log(10000) 2j/d) but used math.log10.",
    ),
    BlindCase(
        CHECK,
        "stack_then_reshape",
        pe_stack_then_reshape,
        "mistake",
        "I stacked sines and cosines on a new first axis and reshaped to (max_len, d_model).",
    ),
    BlindCase(
        CHECK,
        "floor_division_exponent",
        pe_floor_division,
        "mistake",
        "I computed the exponent 2j/d with //, so it is 0 for every j.",
    ),
    BlindCase(
        CHECK,
        "two_pi_factor",
        pe_two_pi,
        "mistake",
        "I multiplied the angles by 2 pi, reading w as a frequency in turns.",
    ),
    BlindCase(
        CHECK,
        "linspace_positions",
        pe_linspace,
        "mistake",
        "I made the positions with torch.linspace(0, max_len, max_len), which are not integers.",
    ),
    BlindCase(
        CHECK,
        "python_loops",
        pe_python_loops,
        "correct",
        "Two Python loops with math.sin and math.cos, then one float32 tensor.",
    ),
    BlindCase(
        CHECK,
        "stack_last_axis",
        pe_stack_last_axis,
        "correct",
        "float32 throughout; sines and cosines stacked on a last axis and flattened.",
    ),
    BlindCase(
        CHECK,
        "complex_exponential",
        pe_complex,
        "correct",
        "exp(i angle) with torch.polar; view_as_real gives (cos, sin), flipped to (sin, cos).",
    ),
]
