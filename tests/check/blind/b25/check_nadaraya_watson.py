"""Blind set B25, check_nadaraya_watson (chapter 5): Gaussian attention pooling as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_nadaraya_watson"


def _pool(scores: Tensor, values: Tensor) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(dim=-1), weights


# ---------------------------------------------------------------- mistakes


def nw_abs_distance(queries, keys, values, width=1.0):
    scores = -(queries.unsqueeze(-1) - keys).abs() / (2 * width**2)  # the distance |q - k|
    return _pool(scores, values)


def nw_matmul_values(queries, keys, values, width=1.0):
    weights = torch.softmax(-((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2), dim=-1)
    return weights @ values, weights  # weighted sum as a matrix product


def nw_predictions_2d(queries, keys, values, width=1.0):
    diff = queries[:, None] - keys[None, :]  # (T_q, T_k)
    weights = torch.softmax(-(diff**2) / (2 * width**2), dim=-1)
    return (weights * values).sum(dim=-1), weights


def nw_weights_first(queries, keys, values, width=1.0):
    predictions, weights = _pool(-((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2), values)
    return weights, predictions


def nw_unnormalised_kernel(queries, keys, values, width=1.0):
    kernel = torch.exp(-((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2))  # K(q - k)
    return (kernel * values).sum(dim=-1), kernel


def nw_softmax_flattened(queries, keys, values, width=1.0):
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2)
    weights = torch.softmax(scores.flatten(), dim=0).view_as(scores)  # normalised once
    return (weights * values).sum(dim=-1), weights


def nw_width_squared_once_too_often(queries, keys, values, width=1.0):
    var = width**2
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * var**2)  # 2 sigma^2, sigma^2 = var
    return _pool(scores, values)


def nw_two_times_width_squared(queries, keys, values, width=1.0):
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * width) ** 2  # (2 sigma)^2
    return _pool(scores, values)


def nw_softmax_over_queries(queries, keys, values, width=1.0):
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2)
    weights = torch.softmax(scores, dim=0)
    return (weights * values).sum(dim=-1), weights


def nw_width_multiplies(queries, keys, values, width=1.0):
    scores = -((queries.unsqueeze(-1) - keys) ** 2) * width**2 / 2
    return _pool(scores, values)


def nw_width_as_float(queries, keys, values, width=1.0):
    sigma = float(width)  # so it also works when a tensor is passed
    return _pool(-((queries.unsqueeze(-1) - keys) ** 2) / (2 * sigma**2), values)


def nw_keys_minus_queries_transposed(queries, keys, values, width=1.0):
    scores = -((keys.unsqueeze(-1) - queries) ** 2) / (2 * width**2)  # (T_k, T_q) for shared keys
    weights = torch.softmax(scores, dim=-1)
    return (weights.T * values).sum(dim=-1), weights.T


def nw_default_width_half(queries, keys, values, width=0.5):
    return _pool(-((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2), values)


# ---------------------------------------------------------------- correct variants


def nw_manual_stable_softmax(queries, keys, values, width=1.0):
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2)
    e = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
    weights = e / e.sum(dim=-1, keepdim=True)
    return (weights * values).sum(dim=-1), weights


def nw_normal_log_prob(queries, keys, values, width=1.0):
    width = torch.as_tensor(width, dtype=queries.dtype)
    normal = torch.distributions.Normal(queries.unsqueeze(-1), width)  # one Gaussian per query
    weights = torch.softmax(normal.log_prob(keys), dim=-1)  # the constants cancel
    return torch.einsum("qk,qk->q", weights, values.expand_as(weights)), weights


def nw_loop_over_queries(queries, keys, values, width=1.0):
    rows, preds = [], []
    for i in range(queries.shape[0]):
        k = keys if keys.dim() == 1 else keys[i]
        v = values if values.dim() == 1 else values[i]
        w = torch.softmax(-0.5 * ((queries[i] - k) / width) ** 2, dim=0)
        rows.append(w)
        preds.append(torch.dot(w, v))
    return torch.stack(preds), torch.stack(rows)


def nw_log_softmax(queries, keys, values, width=1.0):
    d2 = torch.square(queries[:, None] - keys)  # (T_q, T_k) in both layouts
    weights = torch.log_softmax(d2 / (-2.0 * width * width), dim=1).exp()
    return (weights * values).sum(1), weights


CASES = [
    BlindCase(
        CHECK,
        "absolute_distance",
        nw_abs_distance,
        "mistake",
        "I used the distance |q - k| instead of its square.",
    ),
    BlindCase(
        CHECK,
        "matmul_with_values",
        nw_matmul_values,
        "mistake",
        "I wrote the weighted sum as weights @ values, which is a matrix product when the values "
        "come one row per query.",
    ),
    BlindCase(
        CHECK,
        "none_indexing_for_keys",
        nw_predictions_2d,
        "mistake",
        "I wrote queries[:, None] - keys[None, :], which only works for shared keys.",
    ),
    BlindCase(
        CHECK,
        "weights_first",
        nw_weights_first,
        "mistake",
        "I returned (weights, predictions) instead of (predictions, weights).",
    ),
    BlindCase(
        CHECK,
        "kernel_not_normalised",
        nw_unnormalised_kernel,
        "mistake",
        "I used the Gaussian kernel exp(-(q - k)^2 / 2 sigma^2) as the weights without dividing "
        "by their sum.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_everything",
        nw_softmax_flattened,
        "mistake",
        "I took one softmax over all (query, key) scores instead of one per query.",
    ),
    BlindCase(
        CHECK,
        "width_to_the_fourth",
        nw_width_squared_once_too_often,
        "mistake",
        "I squared the width into a variance and then squared the variance again in 2 sigma^2.",
    ),
    BlindCase(
        CHECK,
        "two_sigma_squared",
        nw_two_times_width_squared,
        "mistake",
        "I wrote / (2 * width) ** 2, which divides by 4 sigma^2 instead of 2 sigma^2.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        nw_softmax_over_queries,
        "mistake",
        "I took the softmax over dim=0, across the queries.",
    ),
    BlindCase(
        CHECK,
        "width_multiplies",
        nw_width_multiplies,
        "mistake",
        "I multiplied the squared distance by sigma^2 / 2 instead of dividing it by 2 sigma^2.",
    ),
    BlindCase(
        CHECK,
        "width_as_float",
        nw_width_as_float,
        "mistake",
        "I turned the width into a Python float first, so a width tensor gets no gradient.",
    ),
    BlindCase(
        CHECK,
        "keys_minus_queries_transposed",
        nw_keys_minus_queries_transposed,
        "mistake",
        "I subtracted the queries from the keys (keys on the rows) and transposed at the end, "
        "so the softmax ran over the queries.",
    ),
    BlindCase(
        CHECK,
        "default_width_half",
        nw_default_width_half,
        "mistake",
        "I gave width the default 0.5, the value that fitted best, instead of 1.0.",
    ),
    BlindCase(
        CHECK,
        "manual_stable_softmax",
        nw_manual_stable_softmax,
        "correct",
        "The softmax written out: exp of the scores minus their row maximum, over the row sum.",
    ),
    BlindCase(
        CHECK,
        "normal_log_prob",
        nw_normal_log_prob,
        "correct",
        "Scores from torch.distributions.Normal(q, width).log_prob(k), whose constants cancel "
        "in the softmax; einsum for the weighted sum.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        nw_loop_over_queries,
        "correct",
        "A Python loop over the queries, -0.5 ((q - k) / width)^2 as the score, torch.dot for "
        "the prediction.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_exp",
        nw_log_softmax,
        "correct",
        "log_softmax then exp for the weights, the squared distance divided by -2 width^2.",
    ),
]
