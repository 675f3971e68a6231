"""Blind set B6, check_sinusoidal_encoding (chapter 10): the sinusoidal position table."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


# ---------------------------------------------------------------- mistakes


def pe_cos_then_sin(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]
    w = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2) / d_model)
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.cos(pos * w)  # cos first, so that row 0 is not all zeros
    pe[:, 1::2] = torch.sin(pos * w)
    return pe


def pe_positions_from_one(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(1, max_len + 1, dtype=torch.float32)[:, None]  # the first word is 1
    w = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2) / d_model)
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(pos * w)
    pe[:, 1::2] = torch.cos(pos * w)
    return pe


def pe_exponent_j_over_d(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]
    j = torch.arange(d_model // 2, dtype=torch.float32)  # the pair index j
    w = 10000.0 ** (-j / d_model)
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(pos * w)
    pe[:, 1::2] = torch.cos(pos * w)
    return pe


def pe_column_exponent(max_len: int, d_model: int) -> Tensor:
    pe = torch.zeros(max_len, d_model)
    for pos in range(max_len):
        for i in range(d_model):
            angle = pos / 10000 ** (i / d_model)  # each column its own frequency
            pe[pos, i] = math.sin(angle) if i % 2 == 0 else math.cos(angle)
    return pe


def pe_halves(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]
    w = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2) / d_model)
    return torch.cat([torch.sin(pos * w), torch.cos(pos * w)], dim=1)  # sines, then cosines


def pe_frequency_multiplies(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]
    div_term = 10000.0 ** (torch.arange(0, d_model, 2) / d_model)
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(pos * div_term)  # should have been a division
    pe[:, 1::2] = torch.cos(pos * div_term)
    return pe


def pe_log10(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]
    w = torch.exp(-math.log10(10000.0) * torch.arange(0, d_model, 2) / d_model)  # log10: 4
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(pos * w)
    pe[:, 1::2] = torch.cos(pos * w)
    return pe


def pe_float64(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]  # float64 for the angles
    w = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * w)
    pe[:, 1::2] = torch.cos(pos * w)
    return pe  # and left in float64


def pe_features_by_positions(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float32)[None, :]  # (1, max_len)
    w = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2) / d_model)[:, None]
    pe = torch.zeros(d_model, max_len)
    pe[0::2] = torch.sin(w * pos)
    pe[1::2] = torch.cos(w * pos)
    return pe  # (d_model, max_len): one column per position


# ---------------------------------------------------------------- correct variants


def pe_python_loop(max_len: int, d_model: int) -> Tensor:
    rows = []
    for i in range(max_len):
        row = []
        for j in range(d_model // 2):
            w = 10000 ** (-2 * j / d_model)
            row += [math.sin(i * w), math.cos(i * w)]
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float32).reshape(max_len, d_model)


def pe_stack_interleave(max_len: int, d_model: int) -> Tensor:
    i = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    w = torch.pow(10000.0, -torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = i * w  # (max_len, d_model / 2)
    pe = torch.stack([angles.sin(), angles.cos()], dim=-1)  # (max_len, d_model / 2, 2)
    return pe.flatten(1).to(torch.float32)


def pe_annotated_float32(max_len: int, d_model: int) -> Tensor:
    """In float32 throughout, as the Annotated Transformer writes it."""
    pe = torch.zeros(max_len, d_model)
    position = torch.arange(0, max_len).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2) * -(math.log(10000.0) / d_model))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


CASES = [
    BlindCase(
        CHECK,
        "cos_then_sin",
        pe_cos_then_sin,
        "mistake",
        "I put the cosines in the even columns and the sines in the odd ones.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        pe_positions_from_one,
        "mistake",
        "I numbered the positions from 1, so row i holds position i + 1.",
    ),
    BlindCase(
        CHECK,
        "exponent_j_over_d",
        pe_exponent_j_over_d,
        "mistake",
        "I used w_j = 10000^(-j/d) with the pair index j, forgetting the factor 2.",
    ),
    BlindCase(
        CHECK,
        "exponent_from_column",
        pe_column_exponent,
        "mistake",
        "I looped over the columns with 10000^(i/d) for column i, so each cosine column gets "
        "the exponent of its own index, not of the sine next to it.",
    ),
    BlindCase(
        CHECK,
        "sines_then_cosines_halves",
        pe_halves,
        "mistake",
        "I concatenated all the sines and then all the cosines instead of interleaving them.",
    ),
    BlindCase(
        CHECK,
        "frequency_multiplies",
        pe_frequency_multiplies,
        "mistake",
        "I multiplied the position by 10000^(2j/d) instead of dividing by it.",
    ),
    BlindCase(
        CHECK,
        "log10_in_exp",
        pe_log10,
        "mistake",
        "I wrote exp(-log10(10000) * 2j/d), mixing the base-10 log with exp.",
    ),
    BlindCase(
        CHECK,
        "left_in_float64",
        pe_float64,
        "mistake",
        "I computed in float64 and returned float64 instead of float32.",
    ),
    BlindCase(
        CHECK,
        "features_by_positions",
        pe_features_by_positions,
        "mistake",
        "I built the table as (d_model, max_len), one column per position.",
    ),
    BlindCase(
        CHECK,
        "python_loop",
        pe_python_loop,
        "correct",
        "Two Python loops with math.sin and math.cos, each pair appended in order, then one "
        "float32 tensor.",
    ),
    BlindCase(
        CHECK,
        "stack_and_flatten",
        pe_stack_interleave,
        "correct",
        "sin and cos stacked on a last axis and flattened, which interleaves them; float64 "
        "angles, float32 result.",
    ),
    BlindCase(
        CHECK,
        "annotated_transformer_float32",
        pe_annotated_float32,
        "correct",
        "The Annotated Transformer's way: exp of arange * -(log(10000)/d), all in float32.",
    ),
]
