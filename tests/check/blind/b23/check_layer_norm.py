"""Blind set B23, check_layer_norm (chapter 11): LayerNorm without gamma and beta, by readers."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_layer_norm"

EPS = 1e-5


# ---------------------------------------------------------------- mistakes


def ln_batch_axes(x: Tensor) -> Tensor:
    mean = x.mean(dim=(0, 1), keepdim=True)  # each feature over the batch and positions
    var = x.var(dim=(0, 1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + EPS)


def ln_unbiased(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, keepdim=True)  # torch's default
    return (x - mean) / torch.sqrt(var + EPS)


def ln_whole_sentence(x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[1:], eps=EPS)  # everything but the batch axis


def ln_over_positions(x: Tensor) -> Tensor:
    mean = x.mean(dim=1, keepdim=True)  # dim 1 of (B, T, D)
    var = x.var(dim=1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + EPS)


def ln_divide_by_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / (var + EPS)  # divide by the spread


def ln_mean_not_subtracted(x: Tensor) -> Tensor:
    var = x.var(-1, unbiased=False, keepdim=True)
    return x / torch.sqrt(var + EPS)


def ln_rms_denominator(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    mean_square = (x * x).mean(-1, keepdim=True)  # E[x^2]
    return (x - mean) / torch.sqrt(mean_square + EPS)


def ln_unit_length(x: Tensor) -> Tensor:
    centred = x - x.mean(-1, keepdim=True)
    return F.normalize(centred, dim=-1, eps=EPS)  # length 1


def ln_global_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(unbiased=False)  # the spread of the numbers
    return (x - mean) / torch.sqrt(var + EPS)


def ln_subtracts_in_place(x: Tensor) -> Tensor:
    x -= x.mean(-1, keepdim=True)  # centre, no copy
    return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + EPS)


def ln_mean_absolute_deviation(x: Tensor) -> Tensor:
    centred = x - x.mean(-1, keepdim=True)
    spread = centred.abs().mean(-1, keepdim=True)  # the average distance from the mean
    return centred / (spread + EPS)


def ln_global_mean(x: Tensor) -> Tensor:
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - x.mean()) / torch.sqrt(var + EPS)  # x.mean(): forgot the dim


# ---------------------------------------------------------------- correct variants


def ln_functional(x: Tensor) -> Tensor:
    return F.layer_norm(x, (x.shape[-1],), eps=1e-5)


def ln_module_no_affine(x: Tensor) -> Tensor:
    norm = nn.LayerNorm(x.shape[-1], eps=1e-5, elementwise_affine=False).to(x.device)
    return norm(x)


def ln_var_mean_rsqrt(x: Tensor) -> Tensor:
    var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
    return (x - mean) * torch.rsqrt(var + 1e-5)


def ln_position_loop(x: Tensor) -> Tensor:
    out = torch.empty_like(x)
    for b in range(x.shape[0]):
        for t in range(x.shape[1]):
            v = x[b, t]
            centred = v - v.mean()
            out[b, t] = centred / (centred.pow(2).mean() + 1e-5).sqrt()
    return out


CASES = [
    BlindCase(
        CHECK,
        "batch_axes",
        ln_batch_axes,
        "mistake",
        "I took the mean and variance over dims (0, 1), BatchNorm's axes",
    ),
    BlindCase(
        CHECK, "unbiased", ln_unbiased, "mistake", "I used x.var(-1), which divides by D - 1"
    ),
    BlindCase(
        CHECK,
        "whole_sentence",
        ln_whole_sentence,
        "mistake",
        "I passed x.shape[1:] to F.layer_norm, normalizing each sentence as a whole",
    ),
    BlindCase(CHECK, "over_positions", ln_over_positions, "mistake", "I normalized over dim=1"),
    BlindCase(
        CHECK,
        "divide_by_variance",
        ln_divide_by_variance,
        "mistake",
        "I divided by the variance + eps, not by its square root",
    ),
    BlindCase(
        CHECK,
        "mean_not_subtracted",
        ln_mean_not_subtracted,
        "mistake",
        "I divided by the standard deviation but did not subtract the mean",
    ),
    BlindCase(
        CHECK,
        "rms_denominator",
        ln_rms_denominator,
        "mistake",
        "I divided by sqrt(mean(x^2)) instead of the variance around the mean",
    ),
    BlindCase(
        CHECK,
        "unit_length",
        ln_unit_length,
        "mistake",
        "I centred x and scaled it to length 1 with F.normalize",
    ),
    BlindCase(
        CHECK,
        "global_variance",
        ln_global_variance,
        "mistake",
        "I took the mean per position but x.var() of the whole tensor",
    ),
    BlindCase(
        CHECK,
        "subtracts_in_place",
        ln_subtracts_in_place,
        "mistake",
        "I centred x in place with x -= mean",
    ),
    BlindCase(
        CHECK,
        "mean_absolute_deviation",
        ln_mean_absolute_deviation,
        "mistake",
        "I divided by the mean absolute deviation instead of the standard deviation",
    ),
    BlindCase(
        CHECK,
        "global_mean",
        ln_global_mean,
        "mistake",
        "I subtracted x.mean() of the whole tensor (forgot dim=-1), variance per position",
    ),
    BlindCase(CHECK, "functional", ln_functional, "correct", "F.layer_norm over the last axis"),
    BlindCase(
        CHECK,
        "module_no_affine",
        ln_module_no_affine,
        "correct",
        "nn.LayerNorm(D, elementwise_affine=False)",
    ),
    BlindCase(
        CHECK,
        "var_mean_rsqrt",
        ln_var_mean_rsqrt,
        "correct",
        "torch.var_mean with correction=0 and rsqrt",
    ),
    BlindCase(
        CHECK, "position_loop", ln_position_loop, "correct", "a loop over batch and positions"
    ),
]
