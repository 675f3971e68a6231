"""Blind set B13, check_nadaraya_watson (chapter 5): Gaussian attention pooling as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_nadaraya_watson"


def _diff(queries: Tensor, keys: Tensor) -> Tensor:
    return queries.unsqueeze(-1) - keys  # (T_q, T_k) for shared or per-query keys


# ---------------------------------------------------------------- mistakes


def nw_softmax_over_queries(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=0)
    return (weights * values).sum(-1), weights


def nw_no_half(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / width**2, dim=-1)
    return (weights * values).sum(-1), weights


def nw_abs_distance(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    weights = torch.softmax(-_diff(queries, keys).abs() / (2 * width**2), dim=-1)
    return (weights * values).sum(-1), weights


def nw_width_multiplies(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) * width**2 / 2, dim=-1)
    return (weights * values).sum(-1), weights


def nw_width_not_squared(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width), dim=-1)
    return (weights * values).sum(-1), weights


def nw_sign_flipped(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    weights = torch.softmax(_diff(queries, keys) ** 2 / (2 * width**2), dim=-1)
    return (weights * values).sum(-1), weights


def nw_two_sigma_squared(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width) ** 2, dim=-1)
    return (weights * values).sum(-1), weights


def nw_width_as_float(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    w = float(width)  # so that width ** 2 is a plain number
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * w**2), dim=-1)
    return (weights * values).sum(-1), weights


def nw_matmul_values(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return weights @ values, weights  # fine for shared values, not for one row per query


def nw_unnormalised_kernel(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    weights = torch.exp(-(_diff(queries, keys) ** 2) / (2 * width**2))  # the Gaussian kernel
    return (weights * values).sum(-1), weights


def nw_normalise_all(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    kernel = torch.exp(-(_diff(queries, keys) ** 2) / (2 * width**2))
    weights = kernel / kernel.sum()  # divided by the total
    return (weights * values).sum(-1), weights


def nw_weights_transposed(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    scores = -((queries[None, :] - keys[..., :, None]) ** 2) / (2 * width**2)  # (T_k, T_q)
    weights = torch.softmax(scores, dim=0)
    return (weights * values[..., :, None]).sum(0), weights


# ---------------------------------------------------------------- correct variants


def nw_stable_exp(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    scores = -0.5 * ((queries.unsqueeze(-1) - keys) / width) ** 2
    e = torch.exp(scores - scores.max(dim=-1, keepdim=True).values)
    weights = e / e.sum(dim=-1, keepdim=True)
    return torch.sum(weights * values, dim=-1), weights


def nw_normal_log_prob(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    width = torch.as_tensor(width, dtype=queries.dtype)
    dist = torch.distributions.Normal(queries.unsqueeze(-1), width)
    weights = dist.log_prob(keys).softmax(-1)  # the constant -log(sqrt(2 pi) width) cancels
    values = values.expand_as(weights)
    return torch.einsum("qk,qk->q", weights, values), weights


def nw_log_softmax(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0, eps: float = 0.0
) -> tuple:
    d2 = (queries[:, None] - keys).pow(2)
    logw = torch.log_softmax(-d2 / (2 * width * width) + eps, dim=1)
    weights = logw.exp()
    return (weights * values).sum(1), weights


def nw_gaussian_pdf(queries: Tensor, keys: Tensor, values: Tensor, width=1.0) -> tuple:
    d = queries.reshape(-1, 1) - keys
    pdf = torch.exp(-(d**2) / (2 * width**2)) / (math.sqrt(2 * math.pi) * width)
    weights = pdf / pdf.sum(dim=1, keepdim=True)  # the pdf, normalised over the keys
    return (weights * values).sum(dim=1), weights


CASES = [
    BlindCase(
        CHECK,
        "softmax_over_queries",
        nw_softmax_over_queries,
        "mistake",
        "I took the softmax over dim=0, the queries.",
    ),
    BlindCase(CHECK, "no_half", nw_no_half, "mistake", "I divided by width**2 and forgot the 2."),
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
        "I multiplied the squared distance by width**2 instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "width_not_squared",
        nw_width_not_squared,
        "mistake",
        "I divided by 2 * width without squaring the width.",
    ),
    BlindCase(
        CHECK,
        "sign_flipped",
        nw_sign_flipped,
        "mistake",
        "I left out the minus sign, so far keys get the most weight.",
    ),
    BlindCase(
        CHECK,
        "two_width_squared",
        nw_two_sigma_squared,
        "mistake",
        "I wrote (2 * width) ** 2 for the denominator.",
    ),
    BlindCase(
        CHECK,
        "width_as_float",
        nw_width_as_float,
        "mistake",
        "I turned the width into a float first, so a learned width gets no gradient.",
    ),
    BlindCase(
        CHECK,
        "matmul_values",
        nw_matmul_values,
        "mistake",
        "I used weights @ values, which is wrong when each query has its own row of values.",
    ),
    BlindCase(
        CHECK,
        "unnormalised_kernel",
        nw_unnormalised_kernel,
        "mistake",
        "I used the Gaussian kernel values as weights without normalising them.",
    ),
    BlindCase(
        CHECK,
        "normalise_over_all",
        nw_normalise_all,
        "mistake",
        "I divided the kernel by its total over all queries and keys, not per query.",
    ),
    BlindCase(
        CHECK,
        "weights_transposed",
        nw_weights_transposed,
        "mistake",
        "I put the keys on the rows: the weights come back (T_k, T_q).",
    ),
    BlindCase(
        CHECK,
        "stable_exp",
        nw_stable_exp,
        "correct",
        "exp(scores - max) divided by its row sum; the score as -0.5 ((q - k) / width)^2.",
    ),
    BlindCase(
        CHECK,
        "normal_log_prob",
        nw_normal_log_prob,
        "correct",
        "Normal(q, width).log_prob(k) as the score, einsum for the weighted sum.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_extra_arg",
        nw_log_softmax,
        "correct",
        "log_softmax then exp, width * width, and an extra argument with a default.",
    ),
    BlindCase(
        CHECK,
        "gaussian_pdf",
        nw_gaussian_pdf,
        "correct",
        "The full Gaussian pdf with its constant, normalised per query.",
    ),
]
