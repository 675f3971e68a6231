"""Blind set B30, check_layer_norm (chapter 11): LayerNorm without gamma and beta, as readers
write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_layer_norm"


# ---------------------------------------------------------------- mistakes


def ln_unbiased(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, keepdim=True)  # torch's default variance
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_batch_axes(x: Tensor) -> Tensor:
    mean = x.mean(dim=(0, 1), keepdim=True)
    var = x.var(dim=(0, 1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_eps_outside_sqrt(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    std = x.std(-1, unbiased=False, keepdim=True)
    return (x - mean) / (std + 1e-5)  # as in the Annotated Transformer


def ln_no_eps(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / var.sqrt()


def ln_whole_sentence(x: Tensor) -> Tensor:
    mean = x.mean(dim=(-2, -1), keepdim=True)  # over the sentence's tokens and features
    var = x.var(dim=(-2, -1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_over_positions(x: Tensor) -> Tensor:
    mean = x.mean(dim=1, keepdim=True)
    var = x.var(dim=1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_only_centred(x: Tensor) -> Tensor:
    return x - x.mean(-1, keepdim=True)


def ln_rms(x: Tensor) -> Tensor:
    return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5)  # RMSNorm


def ln_divide_by_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / (var + 1e-5)


def ln_subtract_in_place(x: Tensor) -> Tensor:
    x -= x.mean(-1, keepdim=True)  # centre first, no copy
    return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5)


def ln_no_keepdim(x: Tensor) -> Tensor:
    mean = x.mean(-1)
    var = x.var(-1, unbiased=False)
    return (x - mean.unsqueeze(0)) / torch.sqrt(var.unsqueeze(0) + 1e-5)


def ln_variance_of_raw_square(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = (x**2).mean(-1, keepdim=True)  # the mean square, not centred
    return (x - mean) / torch.sqrt(var + 1e-5)


# ---------------------------------------------------------------- correct variants


def ln_functional(x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[-1:], eps=1e-5)  # no weight, no bias


def ln_var_mean_rsqrt(x: Tensor, eps: float = 1e-5) -> Tensor:
    var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
    return (x - mean) * torch.rsqrt(var + eps)


def ln_two_pass_by_hand(x: Tensor) -> Tensor:
    D = x.shape[-1]
    centred = x - x.sum(dim=-1, keepdim=True) / D
    var = (centred * centred).sum(dim=-1, keepdim=True) / D
    return centred / (var + 1e-5).sqrt()


CASES = [
    BlindCase(
        CHECK,
        "unbiased_variance",
        ln_unbiased,
        "mistake",
        "I used x.var() with its default, the unbiased variance (divides by D - 1).",
    ),
    BlindCase(
        CHECK,
        "batchnorm_axes",
        ln_batch_axes,
        "mistake",
        "I normalised over dims (0, 1), each feature over the batch: BatchNorm's axes.",
    ),
    BlindCase(
        CHECK,
        "eps_added_to_std",
        ln_eps_outside_sqrt,
        "mistake",
        "I added eps to the standard deviation instead of inside the square root.",
    ),
    BlindCase(
        CHECK,
        "no_eps",
        ln_no_eps,
        "mistake",
        "I left out eps, so a constant vector divides 0 by 0.",
    ),
    BlindCase(
        CHECK,
        "whole_sentence",
        ln_whole_sentence,
        "mistake",
        "I normalised over the last two axes, the whole sentence at once.",
    ),
    BlindCase(
        CHECK,
        "over_positions",
        ln_over_positions,
        "mistake",
        "I took the mean and variance over dim=1, the positions of the sentence.",
    ),
    BlindCase(
        CHECK,
        "only_centred",
        ln_only_centred,
        "mistake",
        "I subtracted the mean but forgot to divide by the standard deviation.",
    ),
    BlindCase(
        CHECK,
        "rms_norm",
        ln_rms,
        "mistake",
        "I divided by the root mean square without subtracting the mean (RMSNorm).",
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
        "centre_in_place",
        ln_subtract_in_place,
        "mistake",
        "I centred with x -= mean to save memory, which changes the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "keepdim_forgotten",
        ln_no_keepdim,
        "mistake",
        "I forgot keepdim=True and unsqueezed the statistics at the front, so they broadcast "
        "along the wrong axis.",
    ),
    BlindCase(
        CHECK,
        "uncentred_variance",
        ln_variance_of_raw_square,
        "mistake",
        "I took the variance as the mean of x squared, without centring first.",
    ),
    BlindCase(
        CHECK,
        "f_layer_norm",
        ln_functional,
        "correct",
        "F.layer_norm over the last axis, with no weight and no bias.",
    ),
    BlindCase(
        CHECK,
        "var_mean_rsqrt",
        ln_var_mean_rsqrt,
        "correct",
        "torch.var_mean with correction=0 and rsqrt; eps as an argument with default 1e-5.",
    ),
    BlindCase(
        CHECK,
        "two_pass_sums",
        ln_two_pass_by_hand,
        "correct",
        "Mean and variance written with sums divided by D, centring first.",
    ),
]
