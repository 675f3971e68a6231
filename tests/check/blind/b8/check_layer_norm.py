"""Blind set B8, check_layer_norm (chapter 11): LayerNorm without gamma and beta."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_layer_norm"


# ---------------------------------------------------------------- mistakes


def batch_axes(x: Tensor) -> Tensor:
    mean = x.mean(dim=(0, 1), keepdim=True)
    var = x.var(dim=(0, 1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def unbiased_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, keepdim=True)  # torch.var's default is the unbiased estimate
    return (x - mean) / torch.sqrt(var + 1e-5)


def eps_outside_sqrt(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    std = x.std(-1, unbiased=False, keepdim=True)
    return (x - mean) / (std + 1e-5)


def no_eps(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    return (x - mean) / x.var(-1, unbiased=False, keepdim=True).sqrt()


def whole_sequence_shape(x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[1:])  # normalized over (T, D) together


def mean_of_squares_not_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    ms = (x**2).mean(-1, keepdim=True)  # forgot to centre before squaring
    return (x - mean) / torch.sqrt(ms + 1e-5)


def mean_without_keepdim(x: Tensor) -> Tensor:
    mean = x.mean(-1)  # (B, T)
    var = x.var(-1, unbiased=False)
    return (x - mean[..., None]) / torch.sqrt(var + 1e-5)  # var not unsqueezed


def divide_by_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / (var + 1e-5)


def time_axis(x: Tensor) -> Tensor:
    mean = x.mean(1, keepdim=True)  # thought dim 1 holds the features
    var = x.var(1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def divide_by_norm(x: Tensor) -> Tensor:
    centred = x - x.mean(-1, keepdim=True)
    return centred / centred.norm(dim=-1, keepdim=True)  # forgot the 1/D inside


# ---------------------------------------------------------------- correct variants


def functional_layer_norm(x: Tensor) -> Tensor:
    return F.layer_norm(x, (x.shape[-1],), eps=1e-5)


def var_mean_float64(x: Tensor, eps: float = 1e-5) -> Tensor:
    xd = x.double()
    var, mean = torch.var_mean(xd, dim=-1, correction=0, keepdim=True)
    return ((xd - mean) * torch.rsqrt(var + eps)).to(x.dtype)


def centred_square_mean(x: Tensor) -> Tensor:
    centred = x - x.mean(dim=-1, keepdim=True)
    var = centred.pow(2).mean(dim=-1, keepdim=True)
    return centred / (var + 1e-5) ** 0.5


CASES = [
    BlindCase(
        CHECK,
        "batch_axes",
        batch_axes,
        "mistake",
        "I averaged over (0, 1), the batch and time axes, like BatchNorm",
    ),
    BlindCase(
        CHECK,
        "unbiased_variance",
        unbiased_variance,
        "mistake",
        "I used x.var(-1) with its default unbiased estimate (divides by D - 1)",
    ),
    BlindCase(
        CHECK,
        "eps_outside_sqrt",
        eps_outside_sqrt,
        "mistake",
        "I divided by std + eps instead of sqrt(var + eps)",
    ),
    BlindCase(CHECK, "no_eps", no_eps, "mistake", "I left out eps, so a constant vector gives 0/0"),
    BlindCase(
        CHECK,
        "whole_sequence_shape",
        whole_sequence_shape,
        "mistake",
        "I called F.layer_norm(x, x.shape[1:]), which normalizes over T and D together",
    ),
    BlindCase(
        CHECK,
        "mean_of_squares_not_variance",
        mean_of_squares_not_variance,
        "mistake",
        "I subtracted the mean but divided by sqrt(mean(x**2) + eps), the RMS of the uncentred x",
    ),
    BlindCase(
        CHECK,
        "mean_without_keepdim",
        mean_without_keepdim,
        "mistake",
        "I dropped keepdim and unsqueezed the mean but not the variance, so it broadcasts wrongly",
    ),
    BlindCase(
        CHECK,
        "divide_by_variance",
        divide_by_variance,
        "mistake",
        "I divided by the variance instead of its square root",
    ),
    BlindCase(
        CHECK,
        "time_axis",
        time_axis,
        "mistake",
        "I normalized over dim=1 thinking it was the features; for (B, T, D) it is time",
    ),
    BlindCase(
        CHECK,
        "divide_by_norm",
        divide_by_norm,
        "mistake",
        "I divided the centred vector by its L2 norm, which is sqrt(D) times the std",
    ),
    BlindCase(
        CHECK,
        "functional_layer_norm",
        functional_layer_norm,
        "correct",
        "F.layer_norm over the last axis only, no weight or bias",
    ),
    BlindCase(
        CHECK,
        "var_mean_float64",
        var_mean_float64,
        "correct",
        "torch.var_mean(correction=0) and rsqrt in float64, cast back; eps argument",
    ),
    BlindCase(
        CHECK,
        "centred_square_mean",
        centred_square_mean,
        "correct",
        "variance as the mean of the squared centred values, ** 0.5",
    ),
]
