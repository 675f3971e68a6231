"""Blind set B26, check_nadaraya_watson (chapter 5): Gaussian attention pooling as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_nadaraya_watson"


def _scores(queries: Tensor, keys: Tensor, width: float | Tensor) -> Tensor:
    """Right Gaussian scores, shared by the mistakes that are elsewhere."""
    return -((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2)


# ---------------------------------------------------------------- mistakes


def nw_keys_unsqueezed(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    scores = -((queries - keys.unsqueeze(-1)) ** 2) / (2 * width**2)  # keys down, queries across
    weights = torch.softmax(scores, dim=-1)
    return weights @ values if values.dim() == 1 else (weights * values).sum(-1), weights


def nw_precedence(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    scores = -((queries[:, None] - keys) ** 2) / 2 * width**2  # -(q - k)^2 / 2 sigma^2
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(-1), weights


def nw_matmul_values(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    weights = torch.softmax(_scores(queries, keys, width), dim=-1)  # (T_q, T_k)
    return weights @ values, weights  # the weighted sum as a product


def nw_weights_first(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    weights = torch.softmax(_scores(queries, keys, width), dim=-1)
    return weights, (weights * values).sum(-1)


def nw_width_copied(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    width = torch.tensor(width, dtype=queries.dtype)  # works for floats and tensors alike
    weights = torch.softmax(_scores(queries, keys, width), dim=-1)
    return (weights * values).sum(-1), weights


def nw_divide_by_count(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    kernel = torch.exp(_scores(queries, keys, width))
    weights = kernel / kernel.shape[-1]  # average of kernel-weighted values
    return (weights * values).sum(-1), weights


def nw_pools_keys(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    weights = torch.softmax(_scores(queries, keys, width), dim=-1)
    return (weights * keys).sum(-1), weights


def nw_gaussian_density(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    density = torch.exp(_scores(queries, keys, width)) / (math.sqrt(2 * math.pi) * width)
    return (density * values).sum(-1), density  # the Gaussian kernel as the weights


def nw_unsqueeze_in_place(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    q = queries.unsqueeze_(-1)  # (T_q, 1)
    weights = torch.softmax(-((q - keys) ** 2) / (2 * width**2), dim=-1)
    return (weights * values).sum(-1), weights


def nw_keepdim(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    weights = torch.softmax(_scores(queries, keys, width), dim=-1)
    return (weights * values).sum(-1, keepdim=True), weights  # (T_q, 1)


def nw_variance_as_width(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * width)  # sigma^2 passed as width
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(-1), weights


def nw_softmax_of_distance(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    distance = (queries.unsqueeze(-1) - keys) ** 2 / (2 * width**2)
    weights = 1 - torch.softmax(distance, dim=-1)  # far keys get small weights
    return (weights * values).sum(-1), weights


# ---------------------------------------------------------------- correct variants


def nw_log_sum_exp(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    diff = queries[:, None] - keys
    scores = -diff.square() / (2 * width * width)
    weights = torch.exp(scores - torch.logsumexp(scores, dim=1, keepdim=True))
    return torch.sum(weights * values, dim=1), weights


def nw_broadcast_einsum(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    T_q = queries.shape[0]
    keys = keys.expand(T_q, keys.shape[-1])  # shared keys become one row per query
    values = values.expand(T_q, values.shape[-1])
    weights = (-0.5 * ((queries.view(-1, 1) - keys) / width) ** 2).softmax(-1)
    return torch.einsum("qk,qk->q", weights, values), weights


def nw_query_loop(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    preds, rows = [], []
    for i in range(len(queries)):
        k = keys if keys.dim() == 1 else keys[i]
        v = values if values.dim() == 1 else values[i]
        w = torch.softmax(-((queries[i] - k) ** 2) / (2 * width**2), dim=0)
        rows.append(w)
        preds.append((w * v).sum())
    return torch.stack(preds), torch.stack(rows)


CASES = [
    BlindCase(
        CHECK,
        "keys_unsqueezed",
        nw_keys_unsqueezed,
        "mistake",
        "I unsqueezed the keys instead of the queries, so my score table is (T_k, T_q).",
    ),
    BlindCase(
        CHECK,
        "operator_precedence",
        nw_precedence,
        "mistake",
        "I wrote / 2 * width**2 without brackets, which multiplies by the width squared.",
    ),
    BlindCase(
        CHECK,
        "matmul_with_values",
        nw_matmul_values,
        "mistake",
        "I wrote the weighted sum as weights @ values, which only works for shared values.",
    ),
    BlindCase(
        CHECK,
        "weights_first",
        nw_weights_first,
        "mistake",
        "I return (weights, predictions).",
    ),
    BlindCase(
        CHECK,
        "width_copied_to_new_tensor",
        nw_width_copied,
        "mistake",
        "I wrapped the width in torch.tensor(width) so that floats work, which copies a tensor "
        "width out of the graph.",
    ),
    BlindCase(
        CHECK,
        "kernel_divided_by_count",
        nw_divide_by_count,
        "mistake",
        "I divided the kernel values by the number of keys instead of by their sum.",
    ),
    BlindCase(
        CHECK,
        "pools_keys",
        nw_pools_keys,
        "mistake",
        "I summed the weighted keys instead of the weighted values.",
    ),
    BlindCase(
        CHECK,
        "gaussian_density_weights",
        nw_gaussian_density,
        "mistake",
        "I used the Gaussian density, with its 1/(sqrt(2 pi) sigma), as the weights instead of "
        "a softmax, so the weights do not sum to 1.",
    ),
    BlindCase(
        CHECK,
        "queries_unsqueezed_in_place",
        nw_unsqueeze_in_place,
        "mistake",
        "I used queries.unsqueeze_(-1), which changes the caller's queries to (T_q, 1).",
    ),
    BlindCase(
        CHECK,
        "predictions_keepdim",
        nw_keepdim,
        "mistake",
        "I summed with keepdim=True, so the predictions are (T_q, 1).",
    ),
    BlindCase(
        CHECK,
        "width_read_as_variance",
        nw_variance_as_width,
        "mistake",
        "I divided by 2 * width, reading the width as the variance.",
    ),
    BlindCase(
        CHECK,
        "one_minus_softmax_of_distance",
        nw_softmax_of_distance,
        "mistake",
        "I took a softmax of the distances and used 1 minus it, so far keys weigh less.",
    ),
    BlindCase(
        CHECK,
        "log_sum_exp",
        nw_log_sum_exp,
        "correct",
        "The weights as exp(scores - logsumexp(scores)) over the keys.",
    ),
    BlindCase(
        CHECK,
        "expand_then_einsum",
        nw_broadcast_einsum,
        "correct",
        "Shared keys and values expanded to one row per query; the score written as "
        "-0.5 ((q - k) / width)^2; the sum with einsum.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        nw_query_loop,
        "correct",
        "A Python loop over the queries, one softmax per query, then torch.stack.",
    ),
]
