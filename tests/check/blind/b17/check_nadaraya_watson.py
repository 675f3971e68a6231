"""Blind set B17, check_nadaraya_watson (chapter 5): Gaussian attention pooling as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_nadaraya_watson"


def _diff(queries: Tensor, keys: Tensor) -> Tensor:
    return queries.unsqueeze(-1) - keys  # (T_q, T_k), for shared or per-query keys


# ---------------------------------------------------------------- mistakes


def nw_softmax_over_queries(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -(_diff(queries, keys) ** 2) / (2 * width**2)
    weights = torch.softmax(scores, dim=0)  # normalise every column
    return (weights * values).sum(dim=-1), weights


def nw_no_half(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / width**2, dim=-1)
    return (weights * values).sum(dim=-1), weights


def nw_abs_distance(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    distance = _diff(queries, keys).abs()  # |q - k|
    weights = torch.softmax(-distance / (2 * width**2), dim=-1)
    return (weights * values).sum(dim=-1), weights


def nw_width_multiplies(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-0.5 * _diff(queries, keys) ** 2 * width**2, dim=-1)
    return (weights * values).sum(dim=-1), weights


def nw_width_not_squared(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width), dim=-1)
    return (weights * values).sum(dim=-1), weights


def nw_sign_flipped(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = (queries.unsqueeze(-1) - keys) ** 2 / (2 * width**2)  # the Gaussian's exponent
    weights = scores.softmax(dim=-1)
    return (weights * values).sum(dim=-1), weights


def nw_average_pooling(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    T_q, T_k = queries.shape[0], keys.shape[-1]
    weights = torch.ones(T_q, T_k, dtype=values.dtype) / T_k
    return (weights * values).sum(dim=-1), weights


def nw_width_as_float(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    sigma = float(width)  # a tensor or a number, both work this way
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * sigma**2), dim=-1)
    return (weights * values).sum(dim=-1), weights


def nw_matmul_values(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return weights @ values, weights  # like attention: weights times values


def nw_flattened_keys(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    diff = queries.reshape(-1, 1) - keys.reshape(1, -1)  # every query against every key
    weights = torch.softmax(-(diff**2) / (2 * width**2), dim=1)
    return weights @ values.reshape(-1), weights


def nw_returns_weights_first(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return weights, (weights * values).sum(dim=-1)


def nw_unnormalised_kernel(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.exp(-(_diff(queries, keys) ** 2) / (2 * width**2))  # the Gaussian kernel
    return (weights * values).sum(dim=-1), weights


# ---------------------------------------------------------------- correct variants


def nw_explicit_exp(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    """exp of the scores minus their row maximum, divided by the row sum."""
    scores = -((queries[:, None] - keys) ** 2) / (2 * width * width)
    e = torch.exp(scores - scores.max(dim=-1, keepdim=True).values)
    weights = e / e.sum(dim=-1, keepdim=True)
    return (weights * values).sum(-1), weights


def nw_expand_einsum(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    """Shared keys and values expanded to one row per query; einsum for the weighted sum."""
    T_q = queries.shape[0]
    if keys.dim() == 1:
        keys, values = keys.expand(T_q, -1), values.expand(T_q, -1)
    sigma = torch.as_tensor(width, dtype=queries.dtype)
    weights = torch.softmax(-0.5 * ((queries.unsqueeze(1) - keys) / sigma) ** 2, dim=1)
    return torch.einsum("qk,qk->q", weights, values), weights


def nw_log_softmax(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    """log_softmax then exp; the scores through torch.square and a division by 2 sigma^2."""
    scores = torch.square(queries.view(-1, 1) - keys).neg() / (2 * width**2)
    weights = torch.log_softmax(scores, dim=-1).exp()
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
        "half_missing",
        nw_no_half,
        "mistake",
        "I wrote the score as -(q - k)^2 / width^2, without the 1/2.",
    ),
    BlindCase(
        CHECK,
        "distance_not_squared",
        nw_abs_distance,
        "mistake",
        "I used the distance |q - k| instead of its square.",
    ),
    BlindCase(
        CHECK,
        "width_multiplies",
        nw_width_multiplies,
        "mistake",
        "I multiplied the squared distance by width^2 instead of dividing by it.",
    ),
    BlindCase(
        CHECK,
        "width_not_squared",
        nw_width_not_squared,
        "mistake",
        "I divided by 2 * width instead of 2 * width^2.",
    ),
    BlindCase(
        CHECK,
        "sign_flipped",
        nw_sign_flipped,
        "mistake",
        "I forgot the minus sign, so the farthest keys get the largest weights.",
    ),
    BlindCase(
        CHECK,
        "average_pooling",
        nw_average_pooling,
        "mistake",
        "I gave every key the same weight 1/T_k: average pooling, the width unused.",
    ),
    BlindCase(
        CHECK,
        "width_as_python_float",
        nw_width_as_float,
        "mistake",
        "I turned the width into a Python float first, which cuts it out of autograd.",
    ),
    BlindCase(
        CHECK,
        "matmul_with_values",
        nw_matmul_values,
        "mistake",
        "I wrote weights @ values as in attention; right for shared values, a (T_q, T_k) matrix "
        "product for one row of values per query.",
    ),
    BlindCase(
        CHECK,
        "flattened_keys",
        nw_flattened_keys,
        "mistake",
        "I reshaped keys to one row and values to one column, which only works for shared keys.",
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
        "kernel_not_normalised",
        nw_unnormalised_kernel,
        "mistake",
        "I used the Gaussian kernel exp(-(q - k)^2 / (2 width^2)) as the weights, without "
        "dividing by their sum.",
    ),
    BlindCase(
        CHECK,
        "explicit_exp_normalised",
        nw_explicit_exp,
        "correct",
        "exp of the scores minus the row maximum divided by the row sum, instead of torch.softmax.",
    ),
    BlindCase(
        CHECK,
        "expand_and_einsum",
        nw_expand_einsum,
        "correct",
        "Shared keys and values expanded to (T_q, T_k), the score as -((q - k) / sigma)^2 / 2, "
        "einsum for the prediction.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_exp",
        nw_log_softmax,
        "correct",
        "log_softmax then exp, torch.square for the distance.",
    ),
]
