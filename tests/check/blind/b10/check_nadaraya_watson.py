"""Blind set B10, check_nadaraya_watson (chapter 5): Gaussian kernel regression as attention
pooling, as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_nadaraya_watson"


def _diff(queries: Tensor, keys: Tensor) -> Tensor:
    """``q - k`` for every query and key, ``(T_q, T_k)``, for shared or per-query keys."""
    return queries.unsqueeze(-1) - keys


def _pool(weights: Tensor, values: Tensor) -> Tensor:
    return (weights * values).sum(dim=-1)


# ---------------------------------------------------------------- mistakes


def nw_softmax_over_queries(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -(_diff(queries, keys) ** 2) / (2 * width**2)
    weights = torch.softmax(scores, dim=0)
    return _pool(weights, values), weights


def nw_no_half(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / width**2, dim=-1)
    return _pool(weights, values), weights


def nw_abs_distance(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    distance = (queries.unsqueeze(-1) - keys).abs()  # how far the key is
    weights = torch.softmax(-distance / (2 * width**2), dim=-1)
    return _pool(weights, values), weights


def nw_width_multiplies(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-((_diff(queries, keys) * width) ** 2) / 2, dim=-1)
    return _pool(weights, values), weights


def nw_width_not_squared(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width), dim=-1)
    return _pool(weights, values), weights


def nw_sign_flipped(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = (queries.unsqueeze(-1) - keys) ** 2 / (2 * width**2)  # the Gaussian's exponent
    weights = scores.softmax(dim=-1)
    return _pool(weights, values), weights


def nw_sum_over_everything(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    kernel = torch.exp(-(_diff(queries, keys) ** 2) / (2 * width**2))
    weights = kernel / kernel.sum()  # normalise the kernel
    return _pool(weights, values), weights


def nw_width_as_float(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    sigma = float(width)  # works for a number and for a tensor
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * sigma**2), dim=-1)
    return _pool(weights, values), weights


def nw_shared_keys_only(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    diff = queries[:, None] - keys[None, :]  # (T_q, T_k)
    weights = torch.softmax(-(diff**2) / (2 * width**2), dim=-1)
    return (weights * values).sum(-1), weights


def nw_matmul_values(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return weights @ values.T if values.dim() == 2 else weights @ values, weights


def nw_returns_weights_first(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return weights, _pool(weights, values)


def nw_mean_of_weighted_values(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return (weights * values).mean(dim=-1), weights  # the average of the weighted values


# ---------------------------------------------------------------- correct variants


def nw_gaussian_pdf(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    """The Gaussian density with its 1 / (sigma sqrt(2 pi)) in front, normalised over the keys."""
    u = queries.unsqueeze(-1) - keys  # (T_q, T_k)
    density = torch.exp(-0.5 * (u / width) ** 2) / (width * math.sqrt(2 * math.pi))
    weights = density / density.sum(dim=-1, keepdim=True)
    return (weights * values).sum(dim=-1), weights


def nw_expand_and_einsum(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    T_q = queries.shape[0]
    if keys.dim() == 1:  # shared pairs: give every query its own copy
        keys, values = keys.expand(T_q, -1), values.expand(T_q, -1)
    q = queries.reshape(T_q, 1).expand_as(keys)
    scores = (q - keys).square().neg().mul(0.5 / width**2)
    weights = scores.softmax(dim=1)
    return torch.einsum("qk,qk->q", weights, values), weights


def nw_log_softmax(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0, eps: float = 0.0
) -> tuple[Tensor, Tensor]:
    """exp of log_softmax; an extra optional eps added to the width (0 by default)."""
    sigma = width + eps
    scores = -torch.pow(queries[..., None] - keys, 2) * (0.5 * sigma**-2)
    weights = torch.log_softmax(scores, dim=-1).exp()
    return torch.sum(weights * values, dim=-1), weights


def nw_pairwise_sq_distance(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    """Squared distances expanded as q^2 - 2qk + k^2, then the softmax over the keys."""
    q = queries.unsqueeze(-1)
    sq = q * q - 2 * q * keys + keys * keys
    weights = torch.softmax(sq / (-2 * width * width), dim=-1)
    prediction = (weights * values).sum(-1)
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
        "no_one_half",
        nw_no_half,
        "mistake",
        "I divided the squared distance by width**2 and forgot the 2.",
    ),
    BlindCase(
        CHECK,
        "absolute_distance",
        nw_abs_distance,
        "mistake",
        "I used |q - k| instead of the squared distance in the score.",
    ),
    BlindCase(
        CHECK,
        "width_multiplies",
        nw_width_multiplies,
        "mistake",
        "I multiplied the distance by the width instead of dividing by it.",
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
        "I left out the minus sign, so far keys get the largest weights.",
    ),
    BlindCase(
        CHECK,
        "normalised_over_everything",
        nw_sum_over_everything,
        "mistake",
        "I divided the kernel by kernel.sum() without a dim, so the whole matrix sums to 1, "
        "not each row.",
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
        "shared_keys_only",
        nw_shared_keys_only,
        "mistake",
        "I wrote queries[:, None] - keys[None, :], which only works for keys shared by all "
        "queries, not for one row of keys per query.",
    ),
    BlindCase(
        CHECK,
        "matmul_values",
        nw_matmul_values,
        "mistake",
        "I used a matrix product with the values (weights @ values.T for per-query rows), which "
        "mixes the rows of different queries.",
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
        "mean_not_sum",
        nw_mean_of_weighted_values,
        "mistake",
        "I took the mean of weights * values over the keys instead of their sum.",
    ),
    BlindCase(
        CHECK,
        "gaussian_density",
        nw_gaussian_pdf,
        "correct",
        "The full Gaussian density with its normalising constant, divided by its sum over the "
        "keys (the constant cancels).",
    ),
    BlindCase(
        CHECK,
        "expand_and_einsum",
        nw_expand_and_einsum,
        "correct",
        "Shared keys expanded to one row per query, the score by chained tensor methods, the "
        "weighted sum by einsum.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_exp",
        nw_log_softmax,
        "correct",
        "Weights as exp(log_softmax(...)), sigma**-2 for the division, an extra optional eps=0.",
    ),
    BlindCase(
        CHECK,
        "expanded_square",
        nw_pairwise_sq_distance,
        "correct",
        "The squared distance expanded as q^2 - 2qk + k^2 and divided by -2 width^2.",
    ),
]
