"""Blind set B21, check_layer_norm (chapter 11): LayerNorm without gamma and beta."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_layer_norm"


# ---------------------------------------------------------------- mistakes


def ln_batch_axes(x: Tensor) -> Tensor:
    mean = x.mean(dim=(0, 1), keepdim=True)
    var = x.var(dim=(0, 1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_unbiased(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, keepdim=True)  # torch's default
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_global_mean(x: Tensor) -> Tensor:
    mean = x.mean()  # forgot the dim here
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_time_axis(x: Tensor) -> Tensor:
    mean = x.mean(1, keepdim=True)
    var = x.var(1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_divides_by_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / (var + 1e-5)


def ln_not_centered(x: Tensor) -> Tensor:
    var = x.var(-1, unbiased=False, keepdim=True)
    return x / torch.sqrt(var + 1e-5)


def ln_no_keepdim(x: Tensor) -> Tensor:
    mean = x.mean(-1)
    var = x.var(-1, unbiased=False)
    return (x - mean[..., None]) / torch.sqrt(var + 1e-5)  # forgot to unsqueeze var


def ln_whole_sequence(x: Tensor) -> Tensor:
    mean = x.mean(dim=(-2, -1), keepdim=True)  # the whole layer of a sample
    var = x.var(dim=(-2, -1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_in_place(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return x.sub_(mean).div_(torch.sqrt(var + 1e-5))


def ln_second_moment(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = (x**2).mean(-1, keepdim=True)  # E[x^2]
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_global_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(unbiased=False)  # forgot the dim here
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_returns_stats(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5), mean, var


# ---------------------------------------------------------------- correct variants


def ln_functional(x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[-1:], eps=1e-5)


def ln_rsqrt(x: Tensor, eps: float = 1e-5) -> Tensor:
    centered = x - x.mean(dim=-1, keepdim=True)
    var = (centered * centered).mean(dim=-1, keepdim=True)
    return centered * torch.rsqrt(var + eps)


def ln_var_mean(x: Tensor) -> Tensor:
    var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
    return (x - mean) / (var + 1e-5).sqrt()


def ln_float64_inside(x: Tensor) -> Tensor:
    y = x.double()
    mu = y.mean(-1, keepdim=True)
    sigma2 = ((y - mu) ** 2).sum(-1, keepdim=True) / y.shape[-1]
    return ((y - mu) / torch.sqrt(sigma2 + 1e-5)).to(x.dtype)


CASES = [
    BlindCase(
        CHECK,
        "batch_norm_axes",
        ln_batch_axes,
        "mistake",
        "I averaged over dims (0, 1), batch and time, like BatchNorm.",
    ),
    BlindCase(
        CHECK, "unbiased_variance", ln_unbiased, "mistake", "I used x.var's default (unbiased)."
    ),
    BlindCase(
        CHECK,
        "global_mean",
        ln_global_mean,
        "mistake",
        "I forgot the dim in x.mean, so I subtract the mean of the whole tensor.",
    ),
    BlindCase(
        CHECK,
        "time_axis",
        ln_time_axis,
        "mistake",
        "I normalized over dim 1 (the positions) instead of the features.",
    ),
    BlindCase(
        CHECK,
        "divides_by_variance",
        ln_divides_by_variance,
        "mistake",
        "I divided by the variance instead of its square root.",
    ),
    BlindCase(
        CHECK,
        "not_centered",
        ln_not_centered,
        "mistake",
        "I forgot to subtract the mean, only divided by the std.",
    ),
    BlindCase(
        CHECK,
        "variance_without_keepdim",
        ln_no_keepdim,
        "mistake",
        "I took mean and var without keepdim and only unsqueezed the mean.",
    ),
    BlindCase(
        CHECK,
        "whole_sequence",
        ln_whole_sequence,
        "mistake",
        "I normalized over (T, D) together, the whole sample, instead of each position.",
    ),
    BlindCase(
        CHECK,
        "in_place",
        ln_in_place,
        "mistake",
        "I used sub_ and div_, which overwrite the caller's x.",
    ),
    BlindCase(
        CHECK,
        "second_moment_as_variance",
        ln_second_moment,
        "mistake",
        "I took the variance as mean(x^2), without subtracting the mean inside.",
    ),
    BlindCase(
        CHECK,
        "global_variance",
        ln_global_variance,
        "mistake",
        "I forgot the dim in x.var, so the variance is over the whole tensor.",
    ),
    BlindCase(
        CHECK,
        "returns_stats",
        ln_returns_stats,
        "mistake",
        "I returned (y, mean, var) to inspect them, not y alone.",
    ),
    BlindCase(CHECK, "functional", ln_functional, "correct", "F.layer_norm without weights."),
    BlindCase(
        CHECK,
        "rsqrt_eps_arg",
        ln_rsqrt,
        "correct",
        "Centred first, variance as the mean square of the centred x, torch.rsqrt; eps argument.",
    ),
    BlindCase(CHECK, "var_mean", ln_var_mean, "correct", "torch.var_mean with correction=0."),
    BlindCase(
        CHECK,
        "float64_inside",
        ln_float64_inside,
        "correct",
        "Computed in float64 and cast back to x's dtype.",
    ),
]
