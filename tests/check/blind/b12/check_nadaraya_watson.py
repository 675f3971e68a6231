"""Blind set B12, check_nadaraya_watson (chapter 5): Gaussian attention pooling."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_nadaraya_watson"


def _diff2(queries: Tensor, keys: Tensor) -> Tensor:
    return (queries.unsqueeze(-1) - keys) ** 2  # (T_q, T_k)


def _pool(weights: Tensor, values: Tensor) -> tuple[Tensor, Tensor]:
    return (weights * values).sum(-1), weights


# ---------------------------------------------------------------- mistakes


def nw_softmax_queries(queries, keys, values, width=1.0):
    weights = torch.softmax(-_diff2(queries, keys) / (2 * width**2), dim=0)
    return _pool(weights, values)


def nw_no_half(queries, keys, values, width=1.0):
    return _pool(torch.softmax(-_diff2(queries, keys) / width**2, dim=-1), values)


def nw_abs_distance(queries, keys, values, width=1.0):
    scores = -(queries.unsqueeze(-1) - keys).abs() / (2 * width**2)  # the distance |q - k|
    return _pool(torch.softmax(scores, dim=-1), values)


def nw_width_multiplies(queries, keys, values, width=1.0):
    scores = -_diff2(queries, keys) * width**2 / 2
    return _pool(torch.softmax(scores, dim=-1), values)


def nw_width_not_squared(queries, keys, values, width=1.0):
    return _pool(torch.softmax(-_diff2(queries, keys) / (2 * width), dim=-1), values)


def nw_sign_flipped(queries, keys, values, width=1.0):
    return _pool(torch.softmax(_diff2(queries, keys) / (2 * width**2), dim=-1), values)


def nw_average(queries, keys, values, width=1.0):
    weights = torch.ones_like(_diff2(queries, keys))
    return _pool(weights / weights.sum(-1, keepdim=True), values)


def nw_width_float(queries, keys, values, width=1.0):
    sigma = float(width)  # a plain number for the formula
    return _pool(torch.softmax(-_diff2(queries, keys) / (2 * sigma**2), dim=-1), values)


def nw_not_normalised(queries, keys, values, width=1.0):
    weights = torch.exp(-_diff2(queries, keys) / (2 * width**2))  # the Gaussian kernel
    return _pool(weights, values)


def nw_matmul_values(queries, keys, values, width=1.0):
    weights = torch.softmax(-_diff2(queries, keys) / (2 * width**2), dim=-1)
    return weights @ values, weights  # fine for shared values only


# ---------------------------------------------------------------- correct variants


def nw_exp_normalise(queries, keys, values, width=1.0):
    scores = -0.5 * ((queries[:, None] - keys) / width) ** 2
    scores = scores - scores.max(dim=-1, keepdim=True).values
    w = scores.exp()
    w = w / w.sum(dim=-1, keepdim=True)
    return (w * values).sum(dim=-1), w


def nw_log_softmax(queries, keys, values, width=1.0):
    width = torch.as_tensor(width, dtype=queries.dtype)
    keys2 = keys.expand(queries.shape[0], keys.shape[-1])
    vals2 = values.expand_as(keys2)
    logw = torch.log_softmax(-((queries.unsqueeze(1) - keys2).square()) / (2 * width * width), 1)
    w = logw.exp()
    return torch.einsum("qk,qk->q", w, vals2), w


def nw_explicit_cases(queries, keys, values, width=1.0):
    var2 = 2 * width**2
    if keys.dim() == 1:
        d = queries.reshape(-1, 1) - keys.reshape(1, -1)
        w = torch.softmax(-d * d / var2, dim=1)
        return w @ values, w
    d = queries.reshape(-1, 1) - keys
    w = torch.softmax(-d * d / var2, dim=1)
    return (w * values).sum(1), w


CASES = [
    BlindCase(
        CHECK,
        "softmax_over_queries",
        nw_softmax_queries,
        "mistake",
        "I took the softmax over dim=0, the queries, instead of the keys.",
    ),
    BlindCase(CHECK, "no_half", nw_no_half, "mistake", "I divided by width^2 and forgot the 2."),
    BlindCase(
        CHECK,
        "absolute_distance",
        nw_abs_distance,
        "mistake",
        "I used the distance |q - k| instead of its square.",
    ),
    BlindCase(
        CHECK,
        "width_multiplies",
        nw_width_multiplies,
        "mistake",
        "I multiplied the squared distance by width^2 / 2 instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "width_not_squared",
        nw_width_not_squared,
        "mistake",
        "I divided by 2 * width instead of 2 * width^2.",
    ),
    BlindCase(
        CHECK,
        "sign_flipped",
        nw_sign_flipped,
        "mistake",
        "I left out the minus sign, so far keys get the most weight.",
    ),
    BlindCase(
        CHECK,
        "plain_average",
        nw_average,
        "mistake",
        "I gave every key the same weight: the mean of the values.",
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
        "not_normalised",
        nw_not_normalised,
        "mistake",
        "I used exp of the scores as weights without dividing by their sum.",
    ),
    BlindCase(
        CHECK,
        "matmul_values",
        nw_matmul_values,
        "mistake",
        "I wrote weights @ values, which only works when the values are shared.",
    ),
    BlindCase(
        CHECK,
        "exp_normalise",
        nw_exp_normalise,
        "correct",
        "-0.5 ((q - k) / width)^2, max subtracted, exp and divide by the sum.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_einsum",
        nw_log_softmax,
        "correct",
        "Keys and values expanded to (T_q, T_k), log_softmax then exp, einsum for the sum.",
    ),
    BlindCase(
        CHECK,
        "explicit_cases",
        nw_explicit_cases,
        "correct",
        "Separate branches for shared and per-query keys; matmul in the shared case.",
    ),
]
