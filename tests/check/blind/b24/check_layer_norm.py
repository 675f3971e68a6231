"""Blind set B24, check_layer_norm (chapter 11): LayerNorm without gamma and beta, as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_layer_norm"


# ---------------------------------------------------------------- mistakes


def ln_over_positions(x: Tensor) -> Tensor:
    mean = x.mean(1, keepdim=True)  # dim 1
    var = x.var(1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_batch_norm_axes(x: Tensor) -> Tensor:
    mean = x.mean((0, 1), keepdim=True)
    var = x.var((0, 1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_unbiased(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, keepdim=True)  # torch's default
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_f_normalize(x: Tensor) -> Tensor:
    centred = x - x.mean(dim=-1, keepdim=True)
    return F.normalize(centred, dim=-1, eps=1e-5)  # divide by the length of each vector


def ln_mean_square(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = (x**2).mean(-1, keepdim=True)  # E[x^2], the mean not subtracted
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_not_centred(x: Tensor) -> Tensor:
    var = x.var(-1, unbiased=False, keepdim=True)
    return x / torch.sqrt(var + 1e-5)


def ln_divide_by_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / (var + 1e-5)


def ln_whole_sentence(x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[1:])  # normalized_shape = (T, D)


def ln_global_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(unbiased=False)  # one variance for the whole batch
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_in_place(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    x -= mean  # save memory
    x /= torch.sqrt(var + 1e-5)
    return x


def ln_no_keepdim(x: Tensor) -> Tensor:
    mean = x.mean(-1)
    var = x.var(-1, unbiased=False)
    return (x - mean.unsqueeze(1)) / torch.sqrt(var.unsqueeze(1) + 1e-5)


def ln_mean_absolute_deviation(x: Tensor) -> Tensor:
    centred = x - x.mean(-1, keepdim=True)
    spread = centred.abs().mean(-1, keepdim=True)  # the average distance from the mean
    return centred / (spread + 1e-5)


# ---------------------------------------------------------------- correct variants


def ln_functional(x: Tensor) -> Tensor:
    return F.layer_norm(x, (x.shape[-1],), eps=1e-5)


def ln_var_mean_rsqrt(x: Tensor, eps: float = 1e-5) -> Tensor:
    var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    return (x - mean) * torch.rsqrt(var + eps)


def ln_by_hand(x: Tensor) -> Tensor:
    D = x.size(-1)
    centred = x - x.sum(dim=-1, keepdim=True) / D
    var = (centred * centred).sum(dim=-1, keepdim=True) / D
    return centred / (var + 1e-5) ** 0.5


CASES = [
    BlindCase(
        CHECK,
        "over_positions",
        ln_over_positions,
        "mistake",
        "I normalised over dim=1, the positions, instead of the features.",
    ),
    BlindCase(
        CHECK,
        "batch_norm_axes",
        ln_batch_norm_axes,
        "mistake",
        "I took the mean and variance over (B, T), BatchNorm's axes.",
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
        "f_normalize",
        ln_f_normalize,
        "mistake",
        "After centring I used F.normalize(dim=-1), which divides by the vector's L2 norm, not "
        "by its standard deviation.",
    ),
    BlindCase(
        CHECK,
        "mean_square_as_variance",
        ln_mean_square,
        "mistake",
        "I computed the variance as the mean of x**2, without subtracting the mean.",
    ),
    BlindCase(
        CHECK,
        "mean_not_subtracted",
        ln_not_centred,
        "mistake",
        "I divided x by the standard deviation but forgot to subtract the mean.",
    ),
    BlindCase(
        CHECK,
        "divided_by_variance",
        ln_divide_by_variance,
        "mistake",
        "I divided by var + eps, forgetting the square root.",
    ),
    BlindCase(
        CHECK,
        "whole_sentence",
        ln_whole_sentence,
        "mistake",
        "I called F.layer_norm with x.shape[1:], which normalises each sentence over (T, D).",
    ),
    BlindCase(
        CHECK,
        "global_variance",
        ln_global_variance,
        "mistake",
        "My mean is per position but I forgot the dim on the variance: one for the whole batch.",
    ),
    BlindCase(
        CHECK,
        "in_place_on_input",
        ln_in_place,
        "mistake",
        "I subtracted and divided in place on x, which changes the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "no_keepdim_unsqueeze_1",
        ln_no_keepdim,
        "mistake",
        "Without keepdim I put the axis back with unsqueeze(1) instead of unsqueeze(-1).",
    ),
    BlindCase(
        CHECK,
        "mean_absolute_deviation",
        ln_mean_absolute_deviation,
        "mistake",
        "I divided by the mean absolute distance from the mean instead of the standard deviation.",
    ),
    BlindCase(
        CHECK,
        "f_layer_norm",
        ln_functional,
        "correct",
        "F.layer_norm over the last axis, no weight or bias.",
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
        "The mean and the biased variance from sums divided by D.",
    ),
]
