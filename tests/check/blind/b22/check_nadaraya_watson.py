"""Blind set B22, check_nadaraya_watson (chapter 5): Gaussian kernel regression as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_nadaraya_watson"


def _diff(queries: Tensor, keys: Tensor) -> Tensor:
    return queries.unsqueeze(-1) - keys  # (T_q, T_k)


# ---------------------------------------------------------------- mistakes


def nw_softmax_over_queries(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    w = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=0)
    return (w * values).sum(-1), w


def nw_no_half(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    w = torch.softmax(-(_diff(queries, keys) ** 2) / width**2, dim=-1)
    return (w * values).sum(-1), w


def nw_abs_distance(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    w = torch.softmax(-_diff(queries, keys).abs() / (2 * width**2), dim=-1)
    return (w * values).sum(-1), w


def nw_width_multiplies(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    w = torch.softmax(-(_diff(queries, keys) ** 2) * width**2 / 2, dim=-1)
    return (w * values).sum(-1), w


def nw_width_not_squared(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    w = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width), dim=-1)
    return (w * values).sum(-1), w


def nw_sign_flipped(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    w = torch.softmax(_diff(queries, keys) ** 2 / (2 * width**2), dim=-1)
    return (w * values).sum(-1), w


def nw_plain_average(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    w = torch.ones_like(_diff(queries, keys))
    w = w / w.sum(-1, keepdim=True)
    return (w * values).sum(-1), w


def nw_width_as_float(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    sigma = float(width)  # so it works for floats and tensors alike
    w = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * sigma**2), dim=-1)
    return (w * values).sum(-1), w


def nw_not_normalized(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    w = torch.exp(-(_diff(queries, keys) ** 2) / (2 * width**2))  # the Gaussian kernel itself
    return (w * values).sum(-1), w


def nw_weights_matmul_values(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    w = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return w @ values, w


def nw_returns_weights_first(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    w = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return w, (w * values).sum(-1)


def nw_log_softmax(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    w = torch.log_softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return (w.exp() * values).sum(-1), w  # returned the log-weights


def nw_sum_over_queries(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    w = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return (w * values).sum(0), w


# ---------------------------------------------------------------- correct variants


def nw_manual_softmax(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    scores = -0.5 * ((queries[:, None] - keys) / width) ** 2
    e = torch.exp(scores - scores.max(dim=-1, keepdim=True).values)
    w = e / e.sum(dim=-1, keepdim=True)
    return (w * values).sum(-1), w


def nw_einsum(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    T_q = queries.shape[0]
    keys = keys.expand(T_q, -1) if keys.dim() == 1 else keys
    values = values.expand(T_q, -1) if values.dim() == 1 else values
    width = torch.as_tensor(width, dtype=queries.dtype)
    w = torch.softmax(-torch.square(queries[:, None] - keys) / (2 * width * width), dim=1)
    return torch.einsum("qk,qk->q", w, values), w


def nw_log_space(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    scores = (queries.unsqueeze(1) - keys).pow(2).mul(-1).div(2 * width**2)
    w = (scores - scores.logsumexp(-1, keepdim=True)).exp()
    return torch.sum(w * values, dim=-1), w


CASES = [
    BlindCase(
        CHECK,
        "softmax_over_queries",
        nw_softmax_over_queries,
        "mistake",
        "I took the softmax over dim 0.",
    ),
    BlindCase(CHECK, "no_half", nw_no_half, "mistake", "I divided by width^2, without the 2."),
    BlindCase(
        CHECK,
        "abs_distance",
        nw_abs_distance,
        "mistake",
        "I used |q - k| instead of the squared distance.",
    ),
    BlindCase(
        CHECK,
        "width_multiplies",
        nw_width_multiplies,
        "mistake",
        "I multiplied the squared distance by width^2 instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "width_not_squared",
        nw_width_not_squared,
        "mistake",
        "I divided by 2 * width, not 2 * width^2.",
    ),
    BlindCase(
        CHECK,
        "sign_flipped",
        nw_sign_flipped,
        "mistake",
        "I forgot the minus sign, so far keys get the most weight.",
    ),
    BlindCase(
        CHECK,
        "plain_average",
        nw_plain_average,
        "mistake",
        "I gave every key the same weight (average pooling).",
    ),
    BlindCase(
        CHECK,
        "width_as_float",
        nw_width_as_float,
        "mistake",
        "I converted the width with float(), cutting it out of autograd.",
    ),
    BlindCase(
        CHECK,
        "not_normalized",
        nw_not_normalized,
        "mistake",
        "I used the Gaussian kernel values directly, without normalizing over the keys.",
    ),
    BlindCase(
        CHECK,
        "weights_matmul_values",
        nw_weights_matmul_values,
        "mistake",
        "I wrote weights @ values, which only works for shared 1-D values.",
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
        "log_softmax",
        nw_log_softmax,
        "mistake",
        "I used log_softmax and returned the log-weights as the weights.",
    ),
    BlindCase(
        CHECK,
        "sum_over_queries",
        nw_sum_over_queries,
        "mistake",
        "I summed weights * values over dim 0 instead of over the keys.",
    ),
    BlindCase(
        CHECK,
        "manual_softmax",
        nw_manual_softmax,
        "correct",
        "-0.5 ((q - k) / width)^2 and a hand-written stable softmax.",
    ),
    BlindCase(
        CHECK,
        "einsum_expanded",
        nw_einsum,
        "correct",
        "keys and values expanded to (T_q, T_k), einsum for the weighted sum.",
    ),
    BlindCase(
        CHECK, "log_space", nw_log_space, "correct", "weights as exp(scores - logsumexp(scores))."
    ),
]
