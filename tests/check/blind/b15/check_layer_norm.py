"""Blind set B15, check_layer_norm (chapter 11): LayerNorm without gamma and beta."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_layer_norm"


# ---------------------------------------------------------------- mistakes


def ln_batch_axes(x: Tensor) -> Tensor:
    mean = x.mean((0, 1), keepdim=True)
    var = x.var((0, 1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_unbiased(x: Tensor) -> Tensor:
    return (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True) + 1e-5)


def ln_over_time(x: Tensor) -> Tensor:
    mean = x.mean(1, keepdim=True)
    var = x.var(1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_whole_sentence(x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[1:])  # normalized_shape = (T, D)


def ln_divide_by_var(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / (var + 1e-5)


def ln_no_centering(x: Tensor) -> Tensor:
    return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5)  # RMS only


def ln_unit_length(x: Tensor) -> Tensor:
    x = x - x.mean(-1, keepdim=True)
    return x / x.norm(dim=-1, keepdim=True)  # length 1


def ln_center_only(x: Tensor) -> Tensor:
    return x - x.mean(-1, keepdim=True)


def ln_uncentred_variance(x: Tensor) -> Tensor:
    var = (x**2).mean(-1, keepdim=True)  # E[x^2], forgot to subtract the mean
    return (x - x.mean(-1, keepdim=True)) / torch.sqrt(var + 1e-5)


def ln_std_of_batch(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    std = x.std(unbiased=False)  # one std for the whole tensor
    return (x - mean) / torch.sqrt(std**2 + 1e-5)


# ---------------------------------------------------------------- correct variants


def ln_functional(x: Tensor) -> Tensor:
    return F.layer_norm(x, (x.shape[-1],), eps=1e-5)


def ln_var_mean_rsqrt(x: Tensor, eps: float = 1e-5) -> Tensor:
    var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
    return (x - mean) * torch.rsqrt(var + eps)


def ln_moments(x: Tensor) -> Tensor:
    """Variance as E[(x - mean)^2] written out."""
    centred = x - x.sum(-1, keepdim=True) / x.shape[-1]
    var = centred.square().sum(-1, keepdim=True) / x.shape[-1]
    return centred / (var + 1e-5) ** 0.5


CASES = [
    BlindCase(
        CHECK,
        "batchnorm_axes",
        ln_batch_axes,
        "mistake",
        "I took mean and variance over (B, T), BatchNorm's axes.",
    ),
    BlindCase(
        CHECK,
        "unbiased_variance",
        ln_unbiased,
        "mistake",
        "I used x.var(-1) with its default unbiased=True.",
    ),
    BlindCase(
        CHECK, "over_time", ln_over_time, "mistake", "I normalised over dim=1, the positions."
    ),
    BlindCase(
        CHECK,
        "whole_sentence",
        ln_whole_sentence,
        "mistake",
        "I passed x.shape[1:] to F.layer_norm, normalising each sentence as a whole.",
    ),
    BlindCase(
        CHECK,
        "divide_by_variance",
        ln_divide_by_var,
        "mistake",
        "I divided by the variance instead of the standard deviation.",
    ),
    BlindCase(
        CHECK,
        "no_centering",
        ln_no_centering,
        "mistake",
        "I only divided by the root mean square, without subtracting the mean.",
    ),
    BlindCase(
        CHECK,
        "unit_length",
        ln_unit_length,
        "mistake",
        "I centred and divided by the vector's length instead of its std.",
    ),
    BlindCase(CHECK, "center_only", ln_center_only, "mistake", "I only subtracted the mean."),
    BlindCase(
        CHECK,
        "uncentred_variance",
        ln_uncentred_variance,
        "mistake",
        "My variance is the mean of x^2, not of (x - mean)^2.",
    ),
    BlindCase(
        CHECK, "global_std", ln_std_of_batch, "mistake", "I used one std over the whole tensor."
    ),
    BlindCase(
        CHECK,
        "f_layer_norm",
        ln_functional,
        "correct",
        "F.layer_norm over the last axis with no weight or bias.",
    ),
    BlindCase(
        CHECK,
        "var_mean_rsqrt",
        ln_var_mean_rsqrt,
        "correct",
        "torch.var_mean with correction=0 and rsqrt; an eps argument with default.",
    ),
    BlindCase(
        CHECK, "moments_by_hand", ln_moments, "correct", "Mean and variance written out with sums."
    ),
]
