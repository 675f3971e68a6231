"""Blind set B31, check_nadaraya_watson (chapter 5): Gaussian kernel regression as attention."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_nadaraya_watson"


def _diff(queries: Tensor, keys: Tensor) -> Tensor:
    return queries.unsqueeze(-1) - keys  # (T_q, T_k), keys shared or one row per query


def _pool(scores: Tensor, values: Tensor) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(-1), weights


# ---------------------------------------------------------------- mistakes


def nw_softmax_over_queries(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=0)
    return (weights * values).sum(-1), weights


def nw_precedence(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    return _pool(-(_diff(queries, keys) ** 2) / 2 * width**2, values)  # / 2 * w^2 = * w^2 / 2


def nw_two_width_squared(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    return _pool(-(_diff(queries, keys) ** 2) / (2 * width) ** 2, values)  # (2 sigma)^2


def nw_no_half(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    return _pool(-(_diff(queries, keys) ** 2) / width**2, values)


def nw_width_not_squared(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    return _pool(-(_diff(queries, keys) ** 2) / (2 * width), values)


def nw_absolute_distance(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    return _pool(-_diff(queries, keys).abs() / (2 * width**2), values)  # distance, not squared


def nw_plus_sign(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    return _pool(_diff(queries, keys) ** 2 / (2 * width**2), values)  # dropped the minus


def nw_float_width(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    w = float(width)  # so that it also works with plain numbers
    return _pool(-(_diff(queries, keys) ** 2) / (2 * w**2), values)


def nw_matmul_values(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return weights @ values.T if values.dim() == 2 else weights @ values, weights


def nw_flattened_rows(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    keys, values = keys.reshape(-1), values.reshape(-1)  # one long row of pairs
    weights = torch.softmax(-((queries[:, None] - keys[None, :]) ** 2) / (2 * width**2), dim=-1)
    return weights @ values, weights


def nw_unnormalised_weights(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    kernel = torch.exp(-(_diff(queries, keys) ** 2) / (2 * width**2))  # the Gaussian bumps
    preds = (kernel * values).sum(-1) / kernel.sum(-1)
    return preds, kernel


def nw_weights_first(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    preds, weights = _pool(-(_diff(queries, keys) ** 2) / (2 * width**2), values)
    return weights, preds


def nw_width_fixed(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    sigma = 1.0  # the chapter's width
    return _pool(-(_diff(queries, keys) ** 2) / (2 * sigma**2), values)


def nw_average(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = torch.zeros_like(_diff(queries, keys))  # start simple: all keys equal
    return _pool(scores, values)


# ---------------------------------------------------------------- correct variants


def nw_exp_over_sum(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -((queries[:, None] - keys) ** 2) / (2 * width * width)
    e = torch.exp(scores - scores.max(dim=1, keepdim=True).values)
    weights = e / e.sum(dim=1, keepdim=True)
    return (weights * values).sum(dim=1), weights


def nw_loop(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    preds, rows = [], []
    for i, q in enumerate(queries):
        k = keys[i] if keys.dim() == 2 else keys
        v = values[i] if values.dim() == 2 else values
        w = torch.softmax(-0.5 * ((q - k) / width) ** 2, dim=0)
        rows.append(w)
        preds.append(torch.dot(w, v))
    return torch.stack(preds), torch.stack(rows)


def nw_expand_log_softmax(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    T_q = queries.shape[0]
    keys = keys.expand(T_q, -1) if keys.dim() == 1 else keys  # (T_q, T_k)
    values = values.expand(T_q, -1) if values.dim() == 1 else values
    scores = (queries.view(-1, 1) - keys).pow(2).div(2 * width**2).neg()
    weights = scores.log_softmax(-1).exp()
    return torch.einsum("qk,qk->q", weights, values), weights


def nw_float64_inside(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    dtype = values.dtype
    w = width.double() if isinstance(width, Tensor) else float(width)
    d = queries.double().unsqueeze(-1) - keys.double()
    weights = torch.softmax(-(d**2) / (2 * w**2), dim=-1)
    preds = (weights * values.double()).sum(-1)
    return preds.to(dtype), weights.to(dtype)


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
        "operator_precedence",
        nw_precedence,
        "mistake",
        "I wrote -(q - k)**2 / 2 * width**2, which multiplies by width^2 / 2.",
    ),
    BlindCase(
        CHECK,
        "two_sigma_squared",
        nw_two_width_squared,
        "mistake",
        "I wrote (2 * width)**2, i.e. 4 sigma^2 instead of 2 sigma^2.",
    ),
    BlindCase(CHECK, "no_half", nw_no_half, "mistake", "I left out the 1/2 in the score."),
    BlindCase(
        CHECK,
        "width_not_squared",
        nw_width_not_squared,
        "mistake",
        "I divided by 2 * width instead of 2 * width^2.",
    ),
    BlindCase(
        CHECK,
        "absolute_distance",
        nw_absolute_distance,
        "mistake",
        "I used |q - k| instead of the squared distance.",
    ),
    BlindCase(
        CHECK,
        "sign_dropped",
        nw_plus_sign,
        "mistake",
        "I dropped the minus sign, so farther keys get more weight.",
    ),
    BlindCase(
        CHECK,
        "width_cast_to_float",
        nw_float_width,
        "mistake",
        "I converted the width with float(width), which cuts it out of autograd.",
    ),
    BlindCase(
        CHECK,
        "matmul_with_values",
        nw_matmul_values,
        "mistake",
        "I summed with weights @ values, which for one row of values per query becomes a "
        "matrix product over the wrong axes.",
    ),
    BlindCase(
        CHECK,
        "flattened_rows",
        nw_flattened_rows,
        "mistake",
        "I flattened keys and values into one row, so with per-query rows every query sees "
        "every row's pairs.",
    ),
    BlindCase(
        CHECK,
        "unnormalised_weights",
        nw_unnormalised_weights,
        "mistake",
        "My predictions divide by the sum, but I returned the raw Gaussian values as weights.",
    ),
    BlindCase(
        CHECK,
        "weights_first",
        nw_weights_first,
        "mistake",
        "I returned (weights, predictions) instead of (predictions, weights).",
    ),
    BlindCase(
        CHECK,
        "width_fixed_at_one",
        nw_width_fixed,
        "mistake",
        "I wrote the chapter's sigma = 1 into the formula and ignored the width argument.",
    ),
    BlindCase(
        CHECK,
        "plain_average",
        nw_average,
        "mistake",
        "I started with all scores zero (average pooling) and never put the Gaussian in.",
    ),
    BlindCase(
        CHECK,
        "exp_over_sum",
        nw_exp_over_sum,
        "correct",
        "exp of the scores minus their row maximum, divided by the row sum.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        nw_loop,
        "correct",
        "One query at a time, -0.5 * ((q - k) / width)^2 and a dot product.",
    ),
    BlindCase(
        CHECK,
        "expand_log_softmax_einsum",
        nw_expand_log_softmax,
        "correct",
        "Shared keys expanded to one row per query, log_softmax().exp(), einsum for the sum.",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        nw_float64_inside,
        "correct",
        "Computed in float64, cast back to the values' dtype.",
    ),
]
