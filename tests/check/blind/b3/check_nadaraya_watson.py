"""Blind cases for check_nadaraya_watson (chapter 5), written from the chapter's text only."""

from __future__ import annotations

import torch
from torch.distributions import Normal

from .. import BlindCase

CHECK = "check_nadaraya_watson"


def _diff(queries, keys):
    return queries.unsqueeze(-1) - keys  # (T_q, T_k), keys (T_k,) or (T_q, T_k)


def softmax_over_queries(queries, keys, values, width=1.0):
    scores = -(_diff(queries, keys) ** 2) / (2 * width**2)
    weights = torch.softmax(scores, dim=0)
    return (weights * values).sum(dim=-1), weights


def forgot_the_half(queries, keys, values, width=1.0):
    scores = -(_diff(queries, keys) ** 2) / width**2
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(dim=-1), weights


def absolute_distance(queries, keys, values, width=1.0):
    scores = -_diff(queries, keys).abs() / (2 * width**2)
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(dim=-1), weights


def width_multiplies(queries, keys, values, width=1.0):
    scores = -(_diff(queries, keys) ** 2) * width**2 / 2
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(dim=-1), weights


def width_not_squared(queries, keys, values, width=1.0):
    scores = -(_diff(queries, keys) ** 2) / (2 * width)
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(dim=-1), weights


def sign_flipped(queries, keys, values, width=1.0):
    scores = (_diff(queries, keys) ** 2) / (2 * width**2)
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(dim=-1), weights


def kernel_not_normalized(queries, keys, values, width=1.0):
    weights = torch.exp(-(_diff(queries, keys) ** 2) / (2 * width**2))  # the Gaussian kernel
    return (weights * values).sum(dim=-1), weights


def matmul_for_the_sum(queries, keys, values, width=1.0):
    scores = -(_diff(queries, keys) ** 2) / (2 * width**2)
    weights = torch.softmax(scores, dim=-1)
    return weights @ values, weights


def width_as_float(queries, keys, values, width=1.0):
    width = float(width)  # so that the formula works for a number and a tensor alike
    scores = -(_diff(queries, keys) ** 2) / (2 * width**2)
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(dim=-1), weights


def weights_first(queries, keys, values, width=1.0):
    scores = -(_diff(queries, keys) ** 2) / (2 * width**2)
    weights = torch.softmax(scores, dim=-1)
    return weights, (weights * values).sum(dim=-1)


def exp_over_sum_stable(queries, keys, values, width=1.0):
    if keys.dim() == 1:
        keys, values = keys.expand(len(queries), -1), values.expand(len(queries), -1)
    scores = -((queries[:, None] - keys) ** 2) / (2 * width * width)
    scores = scores - scores.max(dim=1, keepdim=True).values
    e = scores.exp()
    weights = e / e.sum(dim=1, keepdim=True)
    return torch.einsum("qk,qk->q", weights, values), weights


def normal_log_prob(queries, keys, values, width=1.0):
    width = torch.as_tensor(width, dtype=queries.dtype)
    log_kernel = Normal(queries.unsqueeze(-1), width).log_prob(keys)  # + constants per row
    weights = log_kernel.log_softmax(dim=-1).exp()
    return (weights * values).sum(-1), weights


def half_inverse_variance(queries, keys, values, width=1.0):
    precision = 0.5 / width**2
    d = queries.reshape(-1, 1) - keys
    weights = torch.softmax(-precision * d * d, dim=1)
    return (weights * values).sum(dim=1), weights


CASES = [
    BlindCase(
        CHECK,
        "softmax_over_queries",
        softmax_over_queries,
        "mistake",
        "I took the softmax with dim=0, over the queries instead of the keys",
    ),
    BlindCase(
        CHECK,
        "forgot_the_half",
        forgot_the_half,
        "mistake",
        "I forgot the 2 in the denominator: -(q - k)^2 / width^2",
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
        "I multiplied the squared distance by width^2 instead of dividing by it",
    ),
    BlindCase(
        CHECK,
        "width_not_squared",
        width_not_squared,
        "mistake",
        "I divided by 2 * width instead of 2 * width^2 (the width not squared)",
    ),
    BlindCase(
        CHECK,
        "sign_flipped",
        sign_flipped,
        "mistake",
        "I left out the minus sign, so far keys get the largest weights",
    ),
    BlindCase(
        CHECK,
        "kernel_not_normalized",
        kernel_not_normalized,
        "mistake",
        "I used the Gaussian kernel exp(-(q - k)^2 / (2 width^2)) directly as the weights, "
        "without normalizing them to sum to 1",
    ),
    BlindCase(
        CHECK,
        "matmul_for_the_sum",
        matmul_for_the_sum,
        "mistake",
        "I wrote the weighted sum as weights @ values, which only works for shared (T_k,) "
        "values, not for one row of values per query",
    ),
    BlindCase(
        CHECK,
        "width_as_float",
        width_as_float,
        "mistake",
        "I converted the width with float(width), which cuts it out of autograd",
    ),
    BlindCase(
        CHECK,
        "weights_first",
        weights_first,
        "mistake",
        "I returned (weights, predictions) instead of (predictions, weights)",
    ),
    BlindCase(
        CHECK,
        "exp_over_sum_stable",
        exp_over_sum_stable,
        "correct",
        "softmax by hand (subtract the row max, exp, divide by the sum) and an einsum for the "
        "weighted sum, after expanding shared keys to one row per query",
    ),
    BlindCase(
        CHECK,
        "normal_log_prob",
        normal_log_prob,
        "correct",
        "I scored with torch.distributions.Normal(q, width).log_prob(k); its extra constants "
        "are the same in a row, so the softmax removes them",
    ),
    BlindCase(
        CHECK,
        "half_inverse_variance",
        half_inverse_variance,
        "correct",
        "I multiplied by the precision 0.5 / width^2 and wrote the square as d * d",
    ),
]
