"""Blind set B16, check_nadaraya_watson (chapter 5): Gaussian-kernel regression as attention
pooling, as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_nadaraya_watson"


def _pool(weights: Tensor, values: Tensor) -> Tensor:
    return (weights * values).sum(dim=-1)  # (T_q,)


# ---------------------------------------------------------------- mistakes


def nw_softmax_over_queries(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2)  # (T_q, T_k)
    weights = torch.softmax(scores, dim=0)
    return _pool(weights, values), weights


def nw_no_half(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / width**2  # the Gaussian exp(-d^2/s^2)
    weights = torch.softmax(scores, dim=-1)
    return _pool(weights, values), weights


def nw_distance_not_squared(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    distance = (queries.unsqueeze(-1) - keys).abs()  # |q - k|
    weights = torch.softmax(-distance / (2 * width**2), dim=-1)
    return _pool(weights, values), weights


def nw_width_multiplies(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -0.5 * ((queries.unsqueeze(-1) - keys) * width) ** 2  # -((q - k) w)^2 / 2
    weights = torch.softmax(scores, dim=-1)
    return _pool(weights, values), weights


def nw_width_not_squared(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * width)
    weights = torch.softmax(scores, dim=-1)
    return _pool(weights, values), weights


def nw_sign_flipped(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = (queries.unsqueeze(-1) - keys) ** 2 / (2 * width**2)  # the distance as the score
    weights = torch.softmax(scores, dim=-1)
    return _pool(weights, values), weights


def nw_plain_average(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    T_q, T_k = queries.shape[0], keys.shape[-1]
    weights = torch.ones(T_q, T_k, dtype=values.dtype) / T_k  # every key counts the same
    return _pool(weights, values), weights


def nw_width_as_float(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    sigma = float(width)  # works for a number and for a 0-d tensor
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * sigma**2)
    weights = torch.softmax(scores, dim=-1)
    return _pool(weights, values), weights


def nw_matmul_values(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2)
    weights = torch.softmax(scores, dim=-1)  # (T_q, T_k)
    return weights @ values, weights  # (T_q, T_k) @ (T_k,) -> (T_q,)


def nw_unnormalized_kernel(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.exp(-((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2))  # the kernel
    return _pool(weights, values), weights


# ---------------------------------------------------------------- correct variants


def nw_stable_exp(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    diff = queries[:, None] - keys  # (T_q, T_k) for shared or per-query keys
    scores = -0.5 * torch.square(diff / width)
    scores = scores - scores.amax(dim=-1, keepdim=True)
    e = scores.exp()
    weights = e / e.sum(dim=-1, keepdim=True)
    return torch.einsum("qk,qk->q", weights, values.expand_as(weights)), weights


def nw_expand_then_log_softmax(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    """Shared keys are expanded to one row per query first, so there is one code path."""
    T_q = queries.shape[0]
    if keys.dim() == 1:
        keys, values = keys.expand(T_q, -1), values.expand(T_q, -1)
    sigma = torch.as_tensor(width, dtype=queries.dtype)  # keeps the graph of a tensor width
    scores = -((queries.view(T_q, 1) - keys) ** 2) / (2 * sigma * sigma)
    weights = torch.log_softmax(scores, dim=1).exp()
    pred = torch.bmm(weights.unsqueeze(1), values.unsqueeze(2)).view(T_q)
    return pred, weights


def nw_log_width(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    inv_two_var = 0.5 * torch.exp(-2 * torch.log(torch.as_tensor(width, dtype=queries.dtype)))
    scores = -(queries.unsqueeze(1) - keys).pow(2) * inv_two_var
    weights = torch.nn.functional.softmax(scores, dim=-1)
    return (weights * values).sum(-1), weights


def nw_math_constant(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    """The Gaussian with its normalizing constant, which the softmax cancels."""
    z = (queries.unsqueeze(-1) - keys) / width
    density = torch.exp(-(z**2) / 2) / (math.sqrt(2 * math.pi) * width)
    weights = density / density.sum(dim=-1, keepdim=True)
    return (weights * values).sum(-1), weights


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
        nw_distance_not_squared,
        "mistake",
        "I used the absolute distance |q - k| instead of its square.",
    ),
    BlindCase(
        CHECK,
        "width_multiplies",
        nw_width_multiplies,
        "mistake",
        "I multiplied the distance by the width, -((q - k) * width)^2 / 2, as if it were the "
        "learnable w of the notes.",
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
        "I left out the minus sign, so farther keys get larger weights.",
    ),
    BlindCase(
        CHECK,
        "plain_average",
        nw_plain_average,
        "mistake",
        "I gave every key the weight 1 / T_k, which is average pooling.",
    ),
    BlindCase(
        CHECK,
        "width_cast_to_float",
        nw_width_as_float,
        "mistake",
        "I turned the width into a Python float first, which cuts a learnable width out of "
        "autograd.",
    ),
    BlindCase(
        CHECK,
        "matmul_with_values",
        nw_matmul_values,
        "mistake",
        "I pooled with the matrix product weights @ values; right for shared values (T_k,), but "
        "not for one row of values per query (T_q, T_k).",
    ),
    BlindCase(
        CHECK,
        "kernel_not_normalized",
        nw_unnormalized_kernel,
        "mistake",
        "I used the Gaussian kernel exp(-(q - k)^2 / (2 width^2)) as the weights and forgot "
        "to normalize them over the keys.",
    ),
    BlindCase(
        CHECK,
        "stable_exp_einsum",
        nw_stable_exp,
        "correct",
        "exp of the scores minus their row maximum, divided by the row sum; einsum for the "
        "pooling.",
    ),
    BlindCase(
        CHECK,
        "expanded_keys_log_softmax_bmm",
        nw_expand_then_log_softmax,
        "correct",
        "Shared keys expanded to (T_q, T_k) first; log_softmax(...).exp() and torch.bmm.",
    ),
    BlindCase(
        CHECK,
        "via_log_width",
        nw_log_width,
        "correct",
        "The factor 1 / (2 width^2) written as exp(-2 log width) / 2.",
    ),
    BlindCase(
        CHECK,
        "normalized_density",
        nw_math_constant,
        "correct",
        "Weights as the full Gaussian density divided by its sum over the keys (the constant "
        "cancels).",
    ),
]
