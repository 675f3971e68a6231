"""Blind set B19, check_nadaraya_watson (chapter 5): Gaussian-kernel attention pooling."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_nadaraya_watson"


def _pool(scores: Tensor, values: Tensor) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(dim=-1), weights


# ---------------------------------------------------------------- mistakes


def nw_softmax_over_queries(queries, keys, values, width=1.0):
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2)
    weights = torch.softmax(scores, dim=0)  # over the rows
    return (weights * values).sum(dim=-1), weights


def nw_no_half(queries, keys, values, width=1.0):
    return _pool(-((queries[:, None] - keys) ** 2) / width**2, values)


def nw_no_square(queries, keys, values, width=1.0):
    return _pool(-(queries[:, None] - keys).abs() / (2 * width**2), values)


def nw_precedence(queries, keys, values, width=1.0):
    return _pool(-((queries[:, None] - keys) ** 2) / 2 * width**2, values)  # / 2 * w^2


def nw_width_not_squared(queries, keys, values, width=1.0):
    return _pool(-((queries[:, None] - keys) ** 2) / (2 * width), values)


def nw_sign_flipped(queries, keys, values, width=1.0):
    return _pool((queries[:, None] - keys) ** 2 / (2 * width**2), values)


def nw_average(queries, keys, values, width=1.0):
    weights = torch.ones(len(queries), keys.shape[-1], dtype=values.dtype) / keys.shape[-1]
    return (weights * values).sum(-1), weights


def nw_width_float(queries, keys, values, width=1.0):
    sigma = float(width)  # works for a number or a tensor
    return _pool(-((queries[:, None] - keys) ** 2) / (2 * sigma**2), values)


def nw_shared_keys_only(queries, keys, values, width=1.0):
    scores = -((queries[:, None] - keys[None, :]) ** 2) / (2 * width**2)  # keys as one row
    weights = torch.softmax(scores, dim=-1)
    return weights @ values, weights


def nw_returns_weights_first(queries, keys, values, width=1.0):
    predictions, weights = _pool(-((queries[:, None] - keys) ** 2) / (2 * width**2), values)
    return weights, predictions


def nw_keys_as_rows(queries, keys, values, width=1.0):
    scores = -((keys.unsqueeze(-1) - queries) ** 2) / (2 * width**2)  # (T_k, T_q): keys as rows
    weights = torch.softmax(scores, dim=-1).transpose(-2, -1)  # back to (T_q, T_k)
    return (weights * values).sum(dim=-1), weights


# ---------------------------------------------------------------- correct variants


def nw_manual_exp(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    """exp of the shifted scores divided by their sum, keys expanded to one row per query."""
    if keys.dim() == 1:
        keys = keys.expand(len(queries), -1)
        values = values.expand(len(queries), -1)
    d2 = (queries.view(-1, 1) - keys).pow(2)
    scores = -d2 / (2 * width * width)
    e = torch.exp(scores - scores.max(dim=1, keepdim=True).values)
    weights = e / e.sum(dim=1, keepdim=True)
    return torch.einsum("qk,qk->q", weights, values), weights


def nw_log_softmax(queries, keys, values, width=1.0):
    """log_softmax then exp; the kernel's 1/2 written as 0.5; a tensor width kept as is."""
    width = torch.as_tensor(width, dtype=queries.dtype)
    scores = -0.5 * ((queries.unsqueeze(1) - keys) / width) ** 2
    weights = scores.log_softmax(-1).exp()
    return (weights * values).sum(-1), weights


def nw_gaussian_density(queries, keys, values, width=1.0):
    """Gaussian densities with their constant, normalized by hand (the constant cancels)."""
    diff = queries[:, None] - keys
    density = torch.exp(-(diff**2) / (2 * width**2)) / (math.sqrt(2 * math.pi) * width)
    weights = density / density.sum(-1, keepdim=True)
    return (weights * values).sum(-1), weights


CASES = [
    BlindCase(
        CHECK,
        "softmax_over_queries",
        nw_softmax_over_queries,
        "mistake",
        "I took the softmax over dim=0, the queries.",
    ),
    BlindCase(
        CHECK, "no_half", nw_no_half, "mistake", "I left out the 2 in the denominator 2 sigma^2."
    ),
    BlindCase(
        CHECK,
        "abs_not_square",
        nw_no_square,
        "mistake",
        "I used the absolute distance |q - k| instead of its square.",
    ),
    BlindCase(
        CHECK,
        "precedence",
        nw_precedence,
        "mistake",
        "I wrote / 2 * width**2 without parentheses, so the width multiplies.",
    ),
    BlindCase(
        CHECK,
        "width_not_squared",
        nw_width_not_squared,
        "mistake",
        "I divided by 2 * width, not 2 * width^2.",
    ),
    BlindCase(
        CHECK,
        "sign_flipped",
        nw_sign_flipped,
        "mistake",
        "I forgot the minus sign, so far keys get the largest weights.",
    ),
    BlindCase(
        CHECK,
        "average_pooling",
        nw_average,
        "mistake",
        "I gave every key the same weight 1/T_k (average pooling).",
    ),
    BlindCase(
        CHECK,
        "width_as_float",
        nw_width_float,
        "mistake",
        "I turned the width into a Python float, which cuts it out of autograd.",
    ),
    BlindCase(
        CHECK,
        "shared_keys_only",
        nw_shared_keys_only,
        "mistake",
        "I wrote keys[None, :] and weights @ values, which only works for shared keys.",
    ),
    BlindCase(
        CHECK,
        "returns_weights_first",
        nw_returns_weights_first,
        "mistake",
        "I returned (weights, predictions).",
    ),
    BlindCase(
        CHECK,
        "keys_as_rows",
        nw_keys_as_rows,
        "mistake",
        "I built the distances keys by queries, took the softmax over the last axis and "
        "transposed the weights afterwards.",
    ),
    BlindCase(
        CHECK,
        "manual_exp_einsum",
        nw_manual_exp,
        "correct",
        "Keys expanded to one row per query, exp of the shifted scores normalized by hand, "
        "einsum for the sum.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_half",
        nw_log_softmax,
        "correct",
        "-0.5 * ((q - k) / width)^2, then log_softmax and exp.",
    ),
    BlindCase(
        CHECK,
        "gaussian_density",
        nw_gaussian_density,
        "correct",
        "The full Gaussian density with its 1/(sqrt(2 pi) sigma), normalized over the keys.",
    ),
]
