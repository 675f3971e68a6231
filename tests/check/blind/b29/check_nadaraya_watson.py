"""Blind set B29, check_nadaraya_watson (chapter 5): Gaussian-kernel attention pooling."""

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


def nw_width_not_squared(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * width)
    weights = torch.softmax(scores, dim=-1)
    return _pool(weights, values), weights


def nw_square_of_two_sigma(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * width) ** 2  # 2 sigma, squared
    weights = torch.softmax(scores, dim=-1)
    return _pool(weights, values), weights


def nw_no_half(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-((queries.unsqueeze(-1) - keys) ** 2) / width**2, dim=-1)
    return _pool(weights, values), weights


def nw_width_outside_exp(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    kernel = torch.exp(-((queries.unsqueeze(-1) - keys) ** 2) / 2) / width**2
    weights = kernel / kernel.sum(dim=-1, keepdim=True)
    return _pool(weights, values), weights


def nw_width_as_new_tensor(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    sigma = torch.tensor(width, dtype=queries.dtype)  # a number or a tensor, same dtype
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * sigma**2)
    weights = torch.softmax(scores, dim=-1)
    return _pool(weights, values), weights


def nw_axes_swapped(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    diff = queries.unsqueeze(0) - keys.unsqueeze(-1)  # every query against every key
    weights = torch.softmax(-(diff**2) / (2 * width**2), dim=-1)
    return _pool(weights, values), weights


def nw_matmul_values(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2), dim=-1)
    return weights @ values, weights  # (T_q, T_k) @ (T_k,)


def nw_returns_weights_first(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2), dim=-1)
    return weights, _pool(weights, values)


def nw_unsqueeze_in_place(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    queries.unsqueeze_(-1)  # (T_q, 1)
    weights = torch.softmax(-((queries - keys) ** 2) / (2 * width**2), dim=-1)
    return _pool(weights, values), weights


def nw_default_width_half(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 0.5
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2), dim=-1)
    return _pool(weights, values), weights


def nw_plain_distance(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    distance = (queries.unsqueeze(-1) - keys).abs()  # |q - k|
    weights = torch.softmax(-distance / (2 * width**2), dim=-1)
    return _pool(weights, values), weights


# ---------------------------------------------------------------- correct variants


def nw_kernel_ratio(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    """The kernel itself, with its Gaussian constant, divided by its sum over the keys; the
    largest exponent is taken out first so that no row underflows."""
    exponent = -((queries[:, None] - keys) ** 2) / (2 * width**2)  # (T_q, T_k)
    exponent = exponent - exponent.amax(dim=-1, keepdim=True).detach()
    kernel = torch.exp(exponent) / (math.sqrt(2 * math.pi) * width)
    weights = kernel / kernel.sum(dim=-1, keepdim=True)
    return (weights * values).sum(-1), weights


def nw_log_softmax_einsum(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    """Keys and values always as one row per query; log_softmax, exp, einsum."""
    T_q = queries.shape[0]
    keys = keys.expand(T_q, -1) if keys.dim() == 1 else keys
    values = values.expand(T_q, -1) if values.dim() == 1 else values
    scores = -0.5 * ((queries.unsqueeze(1) - keys) / width) ** 2
    weights = scores.log_softmax(dim=1).exp()
    return torch.einsum("qk,qk->q", weights, values), weights


def nw_loop_over_queries(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    preds, rows = [], []
    for i, q in enumerate(queries):
        k = keys if keys.dim() == 1 else keys[i]
        v = values if values.dim() == 1 else values[i]
        w = torch.softmax(-((q - k) ** 2) / (2 * width * width), dim=0)  # (T_k,)
        preds.append(w @ v)
        rows.append(w)
    return torch.stack(preds), torch.stack(rows)


CASES = [
    BlindCase(
        CHECK,
        "softmax_over_queries",
        nw_softmax_over_queries,
        "mistake",
        "I took the softmax with dim=0, over the queries, instead of over the keys.",
    ),
    BlindCase(
        CHECK,
        "width_not_squared",
        nw_width_not_squared,
        "mistake",
        "I divided the squared distance by 2 * width, forgetting to square the width.",
    ),
    BlindCase(
        CHECK,
        "two_sigma_squared",
        nw_square_of_two_sigma,
        "mistake",
        "I wrote / (2 * width) ** 2, so the 2 is squared with the width: 4 sigma^2 instead of "
        "2 sigma^2.",
    ),
    BlindCase(
        CHECK,
        "no_half",
        nw_no_half,
        "mistake",
        "I divided by width**2 and forgot the factor 2.",
    ),
    BlindCase(
        CHECK,
        "width_outside_exponent",
        nw_width_outside_exp,
        "mistake",
        "I divided the kernel exp(-(q - k)^2 / 2) by width**2 outside the exponent, where it "
        "cancels in the normalization, so the width changes nothing.",
    ),
    BlindCase(
        CHECK,
        "width_rewrapped",
        nw_width_as_new_tensor,
        "mistake",
        "I wrapped the width in torch.tensor(width, dtype=...) so that numbers and tensors both "
        "work, which copies it out of autograd.",
    ),
    BlindCase(
        CHECK,
        "broadcast_axes_swapped",
        nw_axes_swapped,
        "mistake",
        "I broadcast queries.unsqueeze(0) - keys.unsqueeze(-1), which puts the keys on the rows: "
        "the weight matrix comes out (T_k, T_q).",
    ),
    BlindCase(
        CHECK,
        "matmul_with_values",
        nw_matmul_values,
        "mistake",
        "I mixed the values with weights @ values, which only works when the values are shared; "
        "with one row of values per query it gives a (T_q, T_q) matrix.",
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
        "unsqueeze_in_place",
        nw_unsqueeze_in_place,
        "mistake",
        "I wrote queries.unsqueeze_(-1), which reshapes the caller's queries to (T_q, 1); the "
        "next call with them breaks.",
    ),
    BlindCase(
        CHECK,
        "default_width_half",
        nw_default_width_half,
        "mistake",
        "I gave width the default 0.5 instead of 1.0.",
    ),
    BlindCase(
        CHECK,
        "distance_not_squared",
        nw_plain_distance,
        "mistake",
        "I used the distance |q - k| in the score instead of its square.",
    ),
    BlindCase(
        CHECK,
        "kernel_over_its_sum",
        nw_kernel_ratio,
        "correct",
        "The Gaussian kernel with its constant, divided by its sum over the keys, the largest "
        "exponent subtracted first.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_einsum",
        nw_log_softmax_einsum,
        "correct",
        "Shared keys expanded to one row per query, -0.5 ((q - k) / width)^2, log_softmax then "
        "exp, einsum for the sum.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        nw_loop_over_queries,
        "correct",
        "A Python loop over the queries, one softmax per query, stacked at the end.",
    ),
]
