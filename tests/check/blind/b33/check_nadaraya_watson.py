"""Blind set B33, check_nadaraya_watson (chapter 5): Gaussian attention pooling as readers
write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_nadaraya_watson"


def _diff(queries: Tensor, keys: Tensor) -> Tensor:
    return queries.unsqueeze(-1) - keys  # (T_q, T_k), shared or per-query keys


# ---------------------------------------------------------------- mistakes


def nw_softmax_over_queries(queries, keys, values, width=1.0):
    scores = -(_diff(queries, keys) ** 2) / (2 * width**2)
    weights = torch.softmax(scores, dim=0)
    return (weights * values).sum(dim=-1), weights


def nw_no_half(queries, keys, values, width=1.0):
    scores = -(_diff(queries, keys) ** 2) / width**2
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(dim=-1), weights


def nw_absolute_distance(queries, keys, values, width=1.0):
    scores = -_diff(queries, keys).abs() / (2 * width**2)  # the distance |q - k|
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(dim=-1), weights


def nw_precedence(queries, keys, values, width=1.0):
    scores = -(_diff(queries, keys) ** 2) / 2 * width**2  # meant / (2 * width**2)
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(dim=-1), weights


def nw_width_not_squared(queries, keys, values, width=1.0):
    scores = -(_diff(queries, keys) ** 2) / (2 * width)
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(dim=-1), weights


def nw_sign_flipped(queries, keys, values, width=1.0):
    scores = (_diff(queries, keys) ** 2) / (2 * width**2)  # the Gaussian exponent
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(dim=-1), weights


def nw_average(queries, keys, values, width=1.0):
    T_k = keys.shape[-1]
    weights = torch.ones(queries.shape[0], T_k) / T_k
    return (weights * values).sum(dim=-1), weights


def nw_width_as_float(queries, keys, values, width=1.0):
    w = float(width)  # plain number for the formula
    scores = -(_diff(queries, keys) ** 2) / (2 * w**2)
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(dim=-1), weights


def nw_keys_minus_queries_grid(queries, keys, values, width=1.0):
    diff = keys.unsqueeze(-1) - queries  # (T_k, T_q): each key against every query
    weights = torch.softmax(-(diff**2) / (2 * width**2), dim=-1)
    return (weights.T * values).sum(dim=-1), weights


def nw_matmul_values(queries, keys, values, width=1.0):
    scores = -(_diff(queries, keys) ** 2) / (2 * width**2)
    weights = torch.softmax(scores, dim=-1)
    return weights @ values, weights  # weighted sum as a matrix product


def nw_returns_weights_first(queries, keys, values, width=1.0):
    scores = -(_diff(queries, keys) ** 2) / (2 * width**2)
    weights = torch.softmax(scores, dim=-1)
    return weights, (weights * values).sum(dim=-1)


def nw_kernel_values_as_weights(queries, keys, values, width=1.0):
    kernel = torch.exp(-(_diff(queries, keys) ** 2) / (2 * width**2))
    kernel = kernel / (math.sqrt(2 * math.pi) * width)  # the Gaussian density
    prediction = (kernel * values).sum(dim=-1) / kernel.sum(dim=-1)
    return prediction, kernel


def nw_sum_over_queries(queries, keys, values, width=1.0):
    scores = -(_diff(queries, keys) ** 2) / (2 * width**2)
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(dim=0), weights


# ---------------------------------------------------------------- correct variants


def nw_scaled_distance(queries, keys, values, width=1.0):
    """The distance measured in widths first: -((q - k) / width)^2 / 2."""
    z = (queries[:, None] - keys) / width
    weights = torch.softmax(-0.5 * z.square(), dim=1)
    return (weights * values).sum(dim=1), weights


def nw_expand_and_einsum(queries, keys, values, width=1.0):
    """Keys and values expanded to one row per query, then einsum for the weighted sum."""
    T_q = queries.shape[0]
    if keys.dim() == 1:
        keys, values = keys.expand(T_q, -1), values.expand(T_q, -1)
    scores = -((queries.unsqueeze(1) - keys) ** 2) / (2 * torch.as_tensor(width) ** 2)
    weights = scores.softmax(dim=-1)
    return torch.einsum("qk,qk->q", weights, values), weights


def nw_stable_exp(queries, keys, values, width=1.0):
    """The softmax written out: subtract the row's max, exp, divide by the row sum."""
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * width * width)
    scores = scores - scores.amax(dim=-1, keepdim=True)
    e = scores.exp()
    weights = e / e.sum(dim=-1, keepdim=True)
    return torch.sum(weights * values, dim=-1), weights


def nw_log_softmax(queries, keys, values, width=1.0):
    """Weights as exp(log_softmax), the 2 sigma^2 precomputed as the variance times two."""
    var2 = 2 * width**2
    logw = torch.log_softmax(-torch.square(queries[:, None] - keys) / var2, dim=-1)
    weights = logw.exp()
    return (weights * values).sum(-1), weights


CASES = [
    BlindCase(
        CHECK,
        "softmax_over_queries",
        nw_softmax_over_queries,
        "mistake",
        "I took the softmax with dim=0, over the queries.",
    ),
    BlindCase(
        CHECK,
        "no_half",
        nw_no_half,
        "mistake",
        "I divided the squared distance by width**2 and forgot the 2.",
    ),
    BlindCase(
        CHECK,
        "absolute_distance",
        nw_absolute_distance,
        "mistake",
        "I used the distance |q - k| instead of its square.",
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
        "I divided by 2 * width instead of 2 * width**2.",
    ),
    BlindCase(
        CHECK,
        "sign_flipped",
        nw_sign_flipped,
        "mistake",
        "I left out the minus sign of the score.",
    ),
    BlindCase(
        CHECK,
        "average",
        nw_average,
        "mistake",
        "I gave every key the same weight 1 / T_k, the plain average.",
    ),
    BlindCase(
        CHECK,
        "width_as_float",
        nw_width_as_float,
        "mistake",
        "I turned width into a Python float with float(width) before using it.",
    ),
    BlindCase(
        CHECK,
        "keys_minus_queries_grid",
        nw_keys_minus_queries_grid,
        "mistake",
        "I built the grid as keys minus queries, (T_k, T_q), and took the softmax over its last "
        "axis.",
    ),
    BlindCase(
        CHECK,
        "matmul_values",
        nw_matmul_values,
        "mistake",
        "I computed the prediction as weights @ values.",
    ),
    BlindCase(
        CHECK,
        "returns_weights_first",
        nw_returns_weights_first,
        "mistake",
        "I return (weights, predictions) instead of (predictions, weights).",
    ),
    BlindCase(
        CHECK,
        "kernel_values_as_weights",
        nw_kernel_values_as_weights,
        "mistake",
        "I computed the Gaussian density of each key, divided by its sum for the prediction, "
        "and returned the density values as the weights.",
    ),
    BlindCase(
        CHECK,
        "sum_over_queries",
        nw_sum_over_queries,
        "mistake",
        "I summed weights * values over dim=0 instead of over the keys.",
    ),
    BlindCase(
        CHECK,
        "scaled_distance",
        nw_scaled_distance,
        "correct",
        "The distance divided by the width first, then -z^2 / 2 and the softmax.",
    ),
    BlindCase(
        CHECK,
        "expand_and_einsum",
        nw_expand_and_einsum,
        "correct",
        "Shared keys and values expanded to one row per query, einsum for the weighted sum.",
    ),
    BlindCase(
        CHECK,
        "stable_exp",
        nw_stable_exp,
        "correct",
        "The softmax written by hand: the row max subtracted, exp, divided by the row sum.",
    ),
    BlindCase(
        CHECK,
        "log_softmax",
        nw_log_softmax,
        "correct",
        "The weights as the exp of log_softmax, with 2 width^2 computed once.",
    ),
]
