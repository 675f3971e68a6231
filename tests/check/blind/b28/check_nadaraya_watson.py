"""Blind set B28, check_nadaraya_watson (chapter 5): Gaussian kernel regression as attention
pooling, as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_nadaraya_watson"


def _diff(queries: Tensor, keys: Tensor) -> Tensor:
    """q - k for every query and key: (T_q, T_k), for shared or per-query keys."""
    return queries.unsqueeze(-1) - keys


# ---------------------------------------------------------------- mistakes


def nw_matmul_values(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return weights @ values, weights  # (T_q, T_k) @ (T_k,) -> (T_q,)


def nw_width_in_parentheses(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -(_diff(queries, keys) ** 2) / (2 * width) ** 2  # 2 sigma squared
    weights = scores.softmax(dim=-1)
    return (weights * values).sum(-1), weights


def nw_normalised_by_total(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    kernel = torch.exp(-(_diff(queries, keys) ** 2) / (2 * width**2))  # K(q - k)
    weights = kernel / kernel.sum()  # divide by the sum of the kernel
    return (weights * values).sum(-1), weights


def nw_sum_without_keepdim(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    kernel = torch.exp(-(_diff(queries, keys) ** 2) / (2 * width**2))
    weights = kernel / kernel.sum(dim=-1)  # the sum over j of K(q - k_j)
    return (weights * values).sum(-1), weights


def nw_weighted_mean(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return (weights * values).mean(dim=-1), weights  # the weighted average of the values


def nw_weights_times_keys(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return (weights * keys).sum(dim=-1), weights


def nw_returns_weights_first(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return weights, (weights * values).sum(dim=-1)


def nw_unsqueeze_in_place(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    queries.unsqueeze_(-1)  # (T_q, 1) so it broadcasts against the keys
    weights = torch.softmax(-((queries - keys) ** 2) / (2 * width**2), dim=-1)
    return (weights * values).sum(dim=-1), weights


def nw_width_rewrapped(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    width = torch.tensor(width, dtype=queries.dtype)  # so that floats and tensors both work
    weights = torch.softmax(-(_diff(queries, keys) ** 2) / (2 * width**2), dim=-1)
    return (weights * values).sum(dim=-1), weights


def nw_half_over_width(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    # K(u) = exp(-u^2 / (2 sigma^2)), written as a power of e with the kernel's 1/2 outside
    weights = torch.softmax(-0.5 * _diff(queries, keys).pow(2) / width, dim=-1)
    return (weights * values).sum(dim=-1), weights


def nw_keys_not_broadcast(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    diff = queries[:, None] - keys[None, :]  # (T_q, 1) - (1, T_k)
    weights = torch.softmax(-(diff**2) / (2 * width**2), dim=-1)
    return (weights * values).sum(dim=-1), weights


def nw_distance_from_mean_key(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    centred = keys - keys.mean(dim=-1, keepdim=True)  # keys centred first, for stability
    weights = torch.softmax(-(_diff(queries, centred) ** 2) / (2 * width**2), dim=-1)
    return (weights * values).sum(dim=-1), weights


# ---------------------------------------------------------------- correct variants


def nw_loop_over_queries(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    preds, rows = [], []
    for j, q in enumerate(queries):
        k = keys if keys.dim() == 1 else keys[j]
        v = values if values.dim() == 1 else values[j]
        w = torch.softmax(-((q - k) ** 2) / (2 * width**2), dim=0)  # (T_k,)
        preds.append((w * v).sum())
        rows.append(w)
    return torch.stack(preds), torch.stack(rows)


def nw_logsumexp(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -0.5 * ((queries[..., None] - keys) / width) ** 2  # same as -(q-k)^2 / (2 s^2)
    weights = torch.exp(scores - torch.logsumexp(scores, dim=-1, keepdim=True))
    return torch.einsum("qk,qk->q", weights, values.expand_as(weights)), weights


def nw_stable_kernel(
    queries: Tensor,
    keys: Tensor,
    values: Tensor,
    width: float | Tensor = 1.0,
    return_scores: bool = False,
) -> tuple[Tensor, Tensor]:
    """The kernel formula with the largest score subtracted first; an extra flag with a default."""
    scores = -torch.square(queries.unsqueeze(1) - keys) / (2 * width * width)
    kernel = torch.exp(scores - scores.amax(dim=1, keepdim=True))
    weights = kernel / kernel.sum(dim=1, keepdim=True)
    if return_scores:
        return scores, weights
    return (weights * values).sum(1), weights


def nw_expanded_matmul(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    T_q = queries.shape[0]
    keys2 = keys.expand(T_q, -1) if keys.dim() == 1 else keys  # (T_q, T_k)
    values2 = values.expand(T_q, -1) if values.dim() == 1 else values
    weights = (-(queries[:, None] - keys2).pow(2) / (2 * width**2)).softmax(-1)
    preds = torch.bmm(weights.unsqueeze(1), values2.unsqueeze(-1)).reshape(T_q)
    return preds, weights


CASES = [
    BlindCase(
        CHECK,
        "weights_matmul_values",
        nw_matmul_values,
        "mistake",
        "I wrote weights @ values for the weighted sum, which works for shared values but not "
        "for one row of values per query.",
    ),
    BlindCase(
        CHECK,
        "two_sigma_squared",
        nw_width_in_parentheses,
        "mistake",
        "I divided by (2 * width) ** 2, i.e. 4 sigma^2, instead of 2 * width ** 2.",
    ),
    BlindCase(
        CHECK,
        "normalised_over_everything",
        nw_normalised_by_total,
        "mistake",
        "I wrote the kernel formula by hand and divided by kernel.sum(), the sum over all "
        "queries and keys, not per query.",
    ),
    BlindCase(
        CHECK,
        "row_sum_without_keepdim",
        nw_sum_without_keepdim,
        "mistake",
        "I divided the kernel by kernel.sum(dim=-1) without keepdim=True, so it broadcasts "
        "along the wrong axis.",
    ),
    BlindCase(
        CHECK,
        "weighted_mean",
        nw_weighted_mean,
        "mistake",
        "I took .mean(-1) of weights * values instead of .sum(-1).",
    ),
    BlindCase(
        CHECK,
        "weights_times_keys",
        nw_weights_times_keys,
        "mistake",
        "I summed the weights times the keys instead of the values.",
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
        "unsqueeze_in_place",
        nw_unsqueeze_in_place,
        "mistake",
        "I used queries.unsqueeze_(-1), which reshapes the caller's queries to (T_q, 1).",
    ),
    BlindCase(
        CHECK,
        "width_rewrapped",
        nw_width_rewrapped,
        "mistake",
        "I wrapped width in torch.tensor(...) so floats and tensors both work, which copies a "
        "learnable width out of the graph.",
    ),
    BlindCase(
        CHECK,
        "half_over_width",
        nw_half_over_width,
        "mistake",
        "I wrote -0.5 * (q - k)**2 / width, forgetting to square the width after taking the "
        "1/2 out.",
    ),
    BlindCase(
        CHECK,
        "keys_always_shared",
        nw_keys_not_broadcast,
        "mistake",
        "I wrote queries[:, None] - keys[None, :], which only works when the keys are shared "
        "(T_k,).",
    ),
    BlindCase(
        CHECK,
        "keys_centred",
        nw_distance_from_mean_key,
        "mistake",
        "I centred the keys on their mean before taking the distances, for stability.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        nw_loop_over_queries,
        "correct",
        "A Python loop over the queries, one softmax over the keys each, stacked at the end.",
    ),
    BlindCase(
        CHECK,
        "logsumexp_einsum",
        nw_logsumexp,
        "correct",
        "Scores as -0.5 * ((q - k) / width)**2, weights as exp(scores - logsumexp), einsum for "
        "the sum.",
    ),
    BlindCase(
        CHECK,
        "stable_kernel_formula",
        nw_stable_kernel,
        "correct",
        "The kernel over its row sum, after subtracting the row's largest score; an extra "
        "return_scores flag that defaults to False.",
    ),
    BlindCase(
        CHECK,
        "expanded_bmm",
        nw_expanded_matmul,
        "correct",
        "Keys and values expanded to (T_q, T_k) and the weighted sum as a batched matmul.",
    ),
]
