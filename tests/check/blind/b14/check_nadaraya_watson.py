"""Blind set B14, check_nadaraya_watson (chapter 5): Gaussian-kernel attention pooling."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_nadaraya_watson"


def _diff(queries: Tensor, keys: Tensor) -> Tensor:
    return queries.unsqueeze(-1) - keys  # (T_q, T_k) for shared or per-query keys


def _pool(weights: Tensor, values: Tensor) -> tuple[Tensor, Tensor]:
    return (weights * values).sum(dim=-1), weights


# ---------------------------------------------------------------- mistakes


def nw_softmax_over_queries(queries, keys, values, width=1.0):
    scores = -(_diff(queries, keys) ** 2) / (2 * width**2)
    return _pool(torch.softmax(scores, dim=0), values)


def nw_no_half(queries, keys, values, width=1.0):
    scores = -(_diff(queries, keys) ** 2) / width**2
    return _pool(torch.softmax(scores, dim=-1), values)


def nw_abs_distance(queries, keys, values, width=1.0):
    scores = -_diff(queries, keys).abs() / (2 * width**2)  # distance, not squared
    return _pool(torch.softmax(scores, dim=-1), values)


def nw_width_multiplies(queries, keys, values, width=1.0):
    scores = -(_diff(queries, keys) ** 2) * width**2 / 2
    return _pool(torch.softmax(scores, dim=-1), values)


def nw_width_not_squared(queries, keys, values, width=1.0):
    scores = -(_diff(queries, keys) ** 2) / (2 * width)
    return _pool(torch.softmax(scores, dim=-1), values)


def nw_sign_flipped(queries, keys, values, width=1.0):
    scores = _diff(queries, keys) ** 2 / (2 * width**2)  # the kernel is exp(...)
    return _pool(torch.softmax(scores, dim=-1), values)


def nw_average(queries, keys, values, width=1.0):
    weights = torch.ones_like(_diff(queries, keys)) / keys.shape[-1]
    return _pool(weights, values)


def nw_width_float(queries, keys, values, width=1.0):
    sigma = float(width)  # width may come as a tensor
    scores = -(_diff(queries, keys) ** 2) / (2 * sigma**2)
    return _pool(torch.softmax(scores, dim=-1), values)


def nw_matmul_values(queries, keys, values, width=1.0):
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return weights @ values.T if values.dim() == 2 else weights @ values, weights


def nw_keys_rows(queries, keys, values, width=1.0):
    diff = queries.unsqueeze(0) - keys.unsqueeze(-1)  # (T_k, T_q): key along the rows
    weights = torch.softmax(-(diff**2) / (2 * width**2), dim=-1)
    return (weights * values.unsqueeze(-1)).sum(dim=0), weights


def nw_returns_weights_first(queries, keys, values, width=1.0):
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return weights, (weights * values).sum(-1)


def nw_exp_normalised_over_all(queries, keys, values, width=1.0):
    kernel = torch.exp(-(_diff(queries, keys) ** 2) / (2 * width**2))
    weights = kernel / kernel.sum()  # normalise the kernel
    return _pool(weights, values)


# ---------------------------------------------------------------- correct variants


def nw_scaled_distance(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    z = (queries[:, None] - keys) / width
    weights = torch.nn.functional.softmax(-0.5 * z * z, dim=1)
    return torch.einsum("qk,qk->q", weights, values.expand_as(weights)), weights


def nw_logsumexp(queries, keys, values, width=1.0):
    scores = -((queries.unsqueeze(1) - keys) ** 2) / (2 * width * width)
    weights = torch.exp(scores - torch.logsumexp(scores, dim=-1, keepdim=True))
    return (weights * values).sum(-1), weights


def nw_kernel_ratio(queries, keys, values, width=1.0, eps: float = 0.0):
    """exp of the scores (shifted by their row maximum), divided by the row sum."""
    keys, values = torch.broadcast_tensors(keys, values)
    if keys.dim() == 1:
        keys = keys.expand(len(queries), -1)
        values = values.expand(len(queries), -1)
    scores = -torch.square(queries.view(-1, 1) - keys) / (2 * torch.as_tensor(width) ** 2)
    kernel = (scores - scores.amax(dim=1, keepdim=True)).exp()
    weights = kernel / (kernel.sum(dim=1, keepdim=True) + eps)
    return (weights * values).sum(dim=1), weights


CASES = [
    BlindCase(
        CHECK,
        "softmax_over_queries",
        nw_softmax_over_queries,
        "mistake",
        "I took the softmax over dim=0, the queries.",
    ),
    BlindCase(
        CHECK,
        "no_half",
        nw_no_half,
        "mistake",
        "I divided the squared distance by width**2, forgetting the 2.",
    ),
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
        "I multiplied the squared distance by width**2 instead of dividing.",
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
        CHECK, "average_pooling", nw_average, "mistake", "I gave every key the same weight 1 / T_k."
    ),
    BlindCase(
        CHECK,
        "width_as_float",
        nw_width_float,
        "mistake",
        "I converted width with float(width), which cuts it out of autograd.",
    ),
    BlindCase(
        CHECK,
        "matmul_values",
        nw_matmul_values,
        "mistake",
        "I used weights @ values (values.T for per-query rows), which mixes the rows when "
        "each query has its own keys.",
    ),
    BlindCase(
        CHECK,
        "keys_along_rows",
        nw_keys_rows,
        "mistake",
        "I broadcast the keys as a column, so weights are (T_k, T_q) and normalised over "
        "the queries.",
    ),
    BlindCase(
        CHECK,
        "returns_weights_first",
        nw_returns_weights_first,
        "mistake",
        "I returned (weights, predictions).",
    ),
    BlindCase(
        CHECK,
        "normalised_over_all",
        nw_exp_normalised_over_all,
        "mistake",
        "I divided the kernel by its total sum over all queries and keys.",
    ),
    BlindCase(
        CHECK,
        "scaled_distance_einsum",
        nw_scaled_distance,
        "correct",
        "The distance divided by width first, -0.5 z^2, and einsum for the weighted sum.",
    ),
    BlindCase(
        CHECK,
        "logsumexp",
        nw_logsumexp,
        "correct",
        "Weights as exp(scores - logsumexp), width * width for the square.",
    ),
    BlindCase(
        CHECK,
        "kernel_ratio",
        nw_kernel_ratio,
        "correct",
        "The kernel shifted by its row max and divided by the row sum, keys expanded to "
        "(T_q, T_k); an extra eps argument defaulting to 0.",
    ),
]
