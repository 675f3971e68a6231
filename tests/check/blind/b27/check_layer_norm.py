"""Blind set B27, check_layer_norm (chapter 11): LayerNorm without gamma and beta as readers write
it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_layer_norm"


# ---------------------------------------------------------------- mistakes


def ln_std_default(x: Tensor) -> Tensor:
    return (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.std(-1, keepdim=True) ** 2 + 1e-5)


def ln_eps_outside_sqrt(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    std = x.var(-1, unbiased=False, keepdim=True).sqrt()
    return (x - mean) / (std + 1e-5)  # eps keeps the division safe


def ln_no_eps(x: Tensor) -> Tensor:
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return (x - mean) / var.sqrt()


def ln_over_sentence(x: Tensor) -> Tensor:
    mean = x.mean(dim=(-2, -1), keepdim=True)  # the whole (T, D) layer of a sentence
    var = x.var(dim=(-2, -1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_over_positions(x: Tensor) -> Tensor:
    mean = x.mean(1, keepdim=True)  # each feature over the sentence
    var = x.var(1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_divide_by_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / (var + 1e-5)  # to variance 1


def ln_rms_only(x: Tensor) -> Tensor:
    return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5)  # x / sqrt(mean x^2 + eps)


def ln_no_keepdim(x: Tensor) -> Tensor:
    mean = x.mean(-1)
    var = x.var(-1, unbiased=False)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_in_place(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    std = torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + 1e-5)
    return x.sub_(mean).div_(std)  # no extra (B, T, D) tensor


def ln_variance_before_centering(x: Tensor) -> Tensor:
    var = x.pow(2).mean(-1, keepdim=True)  # E[x^2]
    mean = x.mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_module_elementwise_affine(x: Tensor) -> Tensor:
    norm = nn.LayerNorm(x.shape[-2:], elementwise_affine=False)  # normalized_shape = (T, D)
    return norm(x)


def ln_mean_of_abs_deviation(x: Tensor) -> Tensor:
    centred = x - x.mean(-1, keepdim=True)
    spread = centred.abs().mean(-1, keepdim=True)  # the average distance to the mean
    return centred / (spread + 1e-5)


# ---------------------------------------------------------------- correct variants


def ln_functional(x: Tensor) -> Tensor:
    """F.layer_norm with no weight and no bias."""
    return F.layer_norm(x, normalized_shape=(x.shape[-1],), eps=1e-5)


def ln_rsqrt_var_mean(x: Tensor, eps: float = 1e-5) -> Tensor:
    """torch.var_mean and rsqrt; eps as an argument with the chapter's value."""
    var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    return (x - mean) * torch.rsqrt(var + eps)


def ln_by_hand_sums(x: Tensor) -> Tensor:
    """Sums divided by D, written out."""
    D = x.size(-1)
    mean = x.sum(dim=-1, keepdim=True) / D
    centred = x - mean
    var = (centred * centred).sum(dim=-1, keepdim=True) / D
    return centred / (var + 1e-5).sqrt()


CASES = [
    BlindCase(
        CHECK,
        "std_default_unbiased",
        ln_std_default,
        "mistake",
        "I squared x.std(-1), whose default is the unbiased estimate (divides by D - 1).",
    ),
    BlindCase(
        CHECK,
        "eps_outside_sqrt",
        ln_eps_outside_sqrt,
        "mistake",
        "I added eps to the standard deviation instead of to the variance inside the square root.",
    ),
    BlindCase(
        CHECK,
        "no_eps",
        ln_no_eps,
        "mistake",
        "I left out eps entirely, so a constant vector gives NaN.",
    ),
    BlindCase(
        CHECK,
        "over_whole_sentence",
        ln_over_sentence,
        "mistake",
        "I normalized over the last two axes (T, D), one mean and variance per sentence.",
    ),
    BlindCase(
        CHECK,
        "over_positions",
        ln_over_positions,
        "mistake",
        "I normalized over dim=1, each feature across the positions of its sentence.",
    ),
    BlindCase(
        CHECK,
        "divide_by_variance",
        ln_divide_by_variance,
        "mistake",
        "I divided by the variance plus eps instead of its square root.",
    ),
    BlindCase(
        CHECK,
        "rms_without_mean",
        ln_rms_only,
        "mistake",
        "I divided by the root mean square and never subtracted the mean.",
    ),
    BlindCase(
        CHECK,
        "no_keepdim",
        ln_no_keepdim,
        "mistake",
        "I took the mean and variance without keepdim=True, so they do not broadcast back to "
        "(B, T, D).",
    ),
    BlindCase(
        CHECK,
        "in_place",
        ln_in_place,
        "mistake",
        "I normalized x in place with sub_ and div_, which changes the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "mean_square_not_centred",
        ln_variance_before_centering,
        "mistake",
        "I took the variance as the mean of x^2, forgetting to centre x first.",
    ),
    BlindCase(
        CHECK,
        "layer_norm_shape_T_D",
        ln_module_elementwise_affine,
        "mistake",
        "I used nn.LayerNorm(x.shape[-2:], elementwise_affine=False), so it normalizes over "
        "(T, D).",
    ),
    BlindCase(
        CHECK,
        "mean_absolute_deviation",
        ln_mean_of_abs_deviation,
        "mistake",
        "I divided by the mean absolute deviation instead of the standard deviation.",
    ),
    BlindCase(
        CHECK,
        "functional_layer_norm",
        ln_functional,
        "correct",
        "F.layer_norm over the last axis, no weight, no bias, eps=1e-5.",
    ),
    BlindCase(
        CHECK,
        "var_mean_rsqrt",
        ln_rsqrt_var_mean,
        "correct",
        "torch.var_mean with correction=0 and rsqrt; eps an extra argument defaulting to 1e-5.",
    ),
    BlindCase(
        CHECK,
        "sums_by_hand",
        ln_by_hand_sums,
        "correct",
        "Mean and variance as sums divided by D, written out.",
    ),
]
