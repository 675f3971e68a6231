"""Blind set B13, check_layer_norm (chapter 11): LayerNorm without gamma and beta."""

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
    return (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True) + 1e-5)


def ln_eps_outside(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    std = x.std(-1, unbiased=False, keepdim=True)
    return (x - mean) / (std + 1e-5)


def ln_rms(x: Tensor) -> Tensor:
    return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5)  # mean left out


def ln_per_sentence(x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[1:])  # normalized_shape = (T, D)


def ln_over_time(x: Tensor) -> Tensor:
    mean = x.mean(1, keepdim=True)
    var = x.var(1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_divide_by_var(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / (var + 1e-5)


def ln_no_keepdim(x: Tensor) -> Tensor:
    mean = x.mean(-1)
    var = x.var(-1, unbiased=False)
    return (x - mean.unsqueeze(0)) / torch.sqrt(var.unsqueeze(0) + 1e-5)


def ln_in_place(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    std = torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + 1e-5)
    x -= mean  # saves memory
    x /= std
    return x


def ln_global_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(x.var(unbiased=False) + 1e-5)


def ln_std_squared(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).sum(-1, keepdim=True) / (x.shape[-1] - 1)  # sample variance
    return (x - mean) * torch.rsqrt(var + 1e-5)


# ---------------------------------------------------------------- correct variants


def ln_functional(x: Tensor) -> Tensor:
    return F.layer_norm(x, (x.shape[-1],), eps=1e-5)


def ln_module(x: Tensor) -> Tensor:
    norm = nn.LayerNorm(x.shape[-1], elementwise_affine=False).to(x.dtype)
    return norm(x)


def ln_var_mean(x: Tensor, eps: float = 1e-5) -> Tensor:
    var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
    return (x - mean) * torch.rsqrt(var + eps)


def ln_manual(x: Tensor) -> Tensor:
    centred = x - x.mean(dim=2, keepdim=True)
    var = (centred * centred).mean(dim=2, keepdim=True)
    return centred / (var + 1e-5).sqrt()


CASES = [
    BlindCase(
        CHECK,
        "batch_norm_axes",
        ln_batch_axes,
        "mistake",
        "I took the mean and variance over (B, T), BatchNorm's axes.",
    ),
    BlindCase(
        CHECK,
        "unbiased_variance",
        ln_unbiased,
        "mistake",
        "I used x.var(-1), which is unbiased by default.",
    ),
    BlindCase(
        CHECK,
        "eps_outside_sqrt",
        ln_eps_outside,
        "mistake",
        "I added eps to the standard deviation, outside the square root.",
    ),
    BlindCase(
        CHECK,
        "no_mean",
        ln_rms,
        "mistake",
        "I divided by the root mean square and never subtracted the mean.",
    ),
    BlindCase(
        CHECK,
        "per_sentence",
        ln_per_sentence,
        "mistake",
        "I called F.layer_norm(x, x.shape[1:]), normalising each sentence over (T, D).",
    ),
    BlindCase(
        CHECK, "over_time", ln_over_time, "mistake", "I normalised over dim=1, the positions."
    ),
    BlindCase(
        CHECK,
        "divide_by_variance",
        ln_divide_by_var,
        "mistake",
        "I divided by the variance instead of its square root.",
    ),
    BlindCase(
        CHECK,
        "no_keepdim",
        ln_no_keepdim,
        "mistake",
        "I dropped keepdim and unsqueezed at the front, so the stats broadcast wrongly.",
    ),
    BlindCase(
        CHECK,
        "in_place_on_input",
        ln_in_place,
        "mistake",
        "I normalised x in place with -= and /=, changing the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "global_variance",
        ln_global_variance,
        "mistake",
        "I took the mean per position but the variance of the whole tensor.",
    ),
    BlindCase(
        CHECK,
        "sample_variance_rsqrt",
        ln_std_squared,
        "mistake",
        "I computed the variance by hand dividing by D - 1.",
    ),
    BlindCase(CHECK, "F_layer_norm", ln_functional, "correct", "F.layer_norm over the last axis."),
    BlindCase(
        CHECK,
        "nn_LayerNorm_no_affine",
        ln_module,
        "correct",
        "nn.LayerNorm(D, elementwise_affine=False) built inside the function.",
    ),
    BlindCase(
        CHECK,
        "var_mean_rsqrt",
        ln_var_mean,
        "correct",
        "torch.var_mean with correction=0 and rsqrt; eps as an argument with default.",
    ),
    BlindCase(
        CHECK,
        "manual_centred",
        ln_manual,
        "correct",
        "Centre first, variance as the mean of squares of the centred values.",
    ),
]
