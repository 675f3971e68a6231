"""Blind set B32, check_nadaraya_watson (chapter 5): Gaussian attention pooling as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_nadaraya_watson"


def _sq_dist(queries: Tensor, keys: Tensor) -> Tensor:
    return (queries.unsqueeze(-1) - keys) ** 2  # (T_q, T_k), shared or per-row keys


# ---------------------------------------------------------------- mistakes


def nw_width_times_precedence(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -_sq_dist(queries, keys) / 2 * width**2  # meant / (2 * width**2)
    weights = scores.softmax(dim=-1)
    return (weights * values).sum(-1), weights


def nw_unnormalized_kernel(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.exp(-_sq_dist(queries, keys) / (2 * width**2))  # the Gaussian kernel itself
    return (weights * values).sum(-1), weights


def nw_transposed_broadcast(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -((queries - keys.unsqueeze(-1)) ** 2) / (2 * width**2)  # (T_k, T_q) for shared keys
    weights = scores.softmax(dim=-1)
    return (weights * values.unsqueeze(-1)).sum(0), weights


def nw_returns_weights_first(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-_sq_dist(queries, keys) / (2 * width**2), dim=-1)
    return weights, (weights * values).sum(-1)


def nw_matmul_values(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-_sq_dist(queries, keys) / (2 * width**2), dim=-1)
    return weights @ values.T, weights  # fine for (T_k,); for (T_q, T_k) it mixes the rows


def nw_mean_not_sum(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-_sq_dist(queries, keys) / (2 * width**2), dim=-1)
    return (weights * values).mean(dim=-1), weights  # "weighted average"


def nw_unsqueeze_in_place(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    queries.unsqueeze_(-1)  # (T_q, 1), changes the caller's tensor
    weights = torch.softmax(-((queries - keys) ** 2) / (2 * width**2), dim=-1)
    return (weights * values).sum(-1), weights


def nw_hard_coded_width(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    sigma = 1.0  # the chapter's first example
    weights = torch.softmax(-_sq_dist(queries, keys) / (2 * sigma**2), dim=-1)
    return (weights * values).sum(-1), weights


def nw_sum_over_queries(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-_sq_dist(queries, keys) / (2 * width**2), dim=-1)
    return (weights * values).sum(dim=0), weights  # summed over the wrong axis


def nw_sqrt_of_width(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    variance = width  # read the width as the variance sigma^2
    weights = torch.softmax(-_sq_dist(queries, keys) / (2 * variance), dim=-1)
    return (weights * values).sum(-1), weights


def nw_laplace_kernel(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    dist = (queries.unsqueeze(-1) - keys).abs()  # |q - k| instead of its square
    weights = torch.softmax(-dist / (2 * width**2), dim=-1)
    return (weights * values).sum(-1), weights


def nw_softmax_over_queries(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-_sq_dist(queries, keys) / (2 * width**2), dim=0)
    return (weights * values).sum(-1), weights


def nw_width_as_float(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    w = float(width)  # works for floats and 0-d tensors alike
    weights = torch.softmax(-_sq_dist(queries, keys) / (2 * w * w), dim=-1)
    return (weights * values).sum(-1), weights


def nw_positive_sign(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(_sq_dist(queries, keys) / (2 * width**2), dim=-1)
    return (weights * values).sum(-1), weights


# ---------------------------------------------------------------- correct variants


def nw_manual_exp(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    keys = keys.expand(queries.shape[0], keys.shape[-1])  # (T_q, T_k) in both cases
    values = values.expand(queries.shape[0], values.shape[-1])
    scores = -0.5 * ((queries[:, None] - keys) / width) ** 2
    scores = scores - scores.max(dim=1, keepdim=True).values
    e = scores.exp()
    weights = e / e.sum(dim=1, keepdim=True)
    return torch.einsum("qk,qk->q", weights, values), weights


def nw_loop(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    preds, rows = [], []
    for i, q in enumerate(queries):
        k = keys if keys.dim() == 1 else keys[i]
        v = values if values.dim() == 1 else values[i]
        w = torch.softmax(-((q - k) ** 2) / (2 * width**2), dim=0)
        rows.append(w)
        preds.append((w * v).sum())
    return torch.stack(preds), torch.stack(rows)


def nw_float64_log_softmax(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    dtype = values.dtype
    width = width.double() if isinstance(width, Tensor) else float(width)
    d2 = (queries.double().unsqueeze(-1) - keys.double()).square()
    weights = torch.log_softmax(-d2 / (2 * width**2), dim=-1).exp()
    preds = (weights * values.double()).sum(-1)
    return preds.to(dtype), weights.to(dtype)


def nw_gaussian_density(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    """The full normal density as the kernel: its constant factor cancels in the softmax."""
    if isinstance(width, Tensor):
        const = -torch.log(width * math.sqrt(2 * math.pi))
    else:
        const = -math.log(width * math.sqrt(2 * math.pi))
    scores = const - _sq_dist(queries, keys) / (2 * width**2)
    weights = scores.softmax(-1)
    return (weights * values).sum(-1), weights


CASES = [
    BlindCase(
        CHECK,
        "precedence_times_width_sq",
        nw_width_times_precedence,
        "mistake",
        "I wrote -d**2 / 2 * width**2, which multiplies by width^2 instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "unnormalized_kernel",
        nw_unnormalized_kernel,
        "mistake",
        "I used exp(score) as the weights and forgot to divide by their sum.",
    ),
    BlindCase(
        CHECK,
        "transposed_broadcast",
        nw_transposed_broadcast,
        "mistake",
        "I broadcast queries against keys.unsqueeze(-1), getting (T_k, T_q) scores with the "
        "softmax over the queries.",
    ),
    BlindCase(
        CHECK,
        "weights_first",
        nw_returns_weights_first,
        "mistake",
        "I returned (weights, predictions).",
    ),
    BlindCase(
        CHECK,
        "matmul_values",
        nw_matmul_values,
        "mistake",
        "I took weights @ values.T, which is right for shared values but mixes rows for "
        "per-query values.",
    ),
    BlindCase(
        CHECK,
        "mean_not_sum",
        nw_mean_not_sum,
        "mistake",
        "I took the mean of weights * values instead of the sum.",
    ),
    BlindCase(
        CHECK,
        "unsqueeze_in_place",
        nw_unsqueeze_in_place,
        "mistake",
        "I used queries.unsqueeze_(-1), which reshapes the caller's queries.",
    ),
    BlindCase(
        CHECK,
        "hard_coded_width",
        nw_hard_coded_width,
        "mistake",
        "I wrote sigma = 1.0 inside from the chapter's example and ignored the width argument.",
    ),
    BlindCase(
        CHECK,
        "sum_over_queries",
        nw_sum_over_queries,
        "mistake",
        "I summed weights * values over dim=0 instead of over the keys.",
    ),
    BlindCase(
        CHECK,
        "width_as_variance",
        nw_sqrt_of_width,
        "mistake",
        "I read the width as the variance and divided by 2 * width, not 2 * width^2.",
    ),
    BlindCase(
        CHECK,
        "abs_distance",
        nw_laplace_kernel,
        "mistake",
        "I used |q - k| instead of (q - k)^2 in the score.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        nw_softmax_over_queries,
        "mistake",
        "I took the softmax over dim=0, the queries.",
    ),
    BlindCase(
        CHECK,
        "width_to_float",
        nw_width_as_float,
        "mistake",
        "I converted the width with float(width), which cuts a learnable width out of autograd.",
    ),
    BlindCase(
        CHECK,
        "positive_sign",
        nw_positive_sign,
        "mistake",
        "I dropped the minus sign, so farther keys get more weight.",
    ),
    BlindCase(
        CHECK,
        "manual_exp_expand",
        nw_manual_exp,
        "correct",
        "Keys and values expanded to (T_q, T_k), max subtracted, exp and divide; einsum.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        nw_loop,
        "correct",
        "A Python loop over the queries, one softmax per row, then stacked.",
    ),
    BlindCase(
        CHECK,
        "float64_log_softmax",
        nw_float64_log_softmax,
        "correct",
        "float64 inside, exp(log_softmax), cast back to the values' dtype.",
    ),
    BlindCase(
        CHECK,
        "normal_density_constant",
        nw_gaussian_density,
        "correct",
        "The score includes the normal density's -log(sigma sqrt(2 pi)), which cancels.",
    ),
]
