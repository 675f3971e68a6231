"""Blind set B7, check_sinusoidal_encoding (chapter 10): the sinusoidal position table."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_sinusoidal_encoding"


# ---------------------------------------------------------------- mistakes


def pe_exponent_j_not_2j(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    j = torch.arange(d_model // 2, dtype=torch.float64)  # pair index j = 0 .. d/2 - 1
    angles = pos * 10000.0 ** (-j / d_model)  # 10000^(-j/d)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angles), torch.cos(angles)
    return pe.float()


def pe_column_index_exponent(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    i = torch.arange(d_model, dtype=torch.float64)  # every column its own frequency
    angles = pos / 10000.0 ** (i / d_model)  # (max_len, D)
    pe = torch.where(i.long() % 2 == 0, torch.sin(angles), torch.cos(angles))
    return pe.float()


def pe_halves_concatenated(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    inv_freq = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2) / d_model)
    angles = pos * inv_freq
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=1).float()  # [sin | cos]


def pe_positions_from_one(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(1, max_len + 1, dtype=torch.float64)[:, None]  # the first word is 1
    inv_freq = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2) / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * inv_freq)
    pe[:, 1::2] = torch.cos(pos * inv_freq)
    return pe.float()


def pe_log10(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    inv_freq = torch.exp(-math.log10(10000.0) * torch.arange(0, d_model, 2) / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * inv_freq)
    pe[:, 1::2] = torch.cos(pos * inv_freq)
    return pe.float()


def pe_int_table(max_len: int, d_model: int) -> Tensor:
    position = torch.arange(max_len).unsqueeze(1)  # (max_len, 1)
    div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
    pe = torch.zeros_like(position).repeat(1, d_model)  # (max_len, D), like the positions
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


def pe_transposed(max_len: int, d_model: int) -> Tensor:
    j2 = torch.arange(0, d_model, 2, dtype=torch.float64)[:, None]  # (D/2, 1)
    pos = torch.arange(max_len, dtype=torch.float64)[None, :]  # (1, max_len)
    angles = pos * 10000.0 ** (-j2 / d_model)  # (D/2, max_len)
    pe = torch.empty(d_model, max_len, dtype=torch.float64)
    pe[0::2], pe[1::2] = torch.sin(angles), torch.cos(angles)
    return pe.float()  # (D, max_len): one column per position


def pe_batch_axis(max_len: int, d_model: int) -> Tensor:
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    div_term = torch.exp(
        torch.arange(0, d_model, 2, dtype=torch.float64) * -(math.log(1e4) / d_model)
    )
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe.unsqueeze(0).float()  # (1, max_len, D), ready to add to a batch


def pe_loop_double_two(max_len: int, d_model: int) -> Tensor:
    pe = torch.zeros(max_len, d_model)
    for pos in range(max_len):
        for i in range(0, d_model, 2):  # i is already the even column 2j
            pe[pos, i] = math.sin(pos / 10000 ** ((2 * i) / d_model))
            pe[pos, i + 1] = math.cos(pos / 10000 ** ((2 * i) / d_model))
    return pe


def pe_base_1000(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    inv_freq = 1000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * inv_freq)
    pe[:, 1::2] = torch.cos(pos * inv_freq)
    return pe.float()


def pe_numpy_array(max_len: int, d_model: int) -> np.ndarray:
    pos = np.arange(max_len)[:, None]
    inv_freq = 1.0 / 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((max_len, d_model), dtype=np.float32)
    pe[:, 0::2] = np.sin(pos * inv_freq)
    pe[:, 1::2] = np.cos(pos * inv_freq)
    return pe  # a NumPy table


def pe_one_row_short(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len - 1, dtype=torch.float64)[:, None]  # positions up to max_len - 1?
    inv_freq = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.zeros(max_len - 1, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * inv_freq)
    pe[:, 1::2] = torch.cos(pos * inv_freq)
    return pe.float()


# ---------------------------------------------------------------- correct variants


def pe_stack_interleave(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)
    inv_freq = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = torch.outer(pos, inv_freq)  # (max_len, D/2)
    pe = torch.stack([angles.sin(), angles.cos()], dim=-1)  # (max_len, D/2, 2)
    return pe.reshape(max_len, d_model).to(torch.float32)


def pe_python_loops(max_len: int, d_model: int) -> Tensor:
    rows = []
    for i in range(max_len):
        row = []
        for j in range(d_model // 2):
            w = 10000 ** (-2 * j / d_model)
            row += [math.sin(i * w), math.cos(i * w)]
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float32).reshape(max_len, d_model)


def pe_complex_exponential(max_len: int, d_model: int) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    inv_freq = torch.pow(10000.0, -torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    z = torch.polar(torch.ones(max_len, d_model // 2, dtype=torch.float64), pos * inv_freq)
    re_im = torch.view_as_real(z)  # (..., 2) = (cos, sin)
    return re_im.flip(-1).reshape(max_len, d_model).float()  # (sin, cos) pairs


def pe_annotated_float64(max_len: int, d_model: int, base: float = 10000.0) -> Tensor:
    """The Annotated Transformer's recipe in float64, with an optional base."""
    position = torch.arange(0, max_len, dtype=torch.float64).unsqueeze(1)
    div_term = torch.exp(
        torch.arange(0, d_model, 2, dtype=torch.float64) * -(math.log(base) / d_model)
    )
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe.float()


CASES = [
    BlindCase(
        check=CHECK,
        name="exponent_j_over_d",
        code=pe_exponent_j_not_2j,
        kind="mistake",
        what="I used the pair index j in the exponent, 10000^(-j/d), instead of 10000^(-2j/d).",
    ),
    BlindCase(
        check=CHECK,
        name="exponent_is_column_index",
        code=pe_column_index_exponent,
        kind="mistake",
        what="I gave every column i its own frequency 10000^(-i/d), so the cosine of pair j "
        "uses 2j+1 in the exponent instead of sharing 2j with its sine.",
    ),
    BlindCase(
        check=CHECK,
        name="sin_half_then_cos_half",
        code=pe_halves_concatenated,
        kind="mistake",
        what="I concatenated all the sines then all the cosines, [sin | cos] as in tensor2tensor, "
        "instead of interleaving them.",
    ),
    BlindCase(
        check=CHECK,
        name="positions_from_one",
        code=pe_positions_from_one,
        kind="mistake",
        what="I numbered the positions 1..max_len instead of 0..max_len - 1.",
    ),
    BlindCase(
        check=CHECK,
        name="log10_in_exp",
        code=pe_log10,
        kind="mistake",
        what="I wrote the frequencies as exp(-log10(10000) * 2j / d), using math.log10 where "
        "the natural log is needed.",
    ),
    BlindCase(
        check=CHECK,
        name="integer_table",
        code=pe_int_table,
        kind="mistake",
        what="I made the table with zeros_like(position), an integer tensor, so every sine and "
        "cosine is truncated to an integer.",
    ),
    BlindCase(
        check=CHECK,
        name="transposed_table",
        code=pe_transposed,
        kind="mistake",
        what="I built the table with one column per position, (d_model, max_len), instead of "
        "one row per position.",
    ),
    BlindCase(
        check=CHECK,
        name="leading_batch_axis",
        code=pe_batch_axis,
        kind="mistake",
        what="I returned pe.unsqueeze(0), (1, max_len, d_model), ready to add to a batch, as "
        "tutorials do inside their module.",
    ),
    BlindCase(
        check=CHECK,
        name="loop_doubles_the_two",
        code=pe_loop_double_two,
        kind="mistake",
        what="I looped over the even columns i = 0, 2, 4, ... and wrote 10000^(2i/d), so the "
        "2 is counted twice.",
    ),
    BlindCase(
        check=CHECK,
        name="base_1000",
        code=pe_base_1000,
        kind="mistake",
        what="I typed 1000 instead of 10000 as the base.",
    ),
    BlindCase(
        check=CHECK,
        name="numpy_array",
        code=pe_numpy_array,
        kind="mistake",
        what="I computed the table in NumPy and returned the ndarray instead of a torch tensor.",
    ),
    BlindCase(
        check=CHECK,
        name="one_row_short",
        code=pe_one_row_short,
        kind="mistake",
        what="I built max_len - 1 rows, thinking the last position is max_len - 1.",
    ),
    BlindCase(
        check=CHECK,
        name="stack_and_reshape",
        code=pe_stack_interleave,
        kind="correct",
        what="I stacked sin and cos on a last axis of size 2 and reshaped to (max_len, d), "
        "which interleaves them.",
    ),
    BlindCase(
        check=CHECK,
        name="pure_python_loops",
        code=pe_python_loops,
        kind="correct",
        what="I filled the table with Python loops and math.sin/math.cos (float64 arithmetic), "
        "then made a float32 tensor.",
    ),
    BlindCase(
        check=CHECK,
        name="complex_exponential",
        code=pe_complex_exponential,
        kind="correct",
        what="I computed e^{i angle} with torch.polar, took (real, imag) = (cos, sin) and "
        "flipped each pair to (sin, cos).",
    ),
    BlindCase(
        check=CHECK,
        name="annotated_recipe_float64_base_kwarg",
        code=pe_annotated_float64,
        kind="correct",
        what="I used the Annotated Transformer's div_term recipe in float64, with an optional "
        "base argument (default 10000).",
    ),
]
