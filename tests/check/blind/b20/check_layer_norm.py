"""Blind set B20, check_layer_norm (chapter 11): LayerNorm without gamma and beta as readers
write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_layer_norm"


# ---------------------------------------------------------------- mistakes


def ln_batch_axes(x: Tensor) -> Tensor:
    mean = x.mean((0, 1), keepdim=True)
    var = x.var((0, 1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_unbiased(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, keepdim=True)  # torch's default variance
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_global_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(unbiased=False)  # the variance of x
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_no_sqrt(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / (var + 1e-5)


def ln_over_time_and_features(x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[1:])  # normalized_shape = (T, D)


def ln_over_time(x: Tensor) -> Tensor:
    mean = x.mean(1, keepdim=True)
    var = x.var(1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_std_unbiased(x: Tensor) -> Tensor:
    return (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.std(-1, keepdim=True) ** 2 + 1e-5)


def ln_centered_only(x: Tensor) -> Tensor:
    var = x.var(-1, unbiased=False, keepdim=True)
    return x / torch.sqrt(var + 1e-5)  # unit variance


def ln_inplace(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    x -= mean  # no extra memory
    x /= torch.sqrt(var + 1e-5)
    return x


def ln_rms(x: Tensor) -> Tensor:
    ms = (x**2).mean(-1, keepdim=True)  # the mean square
    return (x - x.mean(-1, keepdim=True)) / torch.sqrt(ms + 1e-5)


def ln_mean_of_squares_minus(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = (x**2).mean(-1, keepdim=True) - mean  # E[x^2] - E[x]
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_max_abs(x: Tensor) -> Tensor:
    centred = x - x.mean(-1, keepdim=True)
    return centred / (centred.abs().amax(-1, keepdim=True) + 1e-5)  # scale to [-1, 1]


# ---------------------------------------------------------------- correct variants


def ln_functional(x: Tensor) -> Tensor:
    return F.layer_norm(x, (x.shape[-1],), eps=1e-5)


def ln_module(x: Tensor) -> Tensor:
    norm = nn.LayerNorm(x.shape[-1], elementwise_affine=False).to(x.dtype)
    return norm(x)


def ln_var_mean_rsqrt(x: Tensor, eps: float = 1e-5) -> Tensor:
    var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    return (x - mean) * torch.rsqrt(var + eps)


def ln_manual_square(x: Tensor) -> Tensor:
    D = x.size(-1)
    mu = x.sum(dim=2, keepdim=True) / D
    centred = x - mu
    var = (centred * centred).sum(dim=2, keepdim=True) / D
    return centred / (var + 1e-5).sqrt()


CASES = [
    BlindCase(
        CHECK,
        "batch_norm_axes",
        ln_batch_axes,
        "mistake",
        "I took the statistics over (0, 1), batch and time.",
    ),
    BlindCase(
        CHECK,
        "unbiased_variance",
        ln_unbiased,
        "mistake",
        "I used x.var with its default (unbiased) setting.",
    ),
    BlindCase(
        CHECK,
        "variance_of_whole_tensor",
        ln_global_variance,
        "mistake",
        "I took the mean over the last axis but x.var() with no dim, over the whole tensor.",
    ),
    BlindCase(CHECK, "no_sqrt", ln_no_sqrt, "mistake", "I divided by the variance, not its root."),
    BlindCase(
        CHECK,
        "over_time_and_features",
        ln_over_time_and_features,
        "mistake",
        "I called F.layer_norm with normalized_shape x.shape[1:].",
    ),
    BlindCase(
        CHECK,
        "over_time",
        ln_over_time,
        "mistake",
        "I normalized over dim=1.",
    ),
    BlindCase(
        CHECK,
        "std_squared_unbiased",
        ln_std_unbiased,
        "mistake",
        "I used x.std() squared, which is unbiased by default.",
    ),
    BlindCase(
        CHECK,
        "mean_not_subtracted",
        ln_centered_only,
        "mistake",
        "I divided by the standard deviation but did not subtract the mean.",
    ),
    BlindCase(
        CHECK,
        "inplace_on_input",
        ln_inplace,
        "mistake",
        "I normalized x in place with -= and /=.",
    ),
    BlindCase(
        CHECK,
        "mean_square_for_variance",
        ln_rms,
        "mistake",
        "I used the mean of x^2 as the variance.",
    ),
    BlindCase(
        CHECK,
        "e_x2_minus_mean",
        ln_mean_of_squares_minus,
        "mistake",
        "I wrote E[x^2] - E[x] for the variance, forgetting to square the mean.",
    ),
    BlindCase(
        CHECK,
        "max_abs_scale",
        ln_max_abs,
        "mistake",
        "I scaled by the largest absolute value instead of the standard deviation.",
    ),
    BlindCase(
        CHECK,
        "f_layer_norm",
        ln_functional,
        "correct",
        "F.layer_norm over the last axis.",
    ),
    BlindCase(
        CHECK,
        "nn_layernorm_no_affine",
        ln_module,
        "correct",
        "nn.LayerNorm(D, elementwise_affine=False) built in the function.",
    ),
    BlindCase(
        CHECK,
        "var_mean_rsqrt",
        ln_var_mean_rsqrt,
        "correct",
        "torch.var_mean with correction=0 and rsqrt; eps as an optional argument.",
    ),
    BlindCase(
        CHECK,
        "sums_by_hand",
        ln_manual_square,
        "correct",
        "Sums over dim 2 divided by D, written by hand.",
    ),
]
