"""Blind set B15, check_nadaraya_watson (chapter 5): Gaussian attention pooling."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_nadaraya_watson"


def _diff(queries: Tensor, keys: Tensor) -> Tensor:
    return queries.unsqueeze(-1) - keys  # (T_q, T_k)


def _pool(weights: Tensor, values: Tensor) -> tuple[Tensor, Tensor]:
    return (weights * values).sum(-1), weights


# ---------------------------------------------------------------- mistakes


def nw_softmax_queries(queries, keys, values, width=1.0):
    return _pool(torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=0), values)


def nw_no_half(queries, keys, values, width=1.0):
    return _pool(torch.softmax(-(_diff(queries, keys) ** 2) / width**2, dim=-1), values)


def nw_no_square(queries, keys, values, width=1.0):
    return _pool(torch.softmax(-_diff(queries, keys).abs() / (2 * width**2), dim=-1), values)


def nw_width_multiplies(queries, keys, values, width=1.0):
    return _pool(torch.softmax(-(_diff(queries, keys) ** 2) * (2 * width**2), dim=-1), values)


def nw_width_not_squared(queries, keys, values, width=1.0):
    return _pool(torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width), dim=-1), values)


def nw_sign_flipped(queries, keys, values, width=1.0):
    return _pool(torch.softmax(_diff(queries, keys) ** 2 / (2 * width**2), dim=-1), values)


def nw_average(queries, keys, values, width=1.0):
    T_k = keys.shape[-1]
    weights = torch.full((queries.shape[0], T_k), 1.0 / T_k, dtype=values.dtype)
    return _pool(weights, values)


def nw_width_detached(queries, keys, values, width=1.0):
    w = float(width)  # a plain number is simpler
    return _pool(torch.softmax(-(_diff(queries, keys) ** 2) / (2 * w**2), dim=-1), values)


def nw_unnormalised(queries, keys, values, width=1.0):
    weights = torch.exp(-(_diff(queries, keys) ** 2) / (2 * width**2))  # the Gaussian kernel
    return _pool(weights, values)


def nw_operator_precedence(queries, keys, values, width=1.0):
    scores = -(_diff(queries, keys) ** 2) / 2 * width**2  # / 2 * w^2 reads as (/2) * w^2
    return _pool(torch.softmax(scores, dim=-1), values)


# ---------------------------------------------------------------- correct variants


def nw_stable_exp(queries, keys, values, width=1.0):
    """exp minus the row maximum, divided by the row sum; matmul when the values are shared."""
    scores = -((queries[:, None] - keys) ** 2) / (2 * width * width)
    e = torch.exp(scores - scores.max(dim=-1, keepdim=True).values)
    weights = e / e.sum(dim=-1, keepdim=True)
    out = weights @ values if values.dim() == 1 else (weights * values).sum(-1)
    return out, weights


def nw_log_softmax(queries, keys, values, width=1.0):
    """Scores from the squared distance times -0.5 / width^2; log_softmax then exp; einsum."""
    width = torch.as_tensor(width, dtype=queries.dtype)
    scores = (queries.unsqueeze(1) - keys).square() * (-0.5 / width.pow(2))
    weights = scores.log_softmax(dim=1).exp()
    values = values.expand_as(weights)
    return torch.einsum("qk,qk->q", weights, values), weights


def nw_broadcast_rows(queries, keys, values, width=1.0):
    """Keys and values always made (T_q, T_k) first."""
    T_q = queries.shape[0]
    if keys.dim() == 1:
        keys = keys.unsqueeze(0).expand(T_q, -1)
        values = values.unsqueeze(0).expand(T_q, -1)
    z = (queries.unsqueeze(1) - keys) / width
    weights = torch.softmax(-0.5 * z**2, dim=1)
    return (weights * values).sum(dim=1), weights


CASES = [
    BlindCase(
        CHECK,
        "softmax_over_queries",
        nw_softmax_queries,
        "mistake",
        "I took the softmax over dim=0, the queries.",
    ),
    BlindCase(
        CHECK, "no_half", nw_no_half, "mistake", "I wrote -(q - k)^2 / width^2, forgetting the 2."
    ),
    BlindCase(
        CHECK,
        "no_square",
        nw_no_square,
        "mistake",
        "I used the absolute distance |q - k| instead of its square.",
    ),
    BlindCase(
        CHECK,
        "width_multiplies",
        nw_width_multiplies,
        "mistake",
        "I multiplied by 2 width^2 instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "width_not_squared",
        nw_width_not_squared,
        "mistake",
        "I divided by 2 width, not 2 width^2.",
    ),
    BlindCase(
        CHECK,
        "sign_flipped",
        nw_sign_flipped,
        "mistake",
        "I dropped the minus sign, so far keys get the most weight.",
    ),
    BlindCase(
        CHECK,
        "average_pooling",
        nw_average,
        "mistake",
        "I returned the plain average of the values (uniform weights).",
    ),
    BlindCase(
        CHECK,
        "width_as_float",
        nw_width_detached,
        "mistake",
        "I converted width with float(), cutting it out of autograd.",
    ),
    BlindCase(
        CHECK,
        "kernel_not_normalised",
        nw_unnormalised,
        "mistake",
        "I used the Gaussian kernel exp(...) as the weights without normalising them.",
    ),
    BlindCase(
        CHECK,
        "precedence_slip",
        nw_operator_precedence,
        "mistake",
        "I wrote / 2 * width**2, which multiplies by width^2.",
    ),
    BlindCase(
        CHECK,
        "stable_exp",
        nw_stable_exp,
        "correct",
        "Softmax written by hand with the row max subtracted; matmul for shared values.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_einsum",
        nw_log_softmax,
        "correct",
        "log_softmax(...).exp() and einsum; the width turned into a tensor.",
    ),
    BlindCase(
        CHECK,
        "broadcast_rows_first",
        nw_broadcast_rows,
        "correct",
        "Shared keys/values expanded to (T_q, T_k) first; scores as -0.5 z^2.",
    ),
]
