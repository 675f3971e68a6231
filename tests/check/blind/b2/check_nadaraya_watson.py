"""Blind cases for check_nadaraya_watson (chapter 5), written from the chapter's text only."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_nadaraya_watson"


def _diff(queries: Tensor, keys: Tensor) -> Tensor:
    return queries.unsqueeze(-1) - keys  # (T_q, T_k) for shared or per-query keys


def _pool(weights: Tensor, values: Tensor) -> Tensor:
    return (weights * values).sum(dim=-1)


# ---- mistakes -------------------------------------------------------------------------------


def softmax_over_queries(queries, keys, values, width=1.0):
    scores = -(_diff(queries, keys) ** 2) / (2 * width**2)
    weights = torch.softmax(scores, dim=0)
    return _pool(weights, values), weights


def half_missing(queries, keys, values, width=1.0):
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / width**2, dim=-1)
    return _pool(weights, values), weights


def width_not_squared(queries, keys, values, width=1.0):
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width), dim=-1)
    return _pool(weights, values), weights


def width_multiplies(queries, keys, values, width=1.0):
    weights = torch.softmax(-(_diff(queries, keys) ** 2) * width**2 / 2, dim=-1)
    return _pool(weights, values), weights


def sign_flipped(queries, keys, values, width=1.0):
    weights = torch.softmax(_diff(queries, keys) ** 2 / (2 * width**2), dim=-1)
    return _pool(weights, values), weights


def plain_average(queries, keys, values, width=1.0):
    d = _diff(queries, keys)
    weights = torch.ones_like(d) / d.shape[-1]
    return _pool(weights, values), weights


def width_as_float(queries, keys, values, width=1.0):
    sigma = float(width)  # so that a tensor width works in the formula
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * sigma**2), dim=-1)
    return _pool(weights, values), weights


def absolute_distance(queries, keys, values, width=1.0):
    weights = torch.softmax(-_diff(queries, keys).abs() / (2 * width**2), dim=-1)
    return _pool(weights, values), weights


def weights_keys_first(queries, keys, values, width=1.0):
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return _pool(weights, values), weights.T  # I returned them (T_k, T_q)


def kernel_not_normalised(queries, keys, values, width=1.0):
    weights = torch.exp(
        -(_diff(queries, keys) ** 2) / (2 * width**2)
    )  # the Gaussian, not its softmax
    return _pool(weights, values), weights


# ---- reader's slip ------------------------------------------------------------------------------


class NadarayaWatsonModule(nn.Module):
    def forward(self, queries, keys, values, width=1.0):
        weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
        return _pool(weights, values), weights


# ---- correct variants ---------------------------------------------------------------------------


def expanded_with_einsum(queries: Tensor, keys: Tensor, values: Tensor, width=1.0):
    T_q = queries.shape[0]
    if keys.dim() == 1:
        keys = keys.expand(T_q, -1)
        values = values.expand(T_q, -1)
    scores = -0.5 * ((queries[:, None] - keys) / width) ** 2
    weights = scores.softmax(dim=1)
    return torch.einsum("qk,qk->q", weights, values), weights


def stable_exp_by_hand(queries: Tensor, keys: Tensor, values: Tensor, width=1.0):
    sq = (queries.unsqueeze(1) - keys).pow(2)
    scores = sq.mul(-1).div(2 * torch.as_tensor(width, dtype=sq.dtype) ** 2)
    e = torch.exp(scores - scores.max(dim=1, keepdim=True).values)
    weights = e / e.sum(dim=1, keepdim=True)
    return (weights * values).sum(1), weights


def loop_over_queries(queries: Tensor, keys: Tensor, values: Tensor, width=1.0):
    preds, rows = [], []
    for i in range(queries.shape[0]):
        k = keys if keys.dim() == 1 else keys[i]
        v = values if values.dim() == 1 else values[i]
        w = torch.softmax(-((queries[i] - k) ** 2) / (2 * width * width), dim=0)
        rows.append(w)
        preds.append(w @ v)
    return torch.stack(preds), torch.stack(rows)


CASES = [
    BlindCase(
        CHECK,
        "softmax_over_queries",
        softmax_over_queries,
        "mistake",
        "I took the softmax over dim 0, the queries, instead of over the keys",
    ),
    BlindCase(
        CHECK,
        "half_missing",
        half_missing,
        "mistake",
        "I divided the squared distance by width**2 and left out the 2",
    ),
    BlindCase(
        CHECK,
        "width_not_squared",
        width_not_squared,
        "mistake",
        "I divided by 2 * width instead of 2 * width**2",
    ),
    BlindCase(
        CHECK,
        "width_multiplies",
        width_multiplies,
        "mistake",
        "I multiplied the squared distance by width**2 / 2 instead of dividing by it",
    ),
    BlindCase(
        CHECK,
        "sign_flipped",
        sign_flipped,
        "mistake",
        "I forgot the minus sign, so farther keys get larger scores",
    ),
    BlindCase(
        CHECK,
        "plain_average",
        plain_average,
        "mistake",
        "I gave every key the same weight 1 / T_k, average pooling",
    ),
    BlindCase(
        CHECK,
        "width_as_float",
        width_as_float,
        "mistake",
        "I converted the width with float(width), which cuts a learnable width out of autograd",
    ),
    BlindCase(
        CHECK,
        "absolute_distance",
        absolute_distance,
        "mistake",
        "I used the absolute distance |q - k| instead of the squared distance",
    ),
    BlindCase(
        CHECK,
        "weights_keys_first",
        weights_keys_first,
        "mistake",
        "I returned the weights transposed, as (T_k, T_q)",
    ),
    BlindCase(
        CHECK,
        "kernel_not_normalised",
        kernel_not_normalised,
        "mistake",
        "I used exp of the scores as weights without dividing by their sum",
    ),
    BlindCase(
        CHECK,
        "nadaraya_watson_module",
        NadarayaWatsonModule,
        "mistake",
        "I wrote an nn.Module class with the formula in forward and passed the class instead of a function",
    ),
    BlindCase(
        CHECK,
        "expanded_with_einsum",
        expanded_with_einsum,
        "correct",
        "I expanded shared keys to (T_q, T_k), wrote the score as -0.5 ((q - k) / width)^2 and pooled with einsum",
    ),
    BlindCase(
        CHECK,
        "stable_exp_by_hand",
        stable_exp_by_hand,
        "correct",
        "I wrote the softmax by hand, subtracting each row's maximum before exp",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        loop_over_queries,
        "correct",
        "I looped over the queries and stacked one softmax row and one prediction per query",
    ),
]
