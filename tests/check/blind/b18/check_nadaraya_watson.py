"""Blind set B18, check_nadaraya_watson (chapter 5): Gaussian attention pooling as readers write
it."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_nadaraya_watson"


def _pool(weights: Tensor, values: Tensor) -> Tensor:
    """The weighted sum of the values, for shared ``(T_k,)`` or per-query ``(T_q, T_k)`` values."""
    return (weights * values).sum(dim=-1)


# ---------------------------------------------------------------- mistakes


def nw_softmax_over_queries(queries, keys, values, width=1.0):
    scores = -((queries[:, None] - keys) ** 2) / (2 * width**2)  # (T_q, T_k)
    weights = torch.softmax(scores, dim=0)
    return _pool(weights, values), weights


def nw_no_half(queries, keys, values, width=1.0):
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / width**2
    weights = scores.softmax(dim=-1)
    return _pool(weights, values), weights


def nw_abs_distance(queries, keys, values, width=1.0):
    scores = -(queries.unsqueeze(-1) - keys).abs() / (2 * width**2)  # the distance |q - k|
    weights = scores.softmax(dim=-1)
    return _pool(weights, values), weights


def nw_width_multiplies(queries, keys, values, width=1.0):
    scores = -0.5 * (queries.unsqueeze(-1) - keys) ** 2 * width**2
    weights = scores.softmax(dim=-1)
    return _pool(weights, values), weights


def nw_width_not_squared(queries, keys, values, width=1.0):
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * width)
    weights = scores.softmax(dim=-1)
    return _pool(weights, values), weights


def nw_sign_flipped(queries, keys, values, width=1.0):
    scores = (queries.unsqueeze(-1) - keys) ** 2 / (2 * width**2)  # the Gaussian's exponent
    weights = scores.softmax(dim=-1)
    return _pool(weights, values), weights


def nw_average_pooling(queries, keys, values, width=1.0):
    T_k = keys.shape[-1]
    weights = torch.ones(queries.shape[0], T_k, dtype=values.dtype) / T_k
    return _pool(weights, values), weights


def nw_width_as_new_tensor(queries, keys, values, width=1.0):
    sigma = torch.tensor(float(width), dtype=queries.dtype)  # a float or a tensor, made a tensor
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * sigma**2)
    weights = scores.softmax(dim=-1)
    return _pool(weights, values), weights


def nw_flattens_keys(queries, keys, values, width=1.0):
    k = keys.reshape(1, -1)  # (1, T_k): one row of keys for all queries
    scores = -((queries.reshape(-1, 1) - k) ** 2) / (2 * width**2)
    weights = torch.softmax(scores, dim=1)
    return weights @ values.reshape(-1), weights


def nw_matmul_values(queries, keys, values, width=1.0):
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2)
    weights = scores.softmax(dim=-1)  # (T_q, T_k)
    return weights @ values, weights


def nw_returns_weights_first(queries, keys, values, width=1.0):
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2)
    weights = scores.softmax(dim=-1)
    return weights, _pool(weights, values)


# ---------------------------------------------------------------- correct variants


def nw_kernel_normalized(queries, keys, values, width=1.0):
    """The Gaussian kernel with its constant, each row divided by its sum."""
    d = queries[:, None] - keys
    kernel = torch.exp(-(d**2) / (2 * width**2)) / (math.sqrt(2 * math.pi) * width)
    weights = kernel / kernel.sum(dim=-1, keepdim=True)
    return (weights * values).sum(-1), weights


def nw_expand_and_einsum(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    """Shared keys expanded to one row per query first; log_softmax; einsum for the sum."""
    T_q = queries.shape[0]
    if keys.dim() == 1:
        keys, values = keys.expand(T_q, -1), values.expand(T_q, -1)
    inv = 0.5 / width**2
    scores = -inv * (queries.view(T_q, 1) - keys).pow(2)
    weights = torch.log_softmax(scores, dim=1).exp()
    return torch.einsum("qk,qk->q", weights, values), weights


def nw_scaled_queries(queries, keys, values, width=1.0):
    """Distances of q / (sqrt(2) sigma) and k / (sqrt(2) sigma); a helper for the scores."""

    def scores(q, k):
        s = math.sqrt(2.0) * width
        return -torch.square(q.unsqueeze(-1) / s - k / s)

    weights = torch.nn.functional.softmax(scores(queries, keys), dim=-1)
    prediction = torch.sum(weights * values, dim=-1)
    return prediction, weights


CASES = [
    BlindCase(
        CHECK,
        "softmax_over_queries",
        nw_softmax_over_queries,
        "mistake",
        "I took the softmax over dim=0, the queries, instead of over the keys.",
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
        "abs_distance",
        nw_abs_distance,
        "mistake",
        "I used the distance |q - k| instead of its square.",
    ),
    BlindCase(
        CHECK,
        "width_multiplies",
        nw_width_multiplies,
        "mistake",
        "I multiplied the squared distance by width**2 instead of dividing by it.",
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
        "sign_flipped",
        nw_sign_flipped,
        "mistake",
        "I dropped the minus sign, so far keys get the largest weights.",
    ),
    BlindCase(
        CHECK,
        "average_pooling",
        nw_average_pooling,
        "mistake",
        "I gave every key the same weight 1/T_k (average pooling).",
    ),
    BlindCase(
        CHECK,
        "width_as_new_tensor",
        nw_width_as_new_tensor,
        "mistake",
        "I turned the width into a tensor with torch.tensor(float(width)), which cuts it off "
        "from autograd.",
    ),
    BlindCase(
        CHECK,
        "flattens_per_query_keys",
        nw_flattens_keys,
        "mistake",
        "I reshaped the keys to one row (1, -1), so with one row of keys per query every query "
        "sees all rows.",
    ),
    BlindCase(
        CHECK,
        "matmul_values",
        nw_matmul_values,
        "mistake",
        "I wrote weights @ values, which only works when the values are shared by all queries.",
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
        "normalized_kernel",
        nw_kernel_normalized,
        "correct",
        "The Gaussian density with its constant, each row divided by its sum.",
    ),
    BlindCase(
        CHECK,
        "expand_log_softmax_einsum",
        nw_expand_and_einsum,
        "correct",
        "Shared keys expanded to (T_q, T_k) first; log_softmax().exp(); einsum for the sum.",
    ),
    BlindCase(
        CHECK,
        "scaled_inputs_helper",
        nw_scaled_queries,
        "correct",
        "Queries and keys divided by sqrt(2) * width before squaring the difference; a nested "
        "helper for the scores.",
    ),
]
