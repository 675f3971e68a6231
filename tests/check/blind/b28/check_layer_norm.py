"""Blind set B28, check_layer_norm (chapter 11): LayerNorm without gamma and beta as readers
write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_layer_norm"


# ---------------------------------------------------------------- mistakes


def ln_eps_outside_sqrt(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    std = x.var(-1, unbiased=False, keepdim=True).sqrt()
    return (x - mean) / (std + 1e-5)


def ln_no_eps(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / var.sqrt()


def ln_not_centred(x: Tensor) -> Tensor:
    var = x.var(-1, unbiased=False, keepdim=True)
    return x / torch.sqrt(var + 1e-5)  # mean 0 comes from the variance


def ln_second_moment(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = (x**2).mean(-1, keepdim=True)  # sigma^2 = mean of the squares
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_over_positions_and_features(x: Tensor) -> Tensor:
    mean = x.mean(dim=(-2, -1), keepdim=True)  # the whole sentence, like nn.LayerNorm(x.shape[1:])
    var = x.var(dim=(-2, -1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_mean_without_keepdim(x: Tensor) -> Tensor:
    mean = x.mean(-1)  # (B, T)
    var = x.var(-1, unbiased=False)
    return (x - mean[..., None]) / torch.sqrt(var + 1e-5)[None]


def ln_divide_by_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / (var + 1e-5)


def ln_eps_bert(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-12)  # BERT's eps


def ln_in_place(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return x.sub_(mean).div_(torch.sqrt(var + 1e-5))  # no extra memory


def ln_over_batch_and_positions(x: Tensor) -> Tensor:
    mean = x.mean(dim=(0, 1), keepdim=True)
    var = x.var(dim=(0, 1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_std_then_eps_squared(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    std = x.std(-1, keepdim=True)  # standard deviation
    return (x - mean) / torch.sqrt(std**2 + 1e-5)


def ln_range_scaled(x: Tensor) -> Tensor:
    centred = x - x.mean(-1, keepdim=True)
    spread = centred.abs().mean(-1, keepdim=True)  # the average distance from the mean
    return centred / (spread + 1e-5)


# ---------------------------------------------------------------- correct variants


def ln_functional(x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[-1:], eps=1e-5)


def ln_var_mean_rsqrt(x: Tensor, eps: float = 1e-5) -> Tensor:
    var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    return (x - mean) * torch.rsqrt(var + eps)


def ln_by_hand_sums(x: Tensor) -> Tensor:
    D = x.shape[-1]
    mu = x.sum(-1, keepdim=True) / D
    sigma2 = ((x - mu) ** 2).sum(-1, keepdim=True) / D
    return (x - mu) / (sigma2 + 1e-5) ** 0.5


def ln_loop_over_tokens(x: Tensor) -> Tensor:
    flat = x.reshape(-1, x.shape[-1])
    rows = []
    for v in flat:
        mu = v.mean()
        var = ((v - mu) ** 2).mean()
        rows.append((v - mu) / torch.sqrt(var + 1e-5))
    return torch.stack(rows).reshape(x.shape)


CASES = [
    BlindCase(
        CHECK,
        "eps_outside_sqrt",
        ln_eps_outside_sqrt,
        "mistake",
        "I added eps to the standard deviation, (x - mu) / (std + eps), not inside the root.",
    ),
    BlindCase(
        CHECK,
        "no_eps",
        ln_no_eps,
        "mistake",
        "I left eps out: (x - mu) / sqrt(var).",
    ),
    BlindCase(
        CHECK,
        "mean_not_subtracted",
        ln_not_centred,
        "mistake",
        "I divided x by the standard deviation but did not subtract the mean.",
    ),
    BlindCase(
        CHECK,
        "variance_from_raw_squares",
        ln_second_moment,
        "mistake",
        "I computed the variance as the mean of x**2, without centring first.",
    ),
    BlindCase(
        CHECK,
        "over_positions_and_features",
        ln_over_positions_and_features,
        "mistake",
        "I normalized each sentence over its positions and features together, like "
        "nn.LayerNorm(x.shape[1:]).",
    ),
    BlindCase(
        CHECK,
        "statistics_without_keepdim",
        ln_mean_without_keepdim,
        "mistake",
        "I took the mean and variance without keepdim and re-added the axes by hand, the "
        "variance's in front.",
    ),
    BlindCase(
        CHECK,
        "divided_by_variance",
        ln_divide_by_variance,
        "mistake",
        "I divided by var + eps instead of its square root.",
    ),
    BlindCase(
        CHECK,
        "eps_1e_12",
        ln_eps_bert,
        "mistake",
        "I used eps = 1e-12, as in BERT, instead of 1e-5.",
    ),
    BlindCase(
        CHECK,
        "in_place",
        ln_in_place,
        "mistake",
        "I normalized in place with x.sub_(mean).div_(std), which overwrites the caller's x.",
    ),
    BlindCase(
        CHECK,
        "over_batch_and_positions",
        ln_over_batch_and_positions,
        "mistake",
        "I averaged over dims (0, 1), each feature over the batch and positions.",
    ),
    BlindCase(
        CHECK,
        "std_default_correction",
        ln_std_then_eps_squared,
        "mistake",
        "I took x.std(-1) and squared it back, forgetting that std divides by D - 1.",
    ),
    BlindCase(
        CHECK,
        "mean_absolute_deviation",
        ln_range_scaled,
        "mistake",
        "I divided by the mean absolute distance from the mean instead of the standard deviation.",
    ),
    BlindCase(
        CHECK,
        "functional_layer_norm",
        ln_functional,
        "correct",
        "F.layer_norm over the last axis with eps=1e-5 and no weight or bias.",
    ),
    BlindCase(
        CHECK,
        "var_mean_rsqrt",
        ln_var_mean_rsqrt,
        "correct",
        "torch.var_mean with correction=0 and rsqrt; eps as an argument that defaults to 1e-5.",
    ),
    BlindCase(
        CHECK,
        "sums_by_hand",
        ln_by_hand_sums,
        "correct",
        "Sums divided by D for the mean and the variance, and ** 0.5 for the root.",
    ),
    BlindCase(
        CHECK,
        "loop_over_tokens",
        ln_loop_over_tokens,
        "correct",
        "Each token vector normalized in a loop, then reshaped back.",
    ),
]
