"""Blind set B7, check_nadaraya_watson (chapter 5): Gaussian kernel regression as attention."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_nadaraya_watson"


# ---------------------------------------------------------------- mistakes


def nw_two_inside_square(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * width) ** 2  # (2 sigma)^2
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(dim=-1), weights


def nw_laplace_kernel(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -(queries.unsqueeze(-1) - keys).abs() / (2 * width**2)  # |q - k| as the distance
    weights = torch.softmax(scores, dim=-1)
    return (weights * values).sum(dim=-1), weights


def nw_shared_keys_only(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    diff = queries[:, None] - keys[None, :]  # (T_q, 1) - (1, T_k)
    weights = torch.softmax(-(diff**2) / (2 * width**2), dim=-1)
    return (weights * values).sum(dim=-1), weights


def nw_matmul_prediction(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2), dim=-1)
    return weights @ values, weights  # (T_q, T_k) @ (T_k,) -> (T_q,)


def nw_sum_over_queries(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2), dim=-1)
    return (weights * values).sum(dim=0), weights


def nw_returns_weights_first(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(-((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2), dim=-1)
    return weights, (weights * values).sum(dim=-1)


def nw_width_wrapped_in_tensor(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    width = torch.tensor(width, dtype=queries.dtype)  # floats and tensors alike
    weights = torch.softmax(-((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2), dim=-1)
    return (weights * values).sum(dim=-1), weights


def nw_unnormalized_kernel(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    d2 = (queries.unsqueeze(-1) - keys) ** 2
    weights = torch.exp(-d2 / (2 * width**2)) / (math.sqrt(2 * math.pi) * width)  # Gaussian pdf
    return (weights * values).sum(dim=-1), weights


def nw_normalize_over_all(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    kernel = torch.exp(-((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2))
    weights = kernel / kernel.sum()  # normalize the kernel
    return (weights * values).sum(dim=-1), weights


def nw_log_weights(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    log_w = torch.log_softmax(-((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2), dim=-1)
    return (log_w.exp() * values).sum(dim=-1), log_w  # log weights for stability


def nw_unsqueeze_in_place(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    queries.unsqueeze_(-1)  # (T_q, 1) so that it broadcasts against the keys
    weights = torch.softmax(-((queries - keys) ** 2) / (2 * width**2), dim=-1)
    return (weights * values).sum(dim=-1), weights


# ---------------------------------------------------------------- correct variants


def nw_keys_minus_queries(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -0.5 * ((keys - queries[:, None]) / width) ** 2  # the square hides the sign
    weights = scores.softmax(-1)
    return torch.einsum("qk,qk->q", weights, values.expand_as(weights)), weights


def nw_logsumexp(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    scores = -torch.square(queries.view(-1, 1) - keys) / (2 * width * width)
    weights = torch.exp(scores - torch.logsumexp(scores, dim=1, keepdim=True))
    return torch.sum(weights * values, dim=1), weights


def nw_float64_inside(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    dtype = values.dtype
    q, k, v = queries.double(), keys.double(), values.double()
    w = width.double() if isinstance(width, Tensor) else float(width)
    weights = torch.softmax(-((q[:, None] - k) ** 2) / (2 * w**2), dim=-1)
    return (weights * v).sum(-1).to(dtype), weights.to(dtype)


def nw_explicit_kernel_stable(
    queries: Tensor, keys: Tensor, values: Tensor, width: float | Tensor = 1.0
) -> tuple[Tensor, Tensor]:
    """K / sum K with the largest score subtracted first, so nothing underflows."""
    scores = -((queries.unsqueeze(-1) - keys) ** 2) / (2 * width**2)
    kernel = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
    weights = kernel / kernel.sum(dim=-1, keepdim=True)
    return (weights * values).sum(-1), weights


CASES = [
    BlindCase(
        check=CHECK,
        name="two_inside_the_square",
        code=nw_two_inside_square,
        kind="mistake",
        what="I divided by (2 * width) ** 2 instead of 2 * width ** 2, so the 2 got squared.",
    ),
    BlindCase(
        check=CHECK,
        name="laplace_distance",
        code=nw_laplace_kernel,
        kind="mistake",
        what="I used the absolute distance |q - k| instead of its square (the Laplace-style "
        "score of exercise 1 with the Gaussian's denominator).",
    ),
    BlindCase(
        check=CHECK,
        name="broadcast_only_shared_keys",
        code=nw_shared_keys_only,
        kind="mistake",
        what="I wrote queries[:, None] - keys[None, :], which is right for shared keys (T_k,) "
        "but adds a leading axis when the keys come one row per query (T_q, T_k).",
    ),
    BlindCase(
        check=CHECK,
        name="prediction_by_matmul",
        code=nw_matmul_prediction,
        kind="mistake",
        what="I computed the prediction as weights @ values, which is right for shared values "
        "(T_k,) but a matrix product when values come one row per query.",
    ),
    BlindCase(
        check=CHECK,
        name="sum_over_wrong_axis",
        code=nw_sum_over_queries,
        kind="mistake",
        what="I summed weights * values over dim=0 (the queries) instead of over the keys.",
    ),
    BlindCase(
        check=CHECK,
        name="returns_weights_first",
        code=nw_returns_weights_first,
        kind="mistake",
        what="I returned (weights, predictions) instead of (predictions, weights).",
    ),
    BlindCase(
        check=CHECK,
        name="width_rewrapped_with_torch_tensor",
        code=nw_width_wrapped_in_tensor,
        kind="mistake",
        what="I wrapped the width in torch.tensor(width) so floats and tensors both work; for a "
        "tensor width that makes a copy outside autograd, so its gradient is lost.",
    ),
    BlindCase(
        check=CHECK,
        name="gaussian_pdf_not_normalized",
        code=nw_unnormalized_kernel,
        kind="mistake",
        what="I used the Gaussian density exp(-d^2 / 2 sigma^2) / (sqrt(2 pi) sigma) as the "
        "weights, without dividing by the sum over the keys.",
    ),
    BlindCase(
        check=CHECK,
        name="kernel_normalized_over_everything",
        code=nw_normalize_over_all,
        kind="mistake",
        what="I normalized the kernel by kernel.sum() over all queries and keys instead of per "
        "query.",
    ),
    BlindCase(
        check=CHECK,
        name="returns_log_weights",
        code=nw_log_weights,
        kind="mistake",
        what="I used log_softmax for stability and returned the log-weights as the weights "
        "(the predictions are right).",
    ),
    BlindCase(
        check=CHECK,
        name="unsqueeze_queries_in_place",
        code=nw_unsqueeze_in_place,
        kind="mistake",
        what="I made the queries a column with queries.unsqueeze_(-1), in place, which changes "
        "the caller's tensor to (T_q, 1); a second call with the same queries breaks.",
    ),
    BlindCase(
        check=CHECK,
        name="keys_minus_queries_einsum",
        code=nw_keys_minus_queries,
        kind="correct",
        what="I wrote the score as -0.5 ((k - q) / width)^2 and summed with einsum after "
        "expanding the values to the weights' shape.",
    ),
    BlindCase(
        check=CHECK,
        name="logsumexp_normalization",
        code=nw_logsumexp,
        kind="correct",
        what="I normalized with exp(scores - logsumexp(scores)) instead of torch.softmax.",
    ),
    BlindCase(
        check=CHECK,
        name="float64_inside",
        code=nw_float64_inside,
        kind="correct",
        what="I computed everything in float64 (keeping a tensor width in the graph) and cast "
        "the results back.",
    ),
    BlindCase(
        check=CHECK,
        name="explicit_kernel_max_subtracted",
        code=nw_explicit_kernel_stable,
        kind="correct",
        what="I wrote the kernel K and K / sum K by hand, subtracting each row's largest score "
        "first.",
    ),
]
