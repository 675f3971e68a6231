"""Blind set B20, check_nadaraya_watson (chapter 5): Gaussian kernel regression as readers
write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_nadaraya_watson"


def _diff(queries: Tensor, keys: Tensor) -> Tensor:
    """q - k for every (query, key): (T_q, T_k), keys shared or one row per query."""
    return queries.unsqueeze(-1) - keys


# ---------------------------------------------------------------- mistakes


def nw_softmax_over_queries(queries, keys, values, width=1.0):
    scores = -(_diff(queries, keys) ** 2) / (2 * width**2)
    weights = torch.softmax(scores, dim=0)
    return (weights * values).sum(-1), weights


def nw_no_half(queries, keys, values, width=1.0):
    scores = -(_diff(queries, keys) ** 2) / width**2
    weights = scores.softmax(-1)
    return (weights * values).sum(-1), weights


def nw_precedence(queries, keys, values, width=1.0):
    scores = -(_diff(queries, keys) ** 2) / 2 * width**2  # -(q-k)^2 / 2 sigma^2
    weights = scores.softmax(-1)
    return (weights * values).sum(-1), weights


def nw_width_not_squared(queries, keys, values, width=1.0):
    scores = -(_diff(queries, keys) ** 2) / (2 * width)
    weights = scores.softmax(-1)
    return (weights * values).sum(-1), weights


def nw_abs_distance(queries, keys, values, width=1.0):
    scores = -_diff(queries, keys).abs() / (2 * width**2)  # the distance |q - k|
    weights = scores.softmax(-1)
    return (weights * values).sum(-1), weights


def nw_sign_flipped(queries, keys, values, width=1.0):
    scores = (_diff(queries, keys) ** 2) / (2 * width**2)
    weights = scores.softmax(-1)
    return (weights * values).sum(-1), weights


def nw_average_pooling(queries, keys, values, width=1.0):
    T_q = queries.shape[0]
    T_k = keys.shape[-1]
    weights = torch.full((T_q, T_k), 1.0 / T_k)  # every key equally
    return (weights * values).sum(-1), weights


def nw_width_as_float(queries, keys, values, width=1.0):
    sigma = float(width)  # a plain number
    scores = -(_diff(queries, keys) ** 2) / (2 * sigma**2)
    weights = scores.softmax(-1)
    return (weights * values).sum(-1), weights


def nw_matmul_values(queries, keys, values, width=1.0):
    scores = -(_diff(queries, keys) ** 2) / (2 * width**2)
    weights = scores.softmax(-1)
    return weights @ values.T, weights  # (T_q, T_k) @ (T_k,)


def nw_weights_transposed(queries, keys, values, width=1.0):
    scores = -((keys.unsqueeze(-1) - queries) ** 2) / (2 * width**2)  # (T_k, T_q)
    weights = scores.softmax(0)  # over the keys
    return (weights * values.unsqueeze(-1)).sum(0), weights


def nw_sum_first_axis(queries, keys, values, width=1.0):
    scores = -(_diff(queries, keys) ** 2) / (2 * width**2)
    weights = scores.softmax(-1)
    return (weights * values).sum(0), weights


def nw_exp_not_normalised(queries, keys, values, width=1.0):
    weights = torch.exp(-(_diff(queries, keys) ** 2) / (2 * width**2))  # the Gaussian kernel
    return (weights * values).sum(-1) / weights.shape[-1], weights


# ---------------------------------------------------------------- correct variants


def nw_exp_normalised(queries, keys, values, width=1.0):
    d2 = (queries[:, None] - keys) ** 2
    scores = -d2 / (2 * width * width)
    scores = scores - scores.max(dim=-1, keepdim=True).values
    e = scores.exp()
    weights = e / e.sum(dim=-1, keepdim=True)
    pred = torch.einsum("qk,qk->q", weights, values.expand_as(weights))
    return pred, weights


def nw_log_softmax(queries, keys, values, width=1.0):
    width = torch.as_tensor(width, dtype=queries.dtype)
    keys = keys.expand(queries.shape[0], -1) if keys.dim() == 1 else keys
    values = values.expand(queries.shape[0], -1) if values.dim() == 1 else values
    scores = -0.5 * ((queries.view(-1, 1) - keys) / width) ** 2
    weights = F.log_softmax(scores, dim=1).exp()
    return (weights * values).sum(dim=1), weights


def nw_loop(queries, keys, values, width=1.0):
    preds, rows = [], []
    for i, q in enumerate(queries):
        k = keys if keys.dim() == 1 else keys[i]
        v = values if values.dim() == 1 else values[i]
        w = torch.softmax(-((q - k) ** 2) / (2 * width**2), dim=0)
        rows.append(w)
        preds.append(torch.dot(w, v))
    return torch.stack(preds), torch.stack(rows)


def nw_inverse_variance(queries, keys, values, width=1.0):
    inv = 1.0 / (2.0 * width**2)
    scores = -inv * torch.square(torch.sub(queries.unsqueeze(1), keys))
    weights = torch.softmax(scores, -1)
    return torch.sum(weights * values, -1), weights


CASES = [
    BlindCase(
        CHECK,
        "softmax_dim0",
        nw_softmax_over_queries,
        "mistake",
        "I took the softmax over dim=0.",
    ),
    BlindCase(CHECK, "no_half", nw_no_half, "mistake", "I divided by sigma^2 without the 2."),
    BlindCase(
        CHECK,
        "precedence",
        nw_precedence,
        "mistake",
        "I wrote / 2 * width**2 without brackets.",
    ),
    BlindCase(
        CHECK,
        "width_not_squared",
        nw_width_not_squared,
        "mistake",
        "I divided by 2 * width, not 2 * width**2.",
    ),
    BlindCase(
        CHECK,
        "abs_distance",
        nw_abs_distance,
        "mistake",
        "I used the distance |q - k| instead of its square.",
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
        "average_pooling",
        nw_average_pooling,
        "mistake",
        "I gave every key the same weight 1 / T_k.",
    ),
    BlindCase(
        CHECK,
        "width_float",
        nw_width_as_float,
        "mistake",
        "I turned the width into a Python float first.",
    ),
    BlindCase(
        CHECK,
        "matmul_values",
        nw_matmul_values,
        "mistake",
        "I multiplied the weights by the values with @ (values.T).",
    ),
    BlindCase(
        CHECK,
        "weights_keys_by_queries",
        nw_weights_transposed,
        "mistake",
        "I built the scores as (T_k, T_q) and returned them that way.",
    ),
    BlindCase(
        CHECK,
        "sum_over_queries",
        nw_sum_first_axis,
        "mistake",
        "I summed the weighted values over dim 0.",
    ),
    BlindCase(
        CHECK,
        "kernel_not_normalised",
        nw_exp_not_normalised,
        "mistake",
        "I used exp of the score as the weights and divided by T_k, not by their sum.",
    ),
    BlindCase(
        CHECK,
        "manual_softmax_einsum",
        nw_exp_normalised,
        "correct",
        "A max-shifted exp normalised by hand and einsum for the weighted sum.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_expand",
        nw_log_softmax,
        "correct",
        "-0.5 ((q - k) / sigma)^2, log_softmax then exp, keys expanded to (T_q, T_k).",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        nw_loop,
        "correct",
        "A loop over the queries, one softmax and one dot product each.",
    ),
    BlindCase(
        CHECK,
        "inverse_variance",
        nw_inverse_variance,
        "correct",
        "1 / (2 sigma^2) computed once, torch.square of the differences.",
    ),
]
