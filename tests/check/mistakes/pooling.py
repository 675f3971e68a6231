"""Mistakes in Nadaraya-Watson kernel regression, attention pooling with a Gaussian kernel
(chapter 5)."""

from __future__ import annotations

import torch

from transformer_tutorial import check

from . import Correct, Mistake


def _pool(scores, values):
    weights = scores.softmax(dim=-1)  # (T_q, T_k)
    return (weights * values).sum(-1), weights


def nw_right(queries, keys, values, width=1.0):
    return _pool(-((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2), values)


def nw_by_kernel(queries, keys, values, width=1.0):
    """The kernel itself, normalised by its sum: the same weights as the softmax."""
    kernel = torch.exp(-((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2))
    weights = kernel / kernel.sum(-1, keepdim=True)
    return (weights * values).sum(-1), weights


def nw_by_loops(queries, keys, values, width=1.0):
    rows_k = keys.expand(len(queries), -1)
    rows_v = values.expand(len(queries), -1)
    predictions, all_weights = [], []
    for q, k, v in zip(queries, rows_k, rows_v, strict=True):
        weights = torch.softmax(-((q - k) ** 2) / (2 * width * width), dim=0)
        predictions.append(weights @ v)
        all_weights.append(weights)
    return torch.stack(predictions), torch.stack(all_weights)


def nw_softmax_over_queries(queries, keys, values, width=1.0):
    weights = torch.softmax(-((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2), dim=0)
    return (weights * values).sum(-1), weights


def nw_no_half(queries, keys, values, width=1.0):
    return _pool(-((queries.unsqueeze(-1) - keys) ** 2) / width**2, values)


def nw_no_square(queries, keys, values, width=1.0):
    return _pool(-(queries.unsqueeze(-1) - keys).abs() / (2 * width**2), values)


def nw_width_multiplies(queries, keys, values, width=1.0):
    return _pool(-((queries.unsqueeze(-1) - keys) ** 2) * width**2 / 2, values)


def nw_width_not_squared(queries, keys, values, width=1.0):
    return _pool(-((queries.unsqueeze(-1) - keys) ** 2) / (2 * width), values)


def nw_sign(queries, keys, values, width=1.0):
    return _pool((queries.unsqueeze(-1) - keys) ** 2 / (2 * width**2), values)


def nw_unweighted(queries, keys, values, width=1.0):
    _, weights = nw_right(queries, keys, values, width)
    return values.mean(-1).expand(len(queries)), weights  # the weights are never used


def nw_shared_keys_only(queries, keys, values, width=1.0):
    scores = -((queries[:, None] - keys[None, :]) ** 2) / (2 * width**2)
    return _pool(scores, values)


def nw_width_as_float(queries, keys, values, width=1.0):
    width = width.item() if isinstance(width, torch.Tensor) else width  # out of autograd
    return nw_right(queries, keys, values, width)


NW = check.check_nadaraya_watson

MISTAKES = [
    Mistake(NW, "nw-softmax-over-queries", nw_softmax_over_queries, "sum to 1 over the queries"),
    Mistake(NW, "nw-no-half", nw_no_half, "the 2 of 2 width^2 is missing"),
    Mistake(NW, "nw-no-square", nw_no_square, "the distance is not squared"),
    Mistake(NW, "nw-width-multiplies", nw_width_multiplies, "the width multiplies"),
    Mistake(NW, "nw-width-not-squared", nw_width_not_squared, "the width is not squared"),
    Mistake(NW, "nw-sign", nw_sign, "the sign of the score is flipped"),
    Mistake(NW, "nw-unweighted-average", nw_unweighted, "that is average pooling"),
    Mistake(NW, "nw-shared-keys-only", nw_shared_keys_only, "one row of keys per query"),
    Mistake(NW, "nw-width-detached", nw_width_as_float, "do not depend on the width"),
]

CORRECT = [
    Correct(NW, "nw-softmax", nw_right),
    Correct(NW, "nw-kernel-over-its-sum", nw_by_kernel),
    Correct(NW, "nw-by-loops", nw_by_loops),
]
