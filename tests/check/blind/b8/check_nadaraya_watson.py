"""Blind set B8, check_nadaraya_watson (chapter 5): Gaussian-kernel attention pooling."""

from __future__ import annotations

import math

import torch

from .. import BlindCase

CHECK = "check_nadaraya_watson"


# ---------------------------------------------------------------- mistakes


def softmax_over_queries(queries, keys, values, width=1.0):
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2)
    weights = torch.softmax(scores, dim=0)
    return (weights * values).sum(-1), weights


def half_missing(queries, keys, values, width=1.0):
    weights = torch.softmax(-((queries.unsqueeze(-1) - keys) ** 2) / width**2, dim=-1)
    return (weights * values).sum(-1), weights


def absolute_distance(queries, keys, values, width=1.0):
    scores = -(queries.unsqueeze(-1) - keys).abs() / (2 * width**2)  # forgot the square
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(-1), weights


def width_multiplies(queries, keys, values, width=1.0):
    scores = -((queries.unsqueeze(-1) - keys) ** 2) * width**2 / 2
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(-1), weights


def width_not_squared(queries, keys, values, width=1.0):
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * width)
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(-1), weights


def sign_flipped(queries, keys, values, width=1.0):
    scores = (queries.unsqueeze(-1) - keys) ** 2 / (2 * width**2)
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(-1), weights


def width_as_python_float(queries, keys, values, width=1.0):
    sigma = float(width)  # so that math.exp-style formulas work
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * sigma**2)
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(-1), weights


def matmul_prediction(queries, keys, values, width=1.0):
    weights = torch.softmax(-((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2), dim=-1)
    return weights @ values, weights  # fine for shared (T_k,) values only


def exp_over_sum_unstable(queries, keys, values, width=1.0):
    kernel = torch.exp(-((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2))
    weights = kernel / kernel.sum(dim=-1, keepdim=True)  # 0/0 when every key is far away
    return (weights * values).sum(-1), weights


def weights_keys_by_queries(queries, keys, values, width=1.0):
    weights = torch.softmax(-((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2), dim=-1)
    return (weights * values).sum(-1), weights.T  # plotted as (keys, queries)


def average_with_kernel_weights_unnormalized(queries, keys, values, width=1.0):
    kernel = torch.exp(-((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2))
    weights = kernel / keys.shape[-1]  # divided by the number of keys, not by the kernel sum
    return (weights * values).sum(-1), weights


# ---------------------------------------------------------------- correct variants


def stable_exp_by_hand(queries, keys, values, width=1.0):
    scores = -((queries[:, None] - keys) ** 2) / (2 * width**2)
    e = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
    weights = e / e.sum(dim=-1, keepdim=True)
    return (weights * values).sum(dim=-1), weights


def gaussian_log_density(queries, keys, values, width=1.0):
    width = torch.as_tensor(width, dtype=queries.dtype)
    diff = queries.unsqueeze(-1) - keys
    # log N(diff; 0, width^2): the constant -log(width sqrt(2 pi)) cancels in the softmax
    log_pdf = -0.5 * (diff / width) ** 2 - torch.log(width) - 0.5 * math.log(2 * math.pi)
    weights = log_pdf.softmax(dim=-1)
    return torch.einsum("qk,qk->q", weights, values.expand_as(weights)), weights


def expand_keys_first(queries, keys, values, width=1.0):
    T_q = queries.shape[0]
    keys = keys.expand(T_q, keys.shape[-1])  # (T_q, T_k) in both cases
    values = values.expand(T_q, values.shape[-1])
    q = queries.unsqueeze(1).expand_as(keys)
    weights = torch.softmax(-(q - keys).pow(2) / (2 * width * width), dim=1)
    pred = torch.bmm(weights.unsqueeze(1), values.unsqueeze(2)).reshape(T_q)
    return pred, weights


CASES = [
    BlindCase(
        CHECK,
        "softmax_over_queries",
        softmax_over_queries,
        "mistake",
        "I took the softmax with dim=0, over the queries",
    ),
    BlindCase(
        CHECK,
        "half_missing",
        half_missing,
        "mistake",
        "I divided by width**2 and forgot the 2 in 2 sigma^2",
    ),
    BlindCase(
        CHECK,
        "absolute_distance",
        absolute_distance,
        "mistake",
        "I used the absolute distance |q - k| instead of its square",
    ),
    BlindCase(
        CHECK,
        "width_multiplies",
        width_multiplies,
        "mistake",
        "I multiplied the squared distance by width**2 / 2 instead of dividing by it",
    ),
    BlindCase(
        CHECK,
        "width_not_squared",
        width_not_squared,
        "mistake",
        "I divided by 2 * width, forgetting to square the width",
    ),
    BlindCase(
        CHECK,
        "sign_flipped",
        sign_flipped,
        "mistake",
        "I dropped the minus sign, so far keys get the largest weights",
    ),
    BlindCase(
        CHECK,
        "width_as_python_float",
        width_as_python_float,
        "mistake",
        "I converted width with float(width), which cuts a learnable width out of autograd",
    ),
    BlindCase(
        CHECK,
        "matmul_prediction",
        matmul_prediction,
        "mistake",
        "I computed the prediction as weights @ values, which is only right for shared "
        "(T_k,) values, not for one row of values per query",
    ),
    BlindCase(
        CHECK,
        "exp_over_sum_unstable",
        exp_over_sum_unstable,
        "mistake",
        "I normalized exp(scores) by their sum by hand, without subtracting the max, so a "
        "query far from every key gives 0/0 = NaN",
    ),
    BlindCase(
        CHECK,
        "weights_keys_by_queries",
        weights_keys_by_queries,
        "mistake",
        "I returned the weights transposed, (T_k, T_q), to plot them",
    ),
    BlindCase(
        CHECK,
        "average_with_kernel_weights_unnormalized",
        average_with_kernel_weights_unnormalized,
        "mistake",
        "I divided the Gaussian kernel by the number of keys instead of normalizing by "
        "its sum (no softmax)",
    ),
    BlindCase(
        CHECK,
        "stable_exp_by_hand",
        stable_exp_by_hand,
        "correct",
        "softmax written by hand with the row maximum subtracted first",
    ),
    BlindCase(
        CHECK,
        "gaussian_log_density",
        gaussian_log_density,
        "correct",
        "softmax of the full Gaussian log-density (its constant cancels), einsum for the sum",
    ),
    BlindCase(
        CHECK,
        "expand_keys_first",
        expand_keys_first,
        "correct",
        "expanded shared keys and values to (T_q, T_k) first, then bmm for the sum",
    ),
]
