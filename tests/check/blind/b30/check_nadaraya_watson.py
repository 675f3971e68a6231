"""Blind set B30, check_nadaraya_watson (chapter 5): Gaussian-kernel regression as attention
pooling, as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_nadaraya_watson"


def _diff(queries: Tensor, keys: Tensor) -> Tensor:
    return queries.unsqueeze(-1) - keys  # (T_q, T_k), shared or per-row keys


# ---------------------------------------------------------------- mistakes


def nw_width_not_squared(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width), dim=-1)
    return (weights * values).sum(-1), weights


def nw_no_half(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / width**2, dim=-1)
    return (weights * values).sum(-1), weights


def nw_sign_flipped(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(_diff(queries, keys) ** 2 / (2 * width**2), dim=-1)
    return (weights * values).sum(-1), weights


def nw_softmax_dim0(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=0)
    return (weights * values).sum(-1), weights


def nw_raw_kernel_as_weights(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    kernel = torch.exp(-(_diff(queries, keys) ** 2) / (2 * width**2))
    prediction = (kernel * values).sum(-1) / kernel.sum(-1)  # normalised here
    return prediction, kernel  # the kernel values are the weights


def nw_keys_minus_queries_layout(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    diff = keys.unsqueeze(-1) - queries  # (T_k, T_q) for shared keys
    weights = torch.softmax(-(diff**2) / (2 * width**2), dim=-1)
    return (weights * values).sum(-1), weights


def nw_width_as_float(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    width = float(width)  # the signature says float
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return (weights * values).sum(-1), weights


def nw_weights_first(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return weights, (weights * values).sum(-1)


def nw_mean_instead_of_sum(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return (weights * values).mean(-1), weights  # the average of the weighted values


def nw_matmul_values(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return weights @ values, weights  # as softmax(...) V in the attention formula


def nw_absolute_distance(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-_diff(queries, keys).abs() / (2 * width**2), dim=-1)
    return (weights * values).sum(-1), weights


def nw_width_default_zero_point_five(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 0.5
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return (weights * values).sum(-1), weights


# ---------------------------------------------------------------- correct variants


def nw_gaussian_density(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    """The full normal density; its constant 1 / (sqrt(2 pi) sigma) cancels when normalising."""
    width = torch.as_tensor(width, dtype=queries.dtype)
    density = torch.exp(-0.5 * (_diff(queries, keys) / width) ** 2) / (
        math.sqrt(2 * math.pi) * width
    )
    weights = density / density.sum(dim=-1, keepdim=True)
    return torch.einsum("qk,qk->q", weights, values.expand_as(weights)), weights


def nw_normal_log_prob(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    """Scores as log-densities of Normal(k, width) at q; softmax removes the constants."""
    width = torch.as_tensor(width, dtype=queries.dtype)
    scores = torch.distributions.Normal(keys, width).log_prob(queries.unsqueeze(-1))
    weights = scores.softmax(-1)
    return (weights * values).sum(-1), weights


def nw_loop_over_queries(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    preds, rows = [], []
    for t, q in enumerate(queries):
        k = keys[t] if keys.dim() == 2 else keys
        v = values[t] if values.dim() == 2 else values
        a = -((q - k) ** 2) / (2 * width * width)
        w = torch.exp(a - torch.logsumexp(a, dim=0))
        rows.append(w)
        preds.append(torch.dot(w, v))
    return torch.stack(preds), torch.stack(rows)


CASES = [
    BlindCase(
        CHECK,
        "width_not_squared",
        nw_width_not_squared,
        "mistake",
        "I divided by 2 sigma instead of 2 sigma squared.",
    ),
    BlindCase(
        CHECK,
        "half_missing",
        nw_no_half,
        "mistake",
        "I wrote -(q - k)^2 / sigma^2 and lost the 2 in the denominator.",
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
        "softmax_over_queries",
        nw_softmax_dim0,
        "mistake",
        "I took the softmax with dim=0, down the queries.",
    ),
    BlindCase(
        CHECK,
        "raw_kernel_returned",
        nw_raw_kernel_as_weights,
        "mistake",
        "I normalised when making the prediction but returned the raw exp kernel as the "
        "weights, so its rows do not sum to 1.",
    ),
    BlindCase(
        CHECK,
        "keys_minus_queries_layout",
        nw_keys_minus_queries_layout,
        "mistake",
        "I built the differences as keys.unsqueeze(-1) - queries, a (T_k, T_q) table, and "
        "took the softmax along its last axis.",
    ),
    BlindCase(
        CHECK,
        "width_cast_to_float",
        nw_width_as_float,
        "mistake",
        "I turned width into a Python float first, which cuts it out of autograd.",
    ),
    BlindCase(
        CHECK,
        "weights_first",
        nw_weights_first,
        "mistake",
        "I return (weights, predictions) instead of (predictions, weights).",
    ),
    BlindCase(
        CHECK,
        "mean_instead_of_sum",
        nw_mean_instead_of_sum,
        "mistake",
        "I took .mean(-1) of the weighted values instead of .sum(-1).",
    ),
    BlindCase(
        CHECK,
        "weights_matmul_values",
        nw_matmul_values,
        "mistake",
        "I wrote weights @ values as in softmax(QK^T)V; with one row of values per query that "
        "mixes the rows.",
    ),
    BlindCase(
        CHECK,
        "absolute_distance",
        nw_absolute_distance,
        "mistake",
        "I used |q - k| instead of the squared distance.",
    ),
    BlindCase(
        CHECK,
        "default_width_half",
        nw_width_default_zero_point_five,
        "mistake",
        "I gave width the default 0.5, the value the chapter plots, instead of 1.0.",
    ),
    BlindCase(
        CHECK,
        "gaussian_density",
        nw_gaussian_density,
        "correct",
        "The full normal density with its 1/(sqrt(2 pi) sigma), normalised by its sum; "
        "einsum for the weighted sum.",
    ),
    BlindCase(
        CHECK,
        "normal_log_prob",
        nw_normal_log_prob,
        "correct",
        "Scores from torch.distributions.Normal(keys, width).log_prob(q), then the softmax.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        nw_loop_over_queries,
        "correct",
        "A loop over the queries, each row normalised with logsumexp and a dot product.",
    ),
]
