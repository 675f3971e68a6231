"""Blind set B9, check_nadaraya_watson (chapter 5): Gaussian-kernel attention pooling."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_nadaraya_watson"

# ---------------------------------------------------------------- mistakes


def nw_softmax_over_queries(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2)
    weights = torch.softmax(scores, dim=0)
    return (weights * values).sum(-1), weights


def nw_no_half(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / width**2
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(-1), weights


def nw_absolute_distance(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -(queries.unsqueeze(-1) - keys).abs() / (2 * width**2)  # |q - k|, no square
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(-1), weights


def nw_width_multiplies(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -((queries.unsqueeze(-1) - keys) ** 2) * width**2 / 2
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(-1), weights


def nw_width_not_squared(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * width)
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(-1), weights


def nw_sign_flipped(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = (queries.unsqueeze(-1) - keys) ** 2 / (2 * width**2)  # lost the minus
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(-1), weights


def nw_plain_average(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    T_q, T_k = queries.shape[0], keys.shape[-1]
    weights = torch.full((T_q, T_k), 1.0 / T_k)
    return (weights * values).sum(-1), weights


def nw_width_as_float(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    w = float(width)  # so that a tensor width works too
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * w**2)
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(-1), weights


def nw_matmul_values(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2)
    weights = torch.softmax(scores, dim=-1)
    return weights @ values, weights  # fine for (T_k,) values, not for one row per query


def nw_unstable_exp(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    kernel = torch.exp(-((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2))
    weights = kernel / kernel.sum(-1, keepdim=True)  # the textbook formula, no max subtracted
    return (weights * values).sum(-1), weights


# ---------------------------------------------------------------- correct variants


def nw_normal_log_prob(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    width = torch.as_tensor(width, dtype=queries.dtype)
    log_k = torch.distributions.Normal(keys, width).log_prob(queries.unsqueeze(-1))
    weights = log_k.softmax(-1)  # the normalizing constant is the same for every key
    return (weights * values).sum(-1), weights


def nw_stable_manual(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -0.5 * ((queries[:, None] - keys) / width) ** 2
    e = torch.exp(scores - scores.amax(-1, keepdim=True))
    weights = e / e.sum(-1, keepdim=True)
    return (weights * values).sum(-1), weights


def nw_expand_einsum(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    T_q, T_k = queries.shape[0], keys.shape[-1]
    keys, values = keys.expand(T_q, T_k), values.expand(T_q, T_k)
    d2 = (queries.view(T_q, 1) - keys).pow(2)
    weights = torch.softmax(-d2 / (2 * width * width), dim=1)
    return torch.einsum("qk,qk->q", weights, values), weights


def nw_float64_inside(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    w = width.double() if isinstance(width, Tensor) else float(width)
    scores = -((queries.double().unsqueeze(-1) - keys.double()) ** 2) / (2 * w**2)
    weights = torch.softmax(scores, dim=-1)
    preds = (weights * values.double()).sum(-1)
    return preds.to(values.dtype), weights.to(values.dtype)


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
        "I divided the squared distance by width**2, forgetting the 2.",
    ),
    BlindCase(
        CHECK,
        "absolute_distance",
        nw_absolute_distance,
        "mistake",
        "I used |q - k| instead of (q - k)**2 in the score.",
    ),
    BlindCase(
        CHECK,
        "width_multiplies",
        nw_width_multiplies,
        "mistake",
        "I multiplied the squared distance by width**2 / 2 instead of dividing by 2 width**2.",
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
        "sign_flipped",
        nw_sign_flipped,
        "mistake",
        "I dropped the minus sign, so the farthest keys get the most weight.",
    ),
    BlindCase(
        CHECK,
        "plain_average",
        nw_plain_average,
        "mistake",
        "I returned the mean of the values with uniform weights (average pooling).",
    ),
    BlindCase(
        CHECK,
        "width_cast_to_float",
        nw_width_as_float,
        "mistake",
        "I converted the width with float(width), which cuts a learnable width out of autograd.",
    ),
    BlindCase(
        CHECK,
        "weights_matmul_values",
        nw_matmul_values,
        "mistake",
        "I took the prediction as weights @ values, which is only right when the values "
        "are shared (T_k,), not one row per query.",
    ),
    BlindCase(
        CHECK,
        "unstable_exp_normalize",
        nw_unstable_exp,
        "mistake",
        "I wrote exp(score) / sum(exp(score)) by hand; for a query far from every key all "
        "the exps underflow to 0 and the weights become NaN.",
    ),
    BlindCase(
        CHECK,
        "normal_log_prob",
        nw_normal_log_prob,
        "correct",
        "I used torch.distributions.Normal(keys, width).log_prob(q) as the score; its "
        "extra constant cancels in the softmax.",
    ),
    BlindCase(
        CHECK,
        "stable_manual_softmax",
        nw_stable_manual,
        "correct",
        "I wrote -0.5 ((q - k) / width)**2 and a softmax by hand with the max subtracted.",
    ),
    BlindCase(
        CHECK,
        "expand_and_einsum",
        nw_expand_einsum,
        "correct",
        "I always expanded keys and values to (T_q, T_k) and summed with einsum.",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        nw_float64_inside,
        "correct",
        "I computed everything in float64 and cast back to the values' dtype.",
    ),
]
