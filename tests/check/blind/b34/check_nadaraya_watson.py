"""Blind set B34, check_nadaraya_watson (chapter 5): Gaussian attention pooling by readers."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_nadaraya_watson"


def _diff(queries: Tensor, keys: Tensor) -> Tensor:
    return queries.unsqueeze(-1) - keys  # (T_q, T_k)


# ---------------------------------------------------------------- mistakes


def nw_softmax_queries(queries, keys, values, width=1.0):
    w = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=0)
    return (w * values).sum(-1), w


def nw_no_half(queries, keys, values, width=1.0):
    w = torch.softmax(-(_diff(queries, keys) ** 2) / width**2, dim=-1)
    return (w * values).sum(-1), w


def nw_abs_not_square(queries, keys, values, width=1.0):
    w = torch.softmax(-_diff(queries, keys).abs() / (2 * width**2), dim=-1)
    return (w * values).sum(-1), w


def nw_width_times(queries, keys, values, width=1.0):
    w = torch.softmax(-(_diff(queries, keys) ** 2) * width**2 / 2, dim=-1)
    return (w * values).sum(-1), w


def nw_width_not_squared(queries, keys, values, width=1.0):
    w = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width), dim=-1)
    return (w * values).sum(-1), w


def nw_sign_flipped(queries, keys, values, width=1.0):
    w = torch.softmax((_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return (w * values).sum(-1), w


def nw_average(queries, keys, values, width=1.0):
    T_k = keys.shape[-1]
    w = torch.full((queries.shape[0], T_k), 1.0 / T_k, dtype=values.dtype)
    return (w * values).sum(-1), w


def nw_width_float(queries, keys, values, width=1.0):
    sigma = float(width)  # make it a plain number
    w = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * sigma**2), dim=-1)
    return (w * values).sum(-1), w


def nw_precedence(queries, keys, values, width=1.0):
    w = torch.softmax(-(_diff(queries, keys) ** 2) / 2 * width**2, dim=-1)  # / 2 * w^2
    return (w * values).sum(-1), w


def nw_shared_keys_only(queries, keys, values, width=1.0):
    d = queries[:, None] - keys.reshape(-1)[None, :]  # keys always (T_k,)
    w = torch.softmax(-(d**2) / (2 * width**2), dim=-1)
    return w @ values.reshape(-1), w


def nw_exp_not_normalised(queries, keys, values, width=1.0):
    w = torch.exp(-(_diff(queries, keys) ** 2) / (2 * width**2))  # the Gaussian kernel
    return (w * values).sum(-1), w


def nw_matmul_per_query(queries, keys, values, width=1.0):
    w = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return w @ values.T if values.dim() == 2 else w @ values, w  # (T_q, T_q) for row values


# ---------------------------------------------------------------- correct variants


def nw_kernel_ratio(queries, keys, values, width=1.0):
    d2 = (queries.unsqueeze(-1) - keys) ** 2
    logk = -d2 / (2 * width**2)
    k = torch.exp(logk - logk.amax(-1, keepdim=True))  # stable Gaussian kernel
    w = k / k.sum(-1, keepdim=True)
    return (w * values).sum(-1), w


def nw_einsum(queries, keys, values, width=1.0):
    if keys.dim() == 1:
        keys = keys.expand(queries.shape[0], -1)
        values = values.expand(queries.shape[0], -1)
    scores = -0.5 * ((queries[:, None] - keys) / width) ** 2
    w = scores.softmax(dim=1)
    return torch.einsum("qk,qk->q", w, values), w


def nw_log_softmax(queries, keys, values, width=1.0):
    width = torch.as_tensor(width, dtype=queries.dtype)
    scores = -torch.square(queries.unsqueeze(1) - keys) / (2 * torch.square(width))
    w = torch.log_softmax(scores, dim=1).exp()
    return torch.sum(w * values, dim=1), w


CASES = [
    BlindCase(
        CHECK,
        "softmax_over_queries",
        nw_softmax_queries,
        "mistake",
        "I took the softmax over dim=0",
    ),
    BlindCase(CHECK, "no_half", nw_no_half, "mistake", "I divided by width^2 and forgot the 2"),
    BlindCase(
        CHECK, "abs_distance", nw_abs_not_square, "mistake", "I used |q - k| instead of (q - k)^2"
    ),
    BlindCase(
        CHECK,
        "width_multiplies",
        nw_width_times,
        "mistake",
        "I multiplied the squared distance by width^2",
    ),
    BlindCase(
        CHECK,
        "width_not_squared",
        nw_width_not_squared,
        "mistake",
        "I divided by 2 * width, not 2 * width^2",
    ),
    BlindCase(
        CHECK, "positive_score", nw_sign_flipped, "mistake", "I forgot the minus sign in the score"
    ),
    BlindCase(
        CHECK,
        "plain_average",
        nw_average,
        "mistake",
        "I returned the average of the values with uniform weights",
    ),
    BlindCase(
        CHECK,
        "width_as_float",
        nw_width_float,
        "mistake",
        "I turned the width into a Python float with float(width)",
    ),
    BlindCase(
        CHECK,
        "divide_then_multiply",
        nw_precedence,
        "mistake",
        "I wrote / 2 * width**2 without parentheses",
    ),
    BlindCase(
        CHECK,
        "keys_flattened",
        nw_shared_keys_only,
        "mistake",
        "I flattened the keys and values, so per-query rows become one long row",
    ),
    BlindCase(
        CHECK,
        "kernel_not_normalised",
        nw_exp_not_normalised,
        "mistake",
        "I used the Gaussian kernel exp(...) as the weights without normalizing",
    ),
    BlindCase(
        CHECK,
        "matmul_row_values",
        nw_matmul_per_query,
        "mistake",
        "I used w @ values.T when the values come one row per query",
    ),
    BlindCase(
        CHECK,
        "stable_kernel_ratio",
        nw_kernel_ratio,
        "correct",
        "I wrote the softmax myself with the max subtracted",
    ),
    BlindCase(
        CHECK,
        "einsum_expand",
        nw_einsum,
        "correct",
        "I expanded shared keys to rows and used einsum, writing -0.5 ((q - k)/w)^2",
    ),
    BlindCase(
        CHECK,
        "log_softmax_exp",
        nw_log_softmax,
        "correct",
        "I made the width a tensor and took exp of log_softmax",
    ),
]
