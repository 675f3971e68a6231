"""Blind set B11, check_layer_norm (chapter 11): LayerNorm without gamma and beta as readers write
it."""

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
    var = x.var(-1, keepdim=True)  # the default
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_std_default(x: Tensor, eps: float = 1e-5) -> Tensor:
    std = torch.sqrt(x.std(dim=-1, keepdim=True) ** 2 + eps)
    return (x - x.mean(dim=-1, keepdim=True)) / std


def ln_over_time(x: Tensor) -> Tensor:
    mean = x.mean(1, keepdim=True)  # over the sequence
    var = x.var(1, unbiased=False, keepdim=True)
    return (x - mean) / (var + 1e-5).sqrt()


def ln_whole_sample(x: Tensor) -> Tensor:
    mean = x.mean(dim=(-2, -1), keepdim=True)  # the whole layer: every position and feature
    var = x.var(dim=(-2, -1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_divide_by_var(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / (var + 1e-5)


def ln_no_centering(x: Tensor) -> Tensor:
    var = x.var(-1, unbiased=False, keepdim=True)
    return x / torch.sqrt(var + 1e-5)


def ln_rms(x: Tensor) -> Tensor:
    rms = torch.sqrt((x**2).mean(-1, keepdim=True) + 1e-5)
    return (x - x.mean(-1, keepdim=True)) / rms  # centered, divided by the root mean square


def ln_no_keepdim(x: Tensor) -> Tensor:
    mean = x.mean(-1)
    var = x.var(-1, unbiased=False)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_in_place(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    x -= mean  # no extra memory
    x /= torch.sqrt(var + 1e-5)
    return x


def ln_large_eps(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-1)  # a safe epsilon


# ---------------------------------------------------------------- correct variants


def ln_functional(x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[-1:], eps=1e-5)


def ln_rsqrt_correction(x: Tensor, eps: float = 1e-5) -> Tensor:
    centered = x - x.mean(dim=-1, keepdim=True)
    var = centered.pow(2).mean(dim=-1, keepdim=True)
    return centered * torch.rsqrt(var + eps)


def ln_moments(x: Tensor) -> Tensor:
    var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    out = x - mean
    out.div_((var + 1e-5).sqrt())  # in place on my own tensor
    return out


def ln_second_moment(x: Tensor) -> Tensor:
    D = x.shape[-1]
    mean = x.sum(-1, keepdim=True) / D
    var = (x * x).sum(-1, keepdim=True) / D - mean**2
    return (x - mean) / (var + 1e-5) ** 0.5


CASES = [
    BlindCase(
        CHECK,
        "batch_norm_axes",
        ln_batch_axes,
        "mistake",
        "I normalized each feature over the batch and positions (0, 1), BatchNorm's axes.",
    ),
    BlindCase(
        CHECK,
        "unbiased_variance",
        ln_unbiased,
        "mistake",
        "I used x.var(-1) with its default, the unbiased variance.",
    ),
    BlindCase(
        CHECK,
        "unbiased_std_squared",
        ln_std_default,
        "mistake",
        "I took x.std(-1) (unbiased by default) and squared it under the square root with eps.",
    ),
    BlindCase(
        CHECK,
        "over_positions",
        ln_over_time,
        "mistake",
        "I normalized over dim=1, the positions, instead of the features.",
    ),
    BlindCase(
        CHECK,
        "over_whole_sequence",
        ln_whole_sample,
        "mistake",
        "I normalized each sentence over all its positions and features at once.",
    ),
    BlindCase(
        CHECK,
        "divide_by_variance",
        ln_divide_by_var,
        "mistake",
        "I divided by the variance plus eps, forgetting the square root.",
    ),
    BlindCase(
        CHECK,
        "no_mean_subtraction",
        ln_no_centering,
        "mistake",
        "I divided by the standard deviation but never subtracted the mean.",
    ),
    BlindCase(
        CHECK,
        "root_mean_square",
        ln_rms,
        "mistake",
        "I divided the centered x by the root mean square of x, not its standard deviation.",
    ),
    BlindCase(
        CHECK,
        "no_keepdim",
        ln_no_keepdim,
        "mistake",
        "I took the mean and variance without keepdim=True, so they do not broadcast back.",
    ),
    BlindCase(
        CHECK,
        "in_place_on_input",
        ln_in_place,
        "mistake",
        "I used x -= mean and x /= std to save memory, which overwrites the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "eps_too_large",
        ln_large_eps,
        "mistake",
        "I used eps = 0.1 to be safe.",
    ),
    BlindCase(
        CHECK,
        "F_layer_norm",
        ln_functional,
        "correct",
        "F.layer_norm over the last axis with no weight or bias.",
    ),
    BlindCase(
        CHECK,
        "rsqrt_with_eps_argument",
        ln_rsqrt_correction,
        "correct",
        "The variance as the mean of the squared centered values, torch.rsqrt; eps as an argument.",
    ),
    BlindCase(
        CHECK,
        "var_mean_in_place_on_copy",
        ln_moments,
        "correct",
        "torch.var_mean with correction=0, then div_ in place on the centered copy.",
    ),
    BlindCase(
        CHECK,
        "second_moment_formula",
        ln_second_moment,
        "correct",
        "The variance as E[x^2] - E[x]^2, sums divided by D.",
    ),
]
