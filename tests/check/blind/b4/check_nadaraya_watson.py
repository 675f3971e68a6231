"""Blind cases for check_nadaraya_watson (chapter 5), written from the chapter's text only."""

from __future__ import annotations

import math

import torch

from .. import BlindCase

CHECK = "check_nadaraya_watson"


def _diff(queries, keys):
    return queries.unsqueeze(-1) - keys  # (T_q, T_k)


def softmax_over_queries(queries, keys, values, width=1.0):
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=0)
    return (weights * values).sum(-1), weights


def width_not_squared(queries, keys, values, width=1.0):
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width), dim=-1)
    return (weights * values).sum(-1), weights


def precedence_slip(queries, keys, values, width=1.0):
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / 2 * width**2, dim=-1)
    return (weights * values).sum(-1), weights


def matmul_values(queries, keys, values, width=1.0):
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return weights @ values, weights


def width_as_float(queries, keys, values, width=1.0):
    w = float(width)
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * w * w), dim=-1)
    return (weights * values).sum(-1), weights


def gaussian_density_weights(queries, keys, values, width=1.0):
    d2 = _diff(queries, keys) ** 2
    weights = torch.exp(-d2 / (2 * width**2)) / (math.sqrt(2 * math.pi) * width)
    return (weights * values).sum(-1), weights


def abs_distance(queries, keys, values, width=1.0):
    weights = torch.softmax(-_diff(queries, keys).abs() / (2 * width**2), dim=-1)
    return (weights * values).sum(-1), weights


def stable_exp_by_hand(queries, keys, values, width=1.0):
    scores = -(_diff(queries, keys) ** 2) / (2 * width**2)
    scores = scores - scores.amax(dim=-1, keepdim=True)
    e = scores.exp()
    weights = e / e.sum(dim=-1, keepdim=True)
    return (weights * values).sum(dim=-1), weights


def expand_and_einsum(queries, keys, values, width=1.0, dim=-1):
    T_q = queries.shape[0]
    keys = keys.expand(T_q, keys.shape[-1])
    values = values.expand(T_q, values.shape[-1])
    scores = (queries[:, None] - keys).pow(2).div(2 * width**2).neg()
    weights = scores.softmax(dim=dim)
    return torch.einsum("qk,qk->q", weights, values), weights


def log_softmax_route(queries, keys, values, width=1.0):
    var = width * width
    log_w = torch.log_softmax(-0.5 * (queries.unsqueeze(1) - keys).square() / var, dim=1)
    weights = log_w.exp()
    return (weights * values).sum(1), weights


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
        "width_not_squared",
        width_not_squared,
        "mistake",
        "I divided by 2 * width instead of 2 * width**2",
    ),
    BlindCase(
        CHECK,
        "precedence_slip",
        precedence_slip,
        "mistake",
        "I wrote -(q - k)**2 / 2 * width**2 without brackets, so width multiplies",
    ),
    BlindCase(
        CHECK,
        "matmul_values",
        matmul_values,
        "mistake",
        "I took weights @ values, which is right only for shared values, not one row per query",
    ),
    BlindCase(
        CHECK,
        "width_as_float",
        width_as_float,
        "mistake",
        "I converted the width with float(width) first, to accept both floats and tensors",
    ),
    BlindCase(
        CHECK,
        "gaussian_density_weights",
        gaussian_density_weights,
        "mistake",
        "I used the Gaussian density exp(-d^2/2s^2)/(sqrt(2 pi) s) as weights, no softmax",
    ),
    BlindCase(
        CHECK,
        "abs_distance",
        abs_distance,
        "mistake",
        "I used |q - k| in the score instead of the squared distance",
    ),
    BlindCase(
        CHECK,
        "stable_exp_by_hand",
        stable_exp_by_hand,
        "correct",
        "I wrote the softmax by hand: subtract the row max, exp, divide by the sum",
    ),
    BlindCase(
        CHECK,
        "expand_and_einsum",
        expand_and_einsum,
        "correct",
        "I expanded shared keys and values to (T_q, T_k), einsum for the sum; an extra dim arg",
    ),
    BlindCase(
        CHECK,
        "log_softmax_route",
        log_softmax_route,
        "correct",
        "score written as -0.5 d^2 / var, then exp of log_softmax",
    ),
]
