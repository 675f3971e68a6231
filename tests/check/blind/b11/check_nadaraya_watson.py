"""Blind set B11, check_nadaraya_watson (chapter 5): Gaussian attention pooling as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_nadaraya_watson"


def _diff(queries: Tensor, keys: Tensor) -> Tensor:
    return queries.unsqueeze(-1) - keys  # (T_q, T_k)


# ---------------------------------------------------------------- mistakes


def nw_softmax_over_queries(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    scores = -(_diff(queries, keys) ** 2) / (2 * width**2)
    weights = torch.softmax(scores, dim=0)
    return (weights * values).sum(-1), weights


def nw_no_half(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / width**2, dim=-1)
    return (weights * values).sum(-1), weights


def nw_abs_distance(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-_diff(queries, keys).abs() / (2 * width**2), dim=-1)
    return (weights * values).sum(-1), weights


def nw_width_multiplies(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    scores = -(_diff(queries, keys) ** 2) * width**2 / 2
    weights = scores.softmax(-1)
    return (weights * values).sum(-1), weights


def nw_width_not_squared(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    scores = -(_diff(queries, keys) ** 2) / (2 * width)
    weights = scores.softmax(-1)
    return (weights * values).sum(-1), weights


def nw_precedence(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    scores = -(_diff(queries, keys) ** 2) / (2 * width) ** 2  # (2 sigma)^2
    weights = scores.softmax(-1)
    return (weights * values).sum(-1), weights


def nw_sign_flipped(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    scores = (queries[:, None] - keys) ** 2 / (2 * width**2)
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(-1), weights


def nw_average(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    T_q, T_k = queries.shape[0], keys.shape[-1]
    weights = torch.ones(T_q, T_k, dtype=values.dtype) / T_k  # start simple: every key the same
    return (weights * values).sum(-1), weights


def nw_width_as_float(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    sigma = float(width)  # a plain number is enough for the formula
    scores = -((queries.unsqueeze(1) - keys) ** 2) / (2 * sigma**2)
    weights = torch.softmax(scores, dim=1)
    return (weights * values).sum(1), weights


def nw_returns_weights_first(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return weights, (weights * values).sum(-1)


def nw_matmul_values(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return weights @ values, weights  # works when values are (T_k,)


def nw_keys_on_rows(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    diff = keys.unsqueeze(-1) - queries  # (T_k, T_q): one row per key
    weights = torch.softmax(-(diff**2) / (2 * width**2), dim=-1)  # (T_k, T_q)
    return (weights * values.unsqueeze(-1)).sum(0), weights.T


# ---------------------------------------------------------------- correct variants


def nw_explicit_exp(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    scores = -0.5 * ((queries[:, None] - keys) / width) ** 2
    scores = scores - scores.max(dim=-1, keepdim=True).values
    e = torch.exp(scores)
    weights = e / e.sum(dim=-1, keepdim=True)
    return torch.sum(weights * values, dim=-1), weights


def nw_einsum_logsoftmax(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    keys = keys.expand(queries.shape[0], -1)  # (T_q, T_k) whichever form came in
    values = values.expand(queries.shape[0], -1)
    scores = -torch.square(queries.view(-1, 1) - keys) / (2 * torch.as_tensor(width) ** 2)
    weights = scores.log_softmax(dim=1).exp()
    return torch.einsum("qk,qk->q", weights, values), weights


def nw_gaussian_kernel_helper(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0, eps: float = 0.0
) -> tuple[Tensor, Tensor]:
    """The kernel written as the Gaussian density (its constant cancels); an unused eps."""

    def kernel(u: Tensor) -> Tensor:
        return torch.exp(-(u**2) / 2) / math.sqrt(2 * math.pi)

    k = kernel((queries.unsqueeze(-1) - keys) / width)  # (T_q, T_k)
    weights = k / (k.sum(-1, keepdim=True) + eps)
    return (weights * values).sum(-1), weights


CASES = [
    BlindCase(
        CHECK,
        "softmax_over_queries",
        nw_softmax_over_queries,
        "mistake",
        "I took the softmax over dim=0, the queries.",
    ),
    BlindCase(CHECK, "no_half", nw_no_half, "mistake", "I divided by width**2 and forgot the 2."),
    BlindCase(
        CHECK,
        "abs_not_square",
        nw_abs_distance,
        "mistake",
        "I used the distance |q - k| instead of its square.",
    ),
    BlindCase(
        CHECK,
        "width_multiplies",
        nw_width_multiplies,
        "mistake",
        "I multiplied the squared distance by width**2 / 2 instead of dividing.",
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
        "two_width_squared",
        nw_precedence,
        "mistake",
        "I wrote / (2 * width) ** 2, which is 4 width^2, not 2 width^2.",
    ),
    BlindCase(
        CHECK,
        "sign_flipped",
        nw_sign_flipped,
        "mistake",
        "I left out the minus sign, so the farthest keys get the largest weights.",
    ),
    BlindCase(
        CHECK,
        "plain_average",
        nw_average,
        "mistake",
        "I gave every key the weight 1 / T_k (average pooling), ignoring the queries.",
    ),
    BlindCase(
        CHECK,
        "width_as_float",
        nw_width_as_float,
        "mistake",
        "I turned width into a Python float, so a width tensor gets no gradient.",
    ),
    BlindCase(
        CHECK,
        "returns_weights_first",
        nw_returns_weights_first,
        "mistake",
        "I return (weights, predictions).",
    ),
    BlindCase(
        CHECK,
        "matmul_with_values",
        nw_matmul_values,
        "mistake",
        "I computed the predictions as weights @ values, which breaks for one row of values "
        "per query.",
    ),
    BlindCase(
        CHECK,
        "keys_on_rows",
        nw_keys_on_rows,
        "mistake",
        "I built the differences with one row per key, (T_k, T_q), took the softmax along "
        "the rows and transposed at the end.",
    ),
    BlindCase(
        CHECK,
        "explicit_exp_max_shift",
        nw_explicit_exp,
        "correct",
        "-0.5 * ((q - k) / width)**2, the max subtracted, exp and division by the sum.",
    ),
    BlindCase(
        CHECK,
        "expand_einsum_log_softmax",
        nw_einsum_logsoftmax,
        "correct",
        "Keys and values expanded to (T_q, T_k), log_softmax().exp(), einsum for the sum.",
    ),
    BlindCase(
        CHECK,
        "gaussian_density_kernel",
        nw_gaussian_kernel_helper,
        "correct",
        "The kernel as the normal density of (q - k) / width, normalized by its row sum; an "
        "extra eps=0.0 argument.",
    ),
]
