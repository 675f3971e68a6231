"""Chapter 5, "Your turn": ``nadaraya_watson(queries, keys, values, width=1.0)``.

Returns predictions ``(T_q,)`` and weights ``(T_q, T_k)``: the softmax over the keys of
``-(q - k)^2 / (2 width^2)``, then the weighted sum of the values. Keys and values are ``(T_k,)``
(shared) or ``(T_q, T_k)`` (one row per query).
"""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_nadaraya_watson"


# --- mistakes ---------------------------------------------------------------------------------


def width_not_squared(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -((queries[:, None] - keys) ** 2) / (2 * width)
    weights = scores.softmax(dim=-1)
    return (weights * values).sum(dim=-1), weights


def two_width_squared(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -((queries[:, None] - keys) ** 2) / (2 * width) ** 2  # (2 sigma)^2 = 4 sigma^2
    weights = scores.softmax(dim=-1)
    return (weights * values).sum(dim=-1), weights


def absolute_distance(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -(queries[:, None] - keys).abs() / (2 * width**2)  # |q - k| instead of (q - k)^2
    weights = scores.softmax(dim=-1)
    return (weights * values).sum(dim=-1), weights


def matmul_with_values(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2)
    weights = torch.softmax(scores, dim=-1)  # (T_q, T_k)
    return weights @ values, weights  # fine for shared values (T_k,), not for a row per query


def width_through_torch_tensor(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    sigma = torch.tensor(width, dtype=queries.dtype)  # copies the value: no graph to width
    scores = -((queries[:, None] - keys) ** 2) / (2 * sigma**2)
    weights = scores.softmax(dim=-1)
    return (weights * values).sum(dim=-1), weights


def exp_without_max_shift(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    kernel = torch.exp(-((queries[:, None] - keys) ** 2) / (2 * width**2))  # the Gaussian kernel
    weights = kernel / kernel.sum(dim=-1, keepdim=True)  # 0/0 when every kernel value underflows
    return (weights * values).sum(dim=-1), weights


def returns_weights_first(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-((queries[:, None] - keys) ** 2) / (2 * width**2), dim=-1)
    return weights, (weights * values).sum(dim=-1)


def normalised_over_whole_matrix(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    kernel = torch.exp(-((queries[:, None] - keys) ** 2) / (2 * width**2))
    weights = kernel / kernel.sum()  # divided by the total of all kernel values
    return (weights * values).sum(dim=-1), weights


def keys_minus_queries_grid(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    # keys down the rows, queries across, softmax down each column, then turn it round
    scores = -((keys.unsqueeze(-1) - queries) ** 2) / (2 * width**2)
    weights = torch.softmax(scores, dim=0).T  # right for shared keys (T_k,), not for (T_q, T_k)
    return (weights * values).sum(dim=-1), weights


def log_of_weights_returned(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    log_weights = torch.log_softmax(-((queries[:, None] - keys) ** 2) / (2 * width**2), dim=-1)
    prediction = (log_weights.exp() * values).sum(dim=-1)
    return prediction, log_weights  # the log-weights, which are more stable to look at


# --- correct variants -------------------------------------------------------------------------


def logsumexp_weights(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -0.5 * ((queries.unsqueeze(1) - keys) / width) ** 2  # (T_q, T_k)
    weights = torch.exp(scores - torch.logsumexp(scores, dim=1, keepdim=True))
    return torch.sum(weights * values, dim=1), weights


def one_query_at_a_time(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    preds, rows = [], []
    for n, q in enumerate(queries):
        k = keys if keys.dim() == 1 else keys[n]
        v = values if values.dim() == 1 else values[n]
        w = torch.softmax(-((q - k) ** 2) / (2 * width**2), dim=0)  # (T_k,)
        preds.append((w * v).sum())
        rows.append(w)
    return torch.stack(preds), torch.stack(rows)


def expanded_and_einsum(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    T_q = queries.shape[0]
    keys = keys.expand(T_q, -1) if keys.dim() == 1 else keys  # (T_q, T_k)
    values = values.expand(T_q, -1) if values.dim() == 1 else values
    variance = torch.as_tensor(width, dtype=queries.dtype) ** 2  # keeps the graph of a tensor
    weights = torch.softmax((queries[:, None] - keys).square().div(-2 * variance), dim=-1)
    return torch.einsum("qk,qk->q", weights, values), weights


CASES = [
    BlindCase(
        CHECK,
        "width_not_squared",
        width_not_squared,
        "mistake",
        "I divided the squared distance by 2 * width instead of 2 * width ** 2.",
    ),
    BlindCase(
        CHECK,
        "two_width_squared",
        two_width_squared,
        "mistake",
        "I wrote (2 * width) ** 2 in the denominator, i.e. 4 sigma^2 instead of 2 sigma^2.",
    ),
    BlindCase(
        CHECK,
        "absolute_distance",
        absolute_distance,
        "mistake",
        "I used the absolute distance |q - k| instead of the squared distance in the score.",
    ),
    BlindCase(
        CHECK,
        "matmul_with_values",
        matmul_with_values,
        "mistake",
        "I took weights @ values for the prediction, which only works when the values are shared, "
        "not when each query has its own row of values.",
    ),
    BlindCase(
        CHECK,
        "width_through_torch_tensor",
        width_through_torch_tensor,
        "mistake",
        "I wrapped width in torch.tensor(), which copies it out of the autograd graph.",
    ),
    BlindCase(
        CHECK,
        "exp_without_max_shift",
        exp_without_max_shift,
        "mistake",
        "I normalised exp of the scores by hand without subtracting the maximum, so a query far "
        "from every key gets 0/0 = NaN at a small width.",
    ),
    BlindCase(
        CHECK,
        "returns_weights_first",
        returns_weights_first,
        "mistake",
        "I returned (weights, predictions) instead of (predictions, weights).",
    ),
    BlindCase(
        CHECK,
        "normalised_over_whole_matrix",
        normalised_over_whole_matrix,
        "mistake",
        "I divided the kernel values by their sum over the whole matrix instead of each query's "
        "row.",
    ),
    BlindCase(
        CHECK,
        "keys_minus_queries_grid",
        keys_minus_queries_grid,
        "mistake",
        "I built the grid with keys down the rows and took the softmax over dim 0, then "
        "transposed; that only lines up for shared keys, not for one row of keys per query.",
    ),
    BlindCase(
        CHECK,
        "log_of_weights_returned",
        log_of_weights_returned,
        "mistake",
        "I returned the log-softmax (log-weights) as the weights.",
    ),
    BlindCase(
        CHECK,
        "logsumexp_weights",
        logsumexp_weights,
        "correct",
        "I wrote the score as -0.5 * ((q - k) / width) ** 2 and normalised with logsumexp.",
    ),
    BlindCase(
        CHECK,
        "one_query_at_a_time",
        one_query_at_a_time,
        "correct",
        "I looped over the queries, picking each one's row of keys and values when they have one.",
    ),
    BlindCase(
        CHECK,
        "expanded_and_einsum",
        expanded_and_einsum,
        "correct",
        "I expanded shared keys and values to one row per query and summed with einsum.",
    ),
]
