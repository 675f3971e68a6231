"""Blind set B26, check_layer_norm (chapter 11): LayerNorm without gamma and beta as readers
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
    return (x - mean) / (std + 1e-5)  # eps keeps the division safe


def ln_no_eps(x: Tensor) -> Tensor:
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return (x - mean) / var.sqrt()


def ln_over_tokens_and_features(x: Tensor) -> Tensor:
    mean = x.mean(dim=(-2, -1), keepdim=True)  # each sentence's own statistics
    var = x.var(dim=(-2, -1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_divide_by_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / (var + 1e-5)  # to variance 1


def ln_no_keepdim(x: Tensor) -> Tensor:
    mean = x.mean(-1)
    var = x.var(-1, unbiased=False)
    return (x - mean.unsqueeze(-1)) / torch.sqrt(var + 1e-5)


def ln_sqrt_of_std(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    std = x.std(-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(std + 1e-5)  # eps inside the square root


def ln_rms(x: Tensor) -> Tensor:
    ms = x.pow(2).mean(-1, keepdim=True)  # the mean square
    return x / torch.sqrt(ms + 1e-5)


def ln_centre_only(x: Tensor) -> Tensor:
    return x - x.mean(-1, keepdim=True)  # each vector to mean 0


def ln_in_place(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return x.sub_(mean).div_(torch.sqrt(var + 1e-5))  # no extra memory


def ln_eps_bert(x: Tensor, eps: float = 1e-12) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps)  # BERT's eps


def ln_dim_1(x: Tensor) -> Tensor:
    mean = x.mean(1, keepdim=True)  # the features
    var = x.var(1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


# ---------------------------------------------------------------- correct variants


def ln_functional(x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[-1:], eps=1e-5)


def ln_var_mean_rsqrt(x: Tensor, eps: float = 1e-5) -> Tensor:
    var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
    return (x - mean) * torch.rsqrt(var + eps)


def ln_by_hand(x: Tensor) -> Tensor:
    D = x.shape[-1]
    mu = x.sum(dim=-1, keepdim=True) / D
    centred = x - mu
    sigma2 = (centred * centred).sum(dim=-1, keepdim=True) / D
    return centred / (sigma2 + 1e-5) ** 0.5


CASES = [
    BlindCase(
        CHECK,
        "eps_outside_sqrt",
        ln_eps_outside_sqrt,
        "mistake",
        "I added eps to the standard deviation instead of the variance.",
    ),
    BlindCase(
        CHECK,
        "no_eps",
        ln_no_eps,
        "mistake",
        "I left eps out, so a constant vector divides 0 by 0.",
    ),
    BlindCase(
        CHECK,
        "over_tokens_and_features",
        ln_over_tokens_and_features,
        "mistake",
        "I normalized each sentence over its tokens and features together, (T, D).",
    ),
    BlindCase(
        CHECK,
        "divide_by_variance",
        ln_divide_by_variance,
        "mistake",
        "I divided by the variance instead of its square root.",
    ),
    BlindCase(
        CHECK,
        "no_keepdim",
        ln_no_keepdim,
        "mistake",
        "I forgot keepdim=True on the variance, so it does not broadcast back.",
    ),
    BlindCase(
        CHECK,
        "sqrt_of_std",
        ln_sqrt_of_std,
        "mistake",
        "I took the standard deviation and then its square root again with eps.",
    ),
    BlindCase(
        CHECK,
        "rms_no_centering",
        ln_rms,
        "mistake",
        "I divided by the root mean square and never subtracted the mean, as RMSNorm does.",
    ),
    BlindCase(
        CHECK,
        "centre_only",
        ln_centre_only,
        "mistake",
        "I only subtracted the mean and forgot to divide by the standard deviation.",
    ),
    BlindCase(
        CHECK,
        "in_place",
        ln_in_place,
        "mistake",
        "I normalized x in place with sub_ and div_, which overwrites the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "eps_1e_12",
        ln_eps_bert,
        "mistake",
        "I used eps = 1e-12, as BERT does, instead of 1e-5.",
    ),
    BlindCase(
        CHECK,
        "dim_1",
        ln_dim_1,
        "mistake",
        "I took the statistics over dim=1, the features of a (B, D) batch, which is T for "
        "(B, T, D).",
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
        "torch.var_mean with correction=0 and rsqrt; eps as an argument defaulting to 1e-5.",
    ),
    BlindCase(
        CHECK,
        "sums_by_hand",
        ln_by_hand,
        "correct",
        "Mean and variance written as sums divided by D; the root as ** 0.5.",
    ),
]
