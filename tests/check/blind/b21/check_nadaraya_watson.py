"""Blind set B21, check_nadaraya_watson (chapter 5): Gaussian attention pooling as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_nadaraya_watson"


def _pool(weights: Tensor, values: Tensor) -> Tensor:
    return (weights * values).sum(dim=-1)  # (T_q,)


# ---------------------------------------------------------------- mistakes


def nw_softmax_over_queries(queries, keys, values, width=1.0):
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2)
    weights = torch.softmax(scores, dim=0)
    return _pool(weights, values), weights


def nw_no_half(queries, keys, values, width=1.0):
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / width**2
    weights = torch.softmax(scores, dim=-1)
    return _pool(weights, values), weights


def nw_abs_distance(queries, keys, values, width=1.0):
    scores = -(queries.unsqueeze(-1) - keys).abs() / (2 * width**2)
    weights = torch.softmax(scores, dim=-1)
    return _pool(weights, values), weights


def nw_width_multiplies(queries, keys, values, width=1.0):
    scores = -((queries.unsqueeze(-1) - keys) ** 2) * width**2 / 2
    weights = torch.softmax(scores, dim=-1)
    return _pool(weights, values), weights


def nw_width_not_squared(queries, keys, values, width=1.0):
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * width)
    weights = torch.softmax(scores, dim=-1)
    return _pool(weights, values), weights


def nw_sign_flipped(queries, keys, values, width=1.0):
    scores = (queries.unsqueeze(-1) - keys) ** 2 / (2 * width**2)
    weights = torch.softmax(scores, dim=-1)
    return _pool(weights, values), weights


def nw_plain_average(queries, keys, values, width=1.0):
    weights = torch.ones(queries.shape[0], keys.shape[-1], dtype=values.dtype) / keys.shape[-1]
    return _pool(weights, values), weights


def nw_width_as_float(queries, keys, values, width=1.0):
    w = float(width)  # so it works for a float or a tensor
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * w**2)
    weights = torch.softmax(scores, dim=-1)
    return _pool(weights, values), weights


def nw_broadcast_transposed(queries, keys, values, width=1.0):
    diff = queries.unsqueeze(0) - keys.unsqueeze(-1)  # meant (T_q, T_k)
    weights = torch.softmax(-(diff**2) / (2 * width**2), dim=-1)
    return _pool(weights, values), weights


def nw_returns_weights_first(queries, keys, values, width=1.0):
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2)
    weights = torch.softmax(scores, dim=-1)
    return weights, _pool(weights, values)


def nw_matmul_values(queries, keys, values, width=1.0):
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2)
    weights = torch.softmax(scores, dim=-1)
    return weights @ values, weights  # (T_q, T_k) @ (T_k,)


def nw_unnormalized_kernel(queries, keys, values, width=1.0):
    weights = torch.exp(-((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2))
    return _pool(weights, values), weights


# ---------------------------------------------------------------- correct variants


def nw_manual_softmax(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    if keys.dim() == 1:
        keys, values = keys.expand(len(queries), -1), values.expand(len(queries), -1)
    scores = -0.5 * ((queries[:, None] - keys) / width) ** 2  # (T_q, T_k)
    e = torch.exp(scores - scores.max(dim=1, keepdim=True).values)
    weights = e / e.sum(dim=1, keepdim=True)
    return torch.einsum("qk,qk->q", weights, values), weights


def nw_normal_log_prob(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    # the Gaussian's log density; its constant -log(width sqrt(2 pi)) cancels in the softmax
    kernel = torch.distributions.Normal(queries.unsqueeze(-1), width)
    weights = kernel.log_prob(keys).softmax(dim=-1)  # (T_q, T_k)
    return (weights * values).sum(-1), weights


def nw_matmul_when_shared(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    dist2 = (queries.view(-1, 1) - keys) ** 2
    weights = torch.softmax(dist2 * (-0.5 / width**2), dim=1)
    if values.dim() == 1:
        return weights @ values, weights
    return (weights * values).sum(1), weights


def nw_log_weights(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -torch.square(queries.unsqueeze(1) - keys) / (2 * width * width)
    weights = torch.exp(scores - torch.logsumexp(scores, dim=1, keepdim=True))
    return torch.sum(weights * values, dim=1), weights


CASES = [
    BlindCase(
        CHECK,
        "softmax_over_queries",
        nw_softmax_over_queries,
        "mistake",
        "I took the softmax over dim=0, the queries.",
    ),
    BlindCase(CHECK, "no_half", nw_no_half, "mistake", "I dropped the 2 in 2 sigma^2."),
    BlindCase(
        CHECK,
        "abs_distance",
        nw_abs_distance,
        "mistake",
        "I used the absolute distance |q - k| instead of its square.",
    ),
    BlindCase(
        CHECK,
        "width_multiplies",
        nw_width_multiplies,
        "mistake",
        "I multiplied the squared distance by sigma^2 instead of dividing by it.",
    ),
    BlindCase(
        CHECK,
        "width_not_squared",
        nw_width_not_squared,
        "mistake",
        "I divided by 2 sigma instead of 2 sigma^2.",
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
        "plain_average",
        nw_plain_average,
        "mistake",
        "I gave every key the weight 1 / T_k (average pooling).",
    ),
    BlindCase(
        CHECK,
        "width_as_float",
        nw_width_as_float,
        "mistake",
        "I turned the width into a Python float first, which cuts it out of autograd.",
    ),
    BlindCase(
        CHECK,
        "broadcast_transposed",
        nw_broadcast_transposed,
        "mistake",
        "I broadcast queries.unsqueeze(0) - keys.unsqueeze(-1), which gives (T_k, T_q).",
    ),
    BlindCase(
        CHECK,
        "returns_weights_first",
        nw_returns_weights_first,
        "mistake",
        "I returned (weights, predictions) instead of (predictions, weights).",
    ),
    BlindCase(
        CHECK,
        "matmul_values",
        nw_matmul_values,
        "mistake",
        "I predicted with weights @ values, which is a matrix when each query has its own row "
        "of values.",
    ),
    BlindCase(
        CHECK,
        "kernel_not_normalized",
        nw_unnormalized_kernel,
        "mistake",
        "I used exp(score) as the weights without dividing by their sum.",
    ),
    BlindCase(
        CHECK,
        "manual_softmax_einsum",
        nw_manual_softmax,
        "correct",
        "Shared keys expanded to one row per query, softmax by hand, einsum for the sum.",
    ),
    BlindCase(
        CHECK,
        "normal_log_prob",
        nw_normal_log_prob,
        "correct",
        "The softmax of torch.distributions.Normal(q, width).log_prob(k); its constant cancels.",
    ),
    BlindCase(
        CHECK,
        "matmul_when_shared",
        nw_matmul_when_shared,
        "correct",
        "Scores as dist^2 * (-0.5 / width^2); weights @ values for shared values, a row-wise "
        "sum otherwise.",
    ),
    BlindCase(
        CHECK,
        "logsumexp",
        nw_log_weights,
        "correct",
        "Weights as exp(scores - logsumexp(scores)).",
    ),
]
