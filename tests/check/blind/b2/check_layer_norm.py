"""Blind cases for check_layer_norm (chapter 11), written from the chapter's text only."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_layer_norm"


# ---- mistakes -------------------------------------------------------------------------------


def batch_norm_axes(x: Tensor) -> Tensor:
    mean = x.mean(dim=(0, 1), keepdim=True)
    var = x.var(dim=(0, 1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def unbiased_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(x.var(-1, keepdim=True) + 1e-5)


def eps_outside_sqrt(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    std = x.std(-1, unbiased=False, keepdim=True)
    return (x - mean) / (std + 1e-5)


def mean_not_subtracted(x: Tensor) -> Tensor:
    var = x.var(-1, unbiased=False, keepdim=True)
    return x / torch.sqrt(var + 1e-5)


def over_time_axis(x: Tensor) -> Tensor:
    mean = x.mean(1, keepdim=True)
    var = x.var(1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def divided_by_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / (var + 1e-5)


def over_whole_sentence(x: Tensor) -> Tensor:
    mean = x.mean(dim=(1, 2), keepdim=True)
    var = x.var(dim=(1, 2), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def variance_without_mean(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    second = (x**2).mean(-1, keepdim=True)  # E[x^2] without subtracting the mean
    return (x - mean) / torch.sqrt(second + 1e-5)


# ---- correct variants ---------------------------------------------------------------------------


def centred_square_mean(x: Tensor) -> Tensor:
    centred = x - x.mean(dim=-1, keepdim=True)
    return centred / (centred.pow(2).mean(dim=-1, keepdim=True) + 1e-5).sqrt()


def functional_layer_norm(x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[-1:], eps=1e-5)


def rsqrt_with_eps_argument(x: Tensor, eps: float = 1e-5) -> Tensor:
    var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    return (x - mean) * torch.rsqrt(var + eps)


CASES = [
    BlindCase(
        CHECK,
        "batch_norm_axes",
        batch_norm_axes,
        "mistake",
        "I normalized over the axes (0, 1), batch and time, as BatchNorm does",
    ),
    BlindCase(
        CHECK,
        "unbiased_variance",
        unbiased_variance,
        "mistake",
        "I used x.var(-1), the unbiased variance that divides by D - 1",
    ),
    BlindCase(
        CHECK,
        "eps_outside_sqrt",
        eps_outside_sqrt,
        "mistake",
        "I divided by the standard deviation plus eps instead of sqrt(variance + eps)",
    ),
    BlindCase(
        CHECK,
        "mean_not_subtracted",
        mean_not_subtracted,
        "mistake",
        "I divided by the standard deviation but forgot to subtract the mean",
    ),
    BlindCase(
        CHECK,
        "over_time_axis",
        over_time_axis,
        "mistake",
        "I took the mean and variance over dim 1, the positions",
    ),
    BlindCase(
        CHECK,
        "divided_by_variance",
        divided_by_variance,
        "mistake",
        "I divided by the variance plus eps, without the square root",
    ),
    BlindCase(
        CHECK,
        "over_whole_sentence",
        over_whole_sentence,
        "mistake",
        "I normalized each sentence over all its positions and features together",
    ),
    BlindCase(
        CHECK,
        "variance_without_mean",
        variance_without_mean,
        "mistake",
        "I used the mean of x^2 as the variance, without subtracting the mean first",
    ),
    BlindCase(
        CHECK,
        "layer_norm_class",
        nn.LayerNorm,
        "mistake",
        "I passed nn.LayerNorm, the class, instead of a function of x",
    ),
    BlindCase(
        CHECK,
        "centred_square_mean",
        centred_square_mean,
        "correct",
        "I centred x and took the mean of the squares as the variance",
    ),
    BlindCase(
        CHECK,
        "functional_layer_norm",
        functional_layer_norm,
        "correct",
        "I called F.layer_norm over the last axis without weight and bias",
    ),
    BlindCase(
        CHECK,
        "rsqrt_with_eps_argument",
        rsqrt_with_eps_argument,
        "correct",
        "I used torch.var_mean with correction=0 and rsqrt, with eps as an optional argument",
    ),
]
