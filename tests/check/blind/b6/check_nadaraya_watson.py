"""Blind set B6, check_nadaraya_watson (chapter 5): Gaussian attention pooling by readers."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_nadaraya_watson"


def _diffs(queries: Tensor, keys: Tensor) -> Tensor:
    return queries.unsqueeze(-1) - keys  # (T_q, T_k) for shared or per-query keys


# ---------------------------------------------------------------- mistakes


def nw_softmax_over_queries(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -(_diffs(queries, keys) ** 2) / (2 * width**2)
    weights = torch.softmax(scores, dim=0)
    return (weights * values).sum(-1), weights


def nw_no_half(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -(_diffs(queries, keys) ** 2) / width**2  # the 1/2 only matters for the density
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(-1), weights


def nw_width_not_squared(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -(_diffs(queries, keys) ** 2) / (2 * width)
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(-1), weights


def nw_width_multiplies(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -0.5 * (_diffs(queries, keys) * width) ** 2  # width scales the distance
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(-1), weights


def nw_sign_flipped(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = (_diffs(queries, keys) ** 2) / (2 * width**2)  # the minus is the softmax's job
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(-1), weights


def nw_absolute_distance(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -_diffs(queries, keys).abs() / (2 * width**2)  # |q - k|, the distance
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(-1), weights


def nw_width_as_float(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    sigma = float(width)  # works for a float and a one-element tensor alike
    scores = -(_diffs(queries, keys) ** 2) / (2 * sigma**2)
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(-1), weights


def nw_outer_difference(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    diffs = queries[:, None] - keys[None, :]  # (T_q, 1) - (1, T_k)
    weights = torch.softmax(-(diffs**2) / (2 * width**2), dim=-1)
    return (weights * values).sum(-1), weights


def nw_matmul_values(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diffs(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return weights @ values, weights  # the weighted sum as a matrix product


def nw_returns_weights_first(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diffs(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return weights, (weights * values).sum(-1)


# ---------------------------------------------------------------- correct variants


def nw_logsumexp_einsum(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    T_q = queries.shape[0]
    keys = keys.expand(T_q, -1)  # (T_q, T_k) in both cases
    values = values.expand(T_q, -1)
    scores = -0.5 * ((queries[:, None] - keys) / width) ** 2
    weights = torch.exp(scores - torch.logsumexp(scores, dim=-1, keepdim=True))
    return torch.einsum("qk,qk->q", weights, values), weights


def nw_query_loop(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    preds, rows = [], []
    for i, q in enumerate(queries):
        k = keys[i] if keys.dim() == 2 else keys
        v = values[i] if values.dim() == 2 else values
        w = torch.softmax(-((q - k) ** 2) / 2 / width / width, dim=0)
        rows.append(w)
        preds.append(torch.dot(w, v))
    return torch.stack(preds), torch.stack(rows)


def nw_kernel_normalised(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    """The kernel form: Gaussian weights over their sum, shifted by the nearest key first."""
    sq = (queries.unsqueeze(-1) - keys) ** 2  # (T_q, T_k)
    sq = sq - sq.min(dim=-1, keepdim=True).values  # the row's nearest key gets exp(0) = 1
    kernel = torch.exp(-sq / (2 * width**2))
    weights = kernel / kernel.sum(dim=-1, keepdim=True)
    return (weights * values).sum(dim=-1), weights


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
        "I divided the squared distance by width**2 and left out the factor 1/2.",
    ),
    BlindCase(
        CHECK,
        "width_not_squared",
        nw_width_not_squared,
        "mistake",
        "I divided by 2 * width instead of 2 * width**2.",
    ),
    BlindCase(
        CHECK,
        "width_multiplies",
        nw_width_multiplies,
        "mistake",
        "I multiplied the distance by the width, -(w (q - k))^2 / 2, instead of dividing by it.",
    ),
    BlindCase(
        CHECK,
        "sign_flipped",
        nw_sign_flipped,
        "mistake",
        "I left out the minus sign, so farther keys get more weight.",
    ),
    BlindCase(
        CHECK,
        "absolute_distance",
        nw_absolute_distance,
        "mistake",
        "I used the absolute distance |q - k| instead of its square.",
    ),
    BlindCase(
        CHECK,
        "width_cast_to_float",
        nw_width_as_float,
        "mistake",
        "I turned the width into a Python float with float(width), which cuts it out of "
        "autograd, so a learnable width gets no gradient.",
    ),
    BlindCase(
        CHECK,
        "outer_difference_indexing",
        nw_outer_difference,
        "mistake",
        "I wrote queries[:, None] - keys[None, :], which is right for shared keys but gives a "
        "3-D tensor when the keys come as one row per query.",
    ),
    BlindCase(
        CHECK,
        "weights_matmul_values",
        nw_matmul_values,
        "mistake",
        "I computed the prediction as weights @ values, which is a matrix product instead of "
        "a row-wise sum when the values come as one row per query.",
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
        "logsumexp_einsum",
        nw_logsumexp_einsum,
        "correct",
        "Keys and values expanded to (T_q, T_k), scores -((q - k) / w)^2 / 2, weights "
        "exp(scores - logsumexp), prediction by einsum.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        nw_query_loop,
        "correct",
        "A Python loop over the queries, each with its own row of keys and values when given, "
        "softmax and a dot product; results stacked.",
    ),
    BlindCase(
        CHECK,
        "normalised_kernel",
        nw_kernel_normalised,
        "correct",
        "The kernel form: exp of the scores shifted by each row's nearest key, divided by "
        "their sum.",
    ),
]
