"""Blind cases for check_nadaraya_watson (chapter 5)."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_nadaraya_watson"


def _diff(queries, keys):
    return queries.unsqueeze(-1) - keys  # (T_q, T_k), works for shared and per-query keys


def nw_abs_distance(queries, keys, values, width=1.0):
    w = torch.softmax(-_diff(queries, keys).abs() / (2 * width**2), dim=-1)
    return (w * values).sum(-1), w


def nw_width_outside_square(queries, keys, values, width=1.0):
    w = torch.softmax(-((_diff(queries, keys) / 2 * width) ** 2), dim=-1)  # precedence slip
    return (w * values).sum(-1), w


def nw_broadcast_wrong(queries, keys, values, width=1.0):
    d = queries.unsqueeze(0) - keys.unsqueeze(-1)  # (T_k, T_q) for shared keys
    w = torch.softmax(-(d**2) / (2 * width**2), dim=-1)
    return (w * values.unsqueeze(-1)).sum(0), w.T


def nw_softmax_dim0_per_query_ok(queries, keys, values, width=1.0):
    scores = -(_diff(queries, keys) ** 2) / (2 * width**2)
    w = torch.softmax(scores, dim=0)
    return (w * values).sum(-1), w


def nw_float_width(queries, keys, values, width=1.0):
    width = float(width)  # makes a plain number of it
    w = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return (w * values).sum(-1), w


def nw_normalized_exp_no_max(queries, keys, values, width=1.0):
    k = torch.exp(-(_diff(queries, keys) ** 2) / (2 * width**2))
    w = k / k.sum()  # divides by the sum over everything, not per row
    return (w * values).sum(-1), w


def nw_width_sqrt2(queries, keys, values, width=1.0):
    w = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width), dim=-1)  # sigma, not sigma^2
    return (w * values).sum(-1), w


def nw_matmul_shared_only(queries, keys, values, width=1.0):
    w = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return w @ values, w  # fine for (T_k,), a matrix product for (T_q, T_k)


def nw_returns_prediction_only(queries, keys, values, width=1.0):
    w = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return (w * values).sum(-1)


def nw_expand_and_einsum(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    T_q = queries.shape[0]
    if keys.dim() == 1:
        keys, values = keys.expand(T_q, -1), values.expand(T_q, -1)
    scores = -0.5 * ((queries[:, None] - keys) / width) ** 2
    weights = scores.softmax(dim=1)
    return torch.einsum("qk,qk->q", weights, values), weights


def nw_logsumexp(queries: Tensor, keys: Tensor, values: Tensor, width=1.0):
    sq = (queries.reshape(-1, 1) - keys) ** 2
    scores = sq.neg().div(2).div(torch.as_tensor(width) ** 2)
    weights = torch.exp(scores - torch.logsumexp(scores, dim=-1, keepdim=True))
    return torch.sum(weights * values, dim=-1), weights


def nw_loop(queries, keys, values, width=1.0):
    preds, rows = [], []
    for i, q in enumerate(queries):
        k = keys[i] if keys.dim() == 2 else keys
        v = values[i] if values.dim() == 2 else values
        w = torch.softmax(-((q - k) ** 2) / (2 * width * width), dim=0)
        rows.append(w)
        preds.append((w * v).sum())
    return torch.stack(preds), torch.stack(rows)


CASES = [
    BlindCase(
        CHECK,
        "absolute_distance",
        nw_abs_distance,
        "mistake",
        "uses |q - k| instead of (q - k)^2 in the score",
    ),
    BlindCase(
        CHECK,
        "precedence_width_multiplies",
        nw_width_outside_square,
        "mistake",
        "writes -((q - k) / 2 * width)^2, so the width multiplies the distance and the 2 is squared",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries_by_transpose",
        nw_broadcast_wrong,
        "mistake",
        "builds the differences as (T_k, T_q) and takes the softmax over the last axis, i.e. over the queries",
    ),
    BlindCase(
        CHECK,
        "softmax_dim0",
        nw_softmax_dim0_per_query_ok,
        "mistake",
        "takes the softmax over dim=0 (the queries) instead of over the keys",
    ),
    BlindCase(
        CHECK,
        "width_cast_to_float",
        nw_float_width,
        "mistake",
        "converts the width with float(width), which cuts it out of autograd",
    ),
    BlindCase(
        CHECK,
        "normalised_over_everything",
        nw_normalized_exp_no_max,
        "mistake",
        "exponentiates the scores and divides by the sum over the whole matrix instead of per query",
    ),
    BlindCase(
        CHECK,
        "width_not_squared",
        nw_width_sqrt2,
        "mistake",
        "divides by 2 * width instead of 2 * width^2",
    ),
    BlindCase(
        CHECK,
        "matmul_breaks_per_query_keys",
        nw_matmul_shared_only,
        "mistake",
        "uses weights @ values, which is a matrix product (wrong) when values come one row per query",
    ),
    BlindCase(
        CHECK,
        "slip_returns_only_predictions",
        nw_returns_prediction_only,
        "mistake",
        "returns only the predictions, not the pair (predictions, weights)",
    ),
    BlindCase(
        CHECK,
        "expand_and_einsum",
        nw_expand_and_einsum,
        "correct",
        "expands shared keys to one row per query, writes the score as -0.5*((q-k)/width)^2 and sums with einsum",
    ),
    BlindCase(
        CHECK,
        "logsumexp_softmax",
        nw_logsumexp,
        "correct",
        "normalises the scores by hand with logsumexp instead of torch.softmax",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        nw_loop,
        "correct",
        "loops over the queries, taking each query's row of keys when there is one",
    ),
]
