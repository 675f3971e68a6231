"""Blind set B31, check_layer_norm (chapter 11): LayerNorm without gamma and beta, as a function."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_layer_norm"


# ---------------------------------------------------------------- mistakes


def ln_batch_axes(x: Tensor) -> Tensor:
    mean = x.mean((0, 1), keepdim=True)  # each feature over the batch and positions
    var = x.var((0, 1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_unbiased(x: Tensor) -> Tensor:
    return (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True) + 1e-5)


def ln_over_positions(x: Tensor) -> Tensor:
    mean = x.mean(1, keepdim=True)  # over the sequence
    var = x.var(1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_over_positions_and_features(x: Tensor) -> Tensor:
    mean = x.mean((-2, -1), keepdim=True)  # the whole sentence at once
    var = x.var((-2, -1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_no_centring(x: Tensor) -> Tensor:
    var = x.var(-1, unbiased=False, keepdim=True)
    return x / torch.sqrt(var + 1e-5)  # forgot to subtract the mean


def ln_divide_by_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / (var + 1e-5)  # no square root


def ln_uncentred_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = (x**2).mean(-1, keepdim=True)  # mean of the squares
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_mixed_axes(x: Tensor) -> Tensor:
    mean = x.mean((0, 1), keepdim=True)  # the mean from batch_norm ...
    var = x.var(-1, unbiased=False, keepdim=True)  # ... the variance from layer_norm
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_mean_absolute_deviation(x: Tensor) -> Tensor:
    centred = x - x.mean(-1, keepdim=True)
    return centred / (centred.abs().mean(-1, keepdim=True) + 1e-5)


def ln_in_place(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    std = torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + 1e-5)
    return x.sub_(mean).div_(std)  # no extra memory


def ln_float32(x: Tensor) -> Tensor:
    x = x.float()  # LayerNorm is usually done in float32
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_eps_large(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-1)  # a "small" epsilon


def ln_normalized_shape_all(x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[1:], eps=1e-5)  # every dimension after the batch


def ln_detached_stats(x: Tensor) -> Tensor:
    with torch.no_grad():  # the statistics are constants, like running statistics
        mean = x.mean(-1, keepdim=True)
        std = torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + 1e-5)
    return (x - mean) / std


# ---------------------------------------------------------------- correct variants


def ln_functional(x: Tensor) -> Tensor:
    return F.layer_norm(x, (x.shape[-1],), eps=1e-5)


def ln_module(x: Tensor) -> Tensor:
    norm = nn.LayerNorm(x.shape[-1], elementwise_affine=False).to(x.dtype)
    return norm(x)


def ln_var_mean_rsqrt(x: Tensor, eps: float = 1e-5) -> Tensor:
    var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
    return (x - mean) * torch.rsqrt(var + eps)


def ln_by_hand(x: Tensor) -> Tensor:
    D = x.shape[-1]
    centred = x - x.sum(-1, keepdim=True) / D
    var = (centred * centred).sum(-1, keepdim=True) / D
    return centred / (var + 1e-5) ** 0.5


CASES = [
    BlindCase(
        CHECK,
        "batch_norm_axes",
        ln_batch_axes,
        "mistake",
        "I normalized each feature over (B, T), BatchNorm's axes.",
    ),
    BlindCase(
        CHECK,
        "unbiased_variance",
        ln_unbiased,
        "mistake",
        "I used x.var(-1), the unbiased variance (divides by D - 1).",
    ),
    BlindCase(
        CHECK,
        "over_positions",
        ln_over_positions,
        "mistake",
        "I normalized over dim=1, the positions, instead of the features.",
    ),
    BlindCase(
        CHECK,
        "over_positions_and_features",
        ln_over_positions_and_features,
        "mistake",
        "I normalized each sentence over all of its positions and features together.",
    ),
    BlindCase(
        CHECK,
        "no_centring",
        ln_no_centring,
        "mistake",
        "I divided by the standard deviation but forgot to subtract the mean.",
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
        "uncentred_variance",
        ln_uncentred_variance,
        "mistake",
        "I computed the variance as the mean of x^2, without centring x first.",
    ),
    BlindCase(
        CHECK,
        "mixed_axes",
        ln_mixed_axes,
        "mistake",
        "I took the mean over (B, T) and the variance over D, copying from two functions.",
    ),
    BlindCase(
        CHECK,
        "mean_absolute_deviation",
        ln_mean_absolute_deviation,
        "mistake",
        "I divided by the mean absolute deviation instead of the standard deviation.",
    ),
    BlindCase(
        CHECK,
        "in_place",
        ln_in_place,
        "mistake",
        "I normalized x in place with sub_ and div_, changing the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "float32_cast",
        ln_float32,
        "mistake",
        "I cast x to float32 first, so a float64 input comes back float32.",
    ),
    BlindCase(
        CHECK,
        "eps_0_1",
        ln_eps_large,
        "mistake",
        "I used eps = 0.1 instead of 1e-5.",
    ),
    BlindCase(
        CHECK,
        "normalized_shape_all_but_batch",
        ln_normalized_shape_all,
        "mistake",
        "I called F.layer_norm with normalized_shape=x.shape[1:], i.e. over (T, D).",
    ),
    BlindCase(
        CHECK,
        "statistics_without_gradient",
        ln_detached_stats,
        "mistake",
        "I computed the mean and standard deviation under torch.no_grad(), so the gradient "
        "ignores them.",
    ),
    BlindCase(
        CHECK,
        "functional_layer_norm",
        ln_functional,
        "correct",
        "F.layer_norm over the last dimension, no weight or bias.",
    ),
    BlindCase(
        CHECK,
        "layernorm_module",
        ln_module,
        "correct",
        "nn.LayerNorm(D, elementwise_affine=False) built on the fly.",
    ),
    BlindCase(
        CHECK,
        "var_mean_rsqrt",
        ln_var_mean_rsqrt,
        "correct",
        "torch.var_mean with correction=0 and rsqrt; eps as an extra argument.",
    ),
    BlindCase(
        CHECK,
        "sums_by_hand",
        ln_by_hand,
        "correct",
        "Mean and biased variance from sums divided by D, then ** 0.5.",
    ),
]
