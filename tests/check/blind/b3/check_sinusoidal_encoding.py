"""Blind cases for check_sinusoidal_encoding (chapter 10), written from the chapter's text only."""

from __future__ import annotations

import math

import numpy as np
import torch

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


def _table(max_len, d_model, omega, first=torch.sin, second=torch.cos, start=0):
    pos = torch.arange(start, start + max_len, dtype=torch.float64).unsqueeze(1)
    angles = pos * omega  # (max_len, d/2)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = first(angles)
    pe[:, 1::2] = second(angles)
    return pe.float()


def _omega(d_model):
    return 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)


def cos_then_sin(max_len, d_model):
    return _table(max_len, d_model, _omega(d_model), first=torch.cos, second=torch.sin)


def positions_from_one(max_len, d_model):
    return _table(max_len, d_model, _omega(d_model), start=1)


def exponent_uses_j_not_2j(max_len, d_model):
    j = torch.arange(d_model // 2, dtype=torch.float64)
    return _table(max_len, d_model, 10000.0 ** (-j / d_model))


def positive_exponent(max_len, d_model):
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    return _table(max_len, d_model, 10000.0 ** (j2 / d_model))


def column_index_in_exponent(max_len, d_model):
    # every column c gets its own frequency 10000^(-2c/d), sines in even, cosines in odd
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    c = torch.arange(d_model, dtype=torch.float64)
    angles = pos * 10000.0 ** (-2 * c / d_model)  # (max_len, d)
    pe = torch.where(c.long() % 2 == 0, torch.sin(angles), torch.cos(angles))
    return pe.float()


def halves_not_interleaved(max_len, d_model):
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    angles = pos * _omega(d_model)
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=1).float()  # [sin | cos]


def base_1000(max_len, d_model):
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    inv_freq = torch.exp(-math.log(1000.0) * j2 / d_model)  # typed 1000 instead of 10000
    return _table(max_len, d_model, inv_freq)


def transposed_table(max_len, d_model):
    return _table(max_len, d_model, _omega(d_model)).T.contiguous()  # (d_model, max_len)


def frequency_times_two_pi(max_len, d_model):
    return _table(max_len, d_model, 2 * math.pi * _omega(d_model))


def log_space_like_the_paper(max_len, d_model):
    position = torch.arange(max_len).unsqueeze(1).double()
    div_term = torch.exp(torch.arange(0, d_model, 2).double() * (-math.log(10000.0) / d_model))
    pe = torch.zeros(max_len, d_model, dtype=torch.double)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe.to(torch.float32)


def numpy_loops(max_len, d_model):
    pe = np.zeros((max_len, d_model))
    for i in range(max_len):
        for j in range(d_model // 2):
            w = 10000 ** (-2 * j / d_model)
            pe[i, 2 * j] = math.sin(i * w)
            pe[i, 2 * j + 1] = math.cos(i * w)
    return torch.from_numpy(pe).float()


def stack_and_flatten(max_len, d_model, base=10000.0):
    i = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = base ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = i * w[None, :]  # (max_len, d/2)
    pe = torch.stack([angles.sin(), angles.cos()], dim=-1)  # (max_len, d/2, 2)
    return pe.flatten(1).float()  # sin, cos, sin, cos, ...


CASES = [
    BlindCase(
        CHECK,
        "cos_then_sin",
        cos_then_sin,
        "mistake",
        "I put the cosines in the even columns and the sines in the odd ones",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        positions_from_one,
        "mistake",
        "I numbered the positions 1..max_len instead of 0..max_len-1",
    ),
    BlindCase(
        CHECK,
        "exponent_uses_j_not_2j",
        exponent_uses_j_not_2j,
        "mistake",
        "I used 10000^(-j/d) with j = 0, 1, 2, ... (forgot the factor 2 in 2j/d)",
    ),
    BlindCase(
        CHECK,
        "positive_exponent",
        positive_exponent,
        "mistake",
        "I forgot the minus in the exponent: 10000^(+2j/d), frequencies that grow",
    ),
    BlindCase(
        CHECK,
        "column_index_in_exponent",
        column_index_in_exponent,
        "mistake",
        "I gave every column its own frequency 10000^(-2c/d) with c the column index, instead "
        "of one frequency per sine/cosine pair",
    ),
    BlindCase(
        CHECK,
        "halves_not_interleaved",
        halves_not_interleaved,
        "mistake",
        "I put all the sines in the first half of the columns and all the cosines in the second "
        "half instead of interleaving them",
    ),
    BlindCase(
        CHECK,
        "base_1000",
        base_1000,
        "mistake",
        "I typed the base as 1000 instead of 10000",
    ),
    BlindCase(
        CHECK,
        "transposed_table",
        transposed_table,
        "mistake",
        "I returned the table transposed, (d_model, max_len)",
    ),
    BlindCase(
        CHECK,
        "frequency_times_two_pi",
        frequency_times_two_pi,
        "mistake",
        "I multiplied the frequencies by 2 pi, reading w_j as cycles instead of radians",
    ),
    BlindCase(
        CHECK,
        "log_space_like_the_paper",
        log_space_like_the_paper,
        "correct",
        "div_term = exp(2j * -log(10000) / d), in float64, cast to float32 at the end",
    ),
    BlindCase(
        CHECK,
        "numpy_loops",
        numpy_loops,
        "correct",
        "two Python loops that fill a NumPy array, turned into a float32 tensor",
    ),
    BlindCase(
        CHECK,
        "stack_and_flatten",
        stack_and_flatten,
        "correct",
        "sin and cos stacked on a last axis and flattened to interleave them; base is an extra "
        "argument with default 10000",
    ),
]
