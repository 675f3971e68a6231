"""Blind set B27, check_nadaraya_watson (chapter 5): Gaussian attention pooling as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_nadaraya_watson"


def _diff(queries: Tensor, keys: Tensor) -> Tensor:
    return queries.unsqueeze(-1) - keys  # (T_q, T_k) for shared or per-query keys


# ---------------------------------------------------------------- mistakes


def nw_precedence(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    scores = -(_diff(queries, keys) ** 2) / 2 * width**2  # -(q - k)^2 / 2 sigma^2
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(-1), weights


def nw_width_not_squared(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    scores = -(_diff(queries, keys) ** 2) / (2 * width)
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(-1), weights


def nw_no_minus(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    scores = (queries.unsqueeze(-1) - keys) ** 2 / (2 * width**2)  # a Gaussian score
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(-1), weights


def nw_keys_minus_queries_axes(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    diff = keys.unsqueeze(-1) - queries  # (k - q)^2 = (q - k)^2
    weights = torch.softmax(-(diff**2) / (2 * width**2), dim=-1)
    return (weights * values).sum(-1), weights


def nw_shared_keys_only(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    diff = queries[:, None] - keys[None, :]  # (T_q, T_k)
    weights = torch.softmax(-(diff**2) / (2 * width**2), dim=-1)
    return (weights * values).sum(-1), weights


def nw_matmul_values(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return weights @ values, weights  # the weighted sum as a product


def nw_item_width(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    w = width.item() if isinstance(width, Tensor) else width  # a plain number for the formula
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * w**2), dim=-1)
    return (weights * values).sum(-1), weights


def nw_normalized_over_everything(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    kernel = torch.exp(-(_diff(queries, keys) ** 2) / (2 * width**2))
    weights = kernel / kernel.sum()  # weights that sum to 1
    return (weights * values).sum(-1), weights


def nw_absolute_distance(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    scores = -_diff(queries, keys).abs() / (2 * width**2)  # the distance between q and k
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(-1), weights


def nw_keepdim_predictions(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return (weights * values).sum(-1, keepdim=True), weights  # (T_q, 1), one per query


def nw_weights_first(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return weights, (weights * values).sum(-1)


def nw_sqrt_two_pi_width(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    scores = -(_diff(queries, keys) ** 2) / (math.sqrt(2 * math.pi) * width)  # the Gaussian's sigma
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(-1), weights


def nw_softmax_dim_zero(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    scores = -(_diff(queries, keys) ** 2) / (2 * width**2)  # (T_q, T_k)
    weights = torch.softmax(scores, dim=0)
    return (weights * values).sum(1), weights


# ---------------------------------------------------------------- correct variants


def nw_stable_exp(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    """exp and sum by hand, the row maximum subtracted first."""
    if keys.dim() == 1:
        keys = keys.expand(queries.shape[0], -1)
        values = values.expand(queries.shape[0], -1)
    scores = -0.5 * ((queries[:, None] - keys) / width) ** 2
    e = torch.exp(scores - scores.max(dim=1, keepdim=True).values)
    weights = e / e.sum(dim=1, keepdim=True)
    preds = torch.einsum("qk,qk->q", weights, values)
    return preds, weights


def nw_gaussian_log_density(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    """The full log-density of N(k, width^2) at q; its constant cancels in the softmax."""
    width = torch.as_tensor(width, dtype=queries.dtype)
    log_density = (
        -((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2)
        - torch.log(width)
        - 0.5 * math.log(2 * math.pi)
    )
    weights = log_density.softmax(-1)
    return torch.sum(weights * values, dim=-1), weights


def nw_loop_over_queries(queries, keys, values, width=1.0) -> tuple[Tensor, Tensor]:
    rows, preds = [], []
    for i, q in enumerate(queries):
        k = keys[i] if keys.dim() == 2 else keys
        v = values[i] if values.dim() == 2 else values
        w = torch.softmax(-((q - k) ** 2) / (2 * width * width), dim=0)
        rows.append(w)
        preds.append(w @ v)
    return torch.stack(preds), torch.stack(rows)


CASES = [
    BlindCase(
        CHECK,
        "divide_by_two_times_width_squared",
        nw_precedence,
        "mistake",
        "I wrote -(q - k)**2 / 2 * width**2 without parentheses, which multiplies by width^2.",
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
        "minus_sign_dropped",
        nw_no_minus,
        "mistake",
        "I dropped the minus sign, so far keys get the most weight.",
    ),
    BlindCase(
        CHECK,
        "keys_on_first_axis",
        nw_keys_minus_queries_axes,
        "mistake",
        "I computed keys.unsqueeze(-1) - queries, thinking the sign does not matter once "
        "squared, but the axes end up (T_k, T_q).",
    ),
    BlindCase(
        CHECK,
        "only_shared_keys",
        nw_shared_keys_only,
        "mistake",
        "I indexed keys[None, :], which only works for keys shared by all queries, not one row "
        "per query.",
    ),
    BlindCase(
        CHECK,
        "weights_matmul_values",
        nw_matmul_values,
        "mistake",
        "I took the prediction as weights @ values, which is wrong when values come one row per "
        "query.",
    ),
    BlindCase(
        CHECK,
        "width_item",
        nw_item_width,
        "mistake",
        "I turned a tensor width into a number with .item(), so no gradient reaches it.",
    ),
    BlindCase(
        CHECK,
        "normalized_over_all_pairs",
        nw_normalized_over_everything,
        "mistake",
        "I divided the kernel by its sum over the whole matrix instead of over each query's row.",
    ),
    BlindCase(
        CHECK,
        "absolute_distance",
        nw_absolute_distance,
        "mistake",
        "I used |q - k| instead of (q - k)^2 as the distance.",
    ),
    BlindCase(
        CHECK,
        "predictions_keepdim",
        nw_keepdim_predictions,
        "mistake",
        "I summed with keepdim=True, so the predictions are (T_q, 1) instead of (T_q,).",
    ),
    BlindCase(
        CHECK,
        "returns_weights_first",
        nw_weights_first,
        "mistake",
        "I returned (weights, predictions) instead of (predictions, weights).",
    ),
    BlindCase(
        CHECK,
        "sqrt_two_pi_denominator",
        nw_sqrt_two_pi_width,
        "mistake",
        "I divided by sqrt(2 pi) * width, the normal density's constant, instead of 2 * width^2.",
    ),
    BlindCase(
        CHECK,
        "softmax_dim_zero",
        nw_softmax_dim_zero,
        "mistake",
        "I took the softmax over dim=0, which normalizes over the queries.",
    ),
    BlindCase(
        CHECK,
        "stable_exp_by_hand",
        nw_stable_exp,
        "correct",
        "exp(scores - row max) normalized by hand, written as -0.5 ((q - k) / width)^2; einsum "
        "for the weighted sum.",
    ),
    BlindCase(
        CHECK,
        "gaussian_log_density",
        nw_gaussian_log_density,
        "correct",
        "The full Gaussian log-density as the score; its constant cancels in the softmax.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        nw_loop_over_queries,
        "correct",
        "A loop over the queries, each row of keys and values picked by hand.",
    ),
]
