"""Blind set B23, check_nadaraya_watson (chapter 5): Gaussian-kernel attention pooling by readers."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_nadaraya_watson"


def _diff(queries: Tensor, keys: Tensor) -> Tensor:
    return queries.unsqueeze(-1) - keys  # (T_q, T_k), shared or per-query keys


def _pool(weights: Tensor, values: Tensor) -> Tensor:
    return (weights * values).sum(dim=-1)  # (T_q,)


# ---------------------------------------------------------------- mistakes


def nw_softmax_over_queries(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    scores = -(_diff(queries, keys) ** 2) / (2 * width**2)
    weights = torch.softmax(scores, dim=0)
    return _pool(weights, values), weights


def nw_no_half(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / width**2, dim=-1)
    return _pool(weights, values), weights


def nw_abs_distance(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-_diff(queries, keys).abs() / (2 * width**2), dim=-1)
    return _pool(weights, values), weights


def nw_width_multiplies(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    scores = -(_diff(queries, keys) ** 2) / 2 * width**2
    weights = torch.softmax(scores, dim=-1)
    return _pool(weights, values), weights


def nw_width_not_squared(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width), dim=-1)
    return _pool(weights, values), weights


def nw_two_width_squared(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width) ** 2, dim=-1)
    return _pool(weights, values), weights


def nw_sign_flipped(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    distance = _diff(queries, keys) ** 2 / (2 * width**2)
    weights = torch.softmax(distance, dim=-1)
    return _pool(weights, values), weights


def nw_average(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    T_k = keys.shape[-1]
    weights = torch.ones(queries.shape[0], T_k, dtype=values.dtype) / T_k  # every key alike
    return _pool(weights, values), weights


def nw_width_as_float(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    sigma = float(width)  # a plain number
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * sigma**2), dim=-1)
    return _pool(weights, values), weights


def nw_kernel_not_normalized(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    weights = torch.exp(-(_diff(queries, keys) ** 2) / (2 * width**2))  # the Gaussian kernel
    return _pool(weights, values), weights


def nw_weighs_the_keys(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return _pool(weights, keys), weights


def nw_mean_not_sum(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return (weights * values).mean(dim=-1), weights  # the weighted average


def nw_returns_swapped(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return weights, _pool(weights, values)


def nw_weights_transposed(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return _pool(weights, values), weights.T  # one column per query, as keys are rows


# ---------------------------------------------------------------- correct variants


def nw_normal_log_prob(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    # log N(q; k, sigma^2) = -(q - k)^2 / (2 sigma^2) + a constant that the softmax cancels
    kernel = torch.distributions.Normal(keys, width)
    weights = kernel.log_prob(queries.unsqueeze(-1)).softmax(dim=-1)  # (T_q, T_k)
    return torch.einsum("qk,qk->q", weights, values.expand_as(weights)), weights


def nw_logsumexp(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    diff = queries[:, None] - (keys[None, :] if keys.dim() == 1 else keys)
    scores = -0.5 * (diff / width) ** 2
    weights = torch.exp(scores - torch.logsumexp(scores, dim=1, keepdim=True))
    if values.dim() == 1:
        prediction = weights @ values
    else:
        prediction = (weights @ values.T).diagonal()
    return prediction, weights


def nw_loop(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    rows = []
    for i, q in enumerate(queries):
        k = keys if keys.dim() == 1 else keys[i]
        score = -((q - k) ** 2) / (2 * width * width)
        rows.append(torch.softmax(score, dim=0))
    weights = torch.stack(rows)  # (T_q, T_k)
    return (weights * values).sum(-1), weights


CASES = [
    BlindCase(
        CHECK,
        "softmax_over_queries",
        nw_softmax_over_queries,
        "mistake",
        "I took the softmax over dim=0",
    ),
    BlindCase(CHECK, "no_half", nw_no_half, "mistake", "I wrote -(q - k)^2 / width^2, no 1/2"),
    BlindCase(
        CHECK,
        "abs_distance",
        nw_abs_distance,
        "mistake",
        "I used the absolute distance |q - k| instead of its square",
    ),
    BlindCase(
        CHECK,
        "width_multiplies",
        nw_width_multiplies,
        "mistake",
        "I wrote -(q - k)**2 / 2 * width**2, which multiplies by the width",
    ),
    BlindCase(
        CHECK,
        "width_not_squared",
        nw_width_not_squared,
        "mistake",
        "I divided by 2 * width, not 2 * width^2",
    ),
    BlindCase(
        CHECK,
        "two_width_squared",
        nw_two_width_squared,
        "mistake",
        "I divided by (2 * width)**2, squaring the 2 as well",
    ),
    BlindCase(
        CHECK,
        "sign_flipped",
        nw_sign_flipped,
        "mistake",
        "I took the softmax of the squared distance without the minus",
    ),
    BlindCase(CHECK, "average", nw_average, "mistake", "I gave every key the same weight 1 / T_k"),
    BlindCase(
        CHECK,
        "width_as_float",
        nw_width_as_float,
        "mistake",
        "I turned the width into a float first",
    ),
    BlindCase(
        CHECK,
        "kernel_not_normalized",
        nw_kernel_not_normalized,
        "mistake",
        "I used the Gaussian kernel exp(...) as weights without normalizing them",
    ),
    BlindCase(
        CHECK,
        "weighs_the_keys",
        nw_weighs_the_keys,
        "mistake",
        "I summed the weighted keys instead of the weighted values",
    ),
    BlindCase(
        CHECK,
        "mean_not_sum",
        nw_mean_not_sum,
        "mistake",
        "I took the mean of weights * values over the keys instead of the sum",
    ),
    BlindCase(
        CHECK, "returns_swapped", nw_returns_swapped, "mistake", "I returned (weights, predictions)"
    ),
    BlindCase(
        CHECK,
        "weights_transposed",
        nw_weights_transposed,
        "mistake",
        "I returned the weights as (T_k, T_q)",
    ),
    BlindCase(
        CHECK,
        "normal_log_prob",
        nw_normal_log_prob,
        "correct",
        "softmax of Normal(k, width).log_prob(q); the constant cancels; einsum pooling",
    ),
    BlindCase(
        CHECK,
        "logsumexp",
        nw_logsumexp,
        "correct",
        "-0.5 * ((q - k) / width)^2, normalized with logsumexp; matmul for the pooling",
    ),
    BlindCase(CHECK, "loop", nw_loop, "correct", "a loop over the queries, softmax per query"),
]
