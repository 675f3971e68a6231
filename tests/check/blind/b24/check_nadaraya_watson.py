"""Blind set B24, check_nadaraya_watson (chapter 5): Gaussian attention pooling as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_nadaraya_watson"


def _diff(queries: Tensor, keys: Tensor) -> Tensor:
    """q - k for every query and key: (T_q, T_k), whether keys are (T_k,) or (T_q, T_k)."""
    return queries.unsqueeze(-1) - keys


# ---------------------------------------------------------------- mistakes


def nw_softmax_over_queries(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=0)
    return (weights * values).sum(-1), weights


def nw_no_half(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / width**2, dim=-1)
    return (weights * values).sum(-1), weights


def nw_absolute_distance(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-_diff(queries, keys).abs() / (2 * width**2), dim=-1)
    return (weights * values).sum(-1), weights


def nw_width_multiplies(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) * width**2 / 2, dim=-1)
    return (weights * values).sum(-1), weights


def nw_width_not_squared(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width), dim=-1)
    return (weights * values).sum(-1), weights


def nw_sign_flipped(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(_diff(queries, keys) ** 2 / (2 * width**2), dim=-1)
    return (weights * values).sum(-1), weights


def nw_width_as_float(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    sigma = float(width)  # works for a number and for a tensor
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * sigma**2), dim=-1)
    return (weights * values).sum(-1), weights


def nw_broadcast_for_shared_keys_only(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    diff = queries.unsqueeze(1) - keys.unsqueeze(0)  # (T_q, 1) - (1, T_k)
    weights = torch.softmax(-(diff**2) / (2 * width**2), dim=-1)
    return (weights * values).sum(-1), weights


def nw_matmul_values(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return weights @ values, weights  # (T_q, T_k) @ (T_k,) -> (T_q,)


def nw_returns_weights_first(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return weights, (weights * values).sum(-1)


def nw_weights_transposed(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return (weights * values).sum(-1), weights.T  # (T_k, T_q): one column per query, as plotted


def nw_mean_not_sum(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return (weights * values).mean(-1), weights  # a weighted average


# ---------------------------------------------------------------- correct variants


def nw_gaussian_density(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    """The full log-density of N(k, width^2); its constant cancels in the softmax."""
    sigma = torch.as_tensor(width, dtype=queries.dtype)
    log_kernel = -_diff(queries, keys).pow(2) / (2 * sigma**2) - torch.log(
        sigma * math.sqrt(2 * math.pi)
    )
    weights = log_kernel.softmax(dim=-1)
    return torch.einsum("qk,qk->q", weights, values.expand_as(weights)), weights


def nw_logsumexp(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    if keys.dim() == 1:  # the same keys and values for every query
        keys = keys.expand(queries.shape[0], -1)
        values = values.expand(queries.shape[0], -1)
    scores = -0.5 * ((queries[:, None] - keys) / width) ** 2
    weights = torch.exp(scores - torch.logsumexp(scores, dim=1, keepdim=True))
    return torch.sum(weights * values, dim=1), weights


def nw_row_loop(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    predictions, rows = [], []
    for i, q in enumerate(queries):
        k = keys[i] if keys.dim() == 2 else keys
        v = values[i] if values.dim() == 2 else values
        scores = -((q - k) ** 2) / (2 * width * width)
        e = torch.exp(scores - scores.max())
        w = e / e.sum()
        rows.append(w)
        predictions.append(w @ v)
    return torch.stack(predictions), torch.stack(rows)


CASES = [
    BlindCase(
        CHECK,
        "softmax_over_queries",
        nw_softmax_over_queries,
        "mistake",
        "I took the softmax with dim=0, over the queries.",
    ),
    BlindCase(
        CHECK,
        "no_half",
        nw_no_half,
        "mistake",
        "I divided by width**2 and forgot the 2.",
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
        "width_multiplies",
        nw_width_multiplies,
        "mistake",
        "I multiplied the squared distance by width**2 instead of dividing by it.",
    ),
    BlindCase(
        CHECK,
        "width_not_squared",
        nw_width_not_squared,
        "mistake",
        "I divided by 2 * width, forgetting to square the width.",
    ),
    BlindCase(
        CHECK,
        "sign_flipped",
        nw_sign_flipped,
        "mistake",
        "I dropped the minus sign, so far keys get the largest weights.",
    ),
    BlindCase(
        CHECK,
        "width_cast_to_float",
        nw_width_as_float,
        "mistake",
        "I turned the width into a Python float first, which cuts it out of autograd.",
    ),
    BlindCase(
        CHECK,
        "broadcast_for_shared_keys_only",
        nw_broadcast_for_shared_keys_only,
        "mistake",
        "I wrote queries.unsqueeze(1) - keys.unsqueeze(0), which is right for shared keys but "
        "gives a 3-D result for one row of keys per query.",
    ),
    BlindCase(
        CHECK,
        "matmul_values",
        nw_matmul_values,
        "mistake",
        "I made the prediction with weights @ values, which is right for shared values but a "
        "matrix product when every query has its own row of values.",
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
        "weights_transposed",
        nw_weights_transposed,
        "mistake",
        "I returned the weights transposed, (T_k, T_q), as I plot them.",
    ),
    BlindCase(
        CHECK,
        "mean_not_sum",
        nw_mean_not_sum,
        "mistake",
        "I took the mean of weights * values over the keys instead of the sum.",
    ),
    BlindCase(
        CHECK,
        "full_gaussian_density",
        nw_gaussian_density,
        "correct",
        "The score is the full Gaussian log-density, with -log(sigma sqrt(2 pi)); einsum for "
        "the weighted sum.",
    ),
    BlindCase(
        CHECK,
        "logsumexp_normalised",
        nw_logsumexp,
        "correct",
        "-0.5 ((q - k) / width)^2, normalised with logsumexp; shared keys expanded to one row "
        "per query.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        nw_row_loop,
        "correct",
        "A loop over the queries with a max-subtracted exp, stacked at the end.",
    ),
]
