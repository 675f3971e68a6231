"""Blind cases for check_layer_norm (chapter 11)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_layer_norm"


def ln_batchnorm_axes(x):
    mean = x.mean((0, 1), keepdim=True)
    var = x.var((0, 1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_unbiased(x):
    mean = x.mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(x.var(-1, keepdim=True) + 1e-5)  # var's default is unbiased


def ln_std_plus_eps(x):
    mean = x.mean(-1, keepdim=True)
    std = x.std(-1, unbiased=False, keepdim=True)
    return (x - mean) / (std + 1e-5)  # eps outside the square root


def ln_over_time(x):
    mean = x.mean(1, keepdim=True)
    var = x.var(1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_no_keepdim(x):
    mean = x.mean(-1)
    var = x.var(-1, unbiased=False)
    return (x - mean[..., None]) / torch.sqrt(var + 1e-5)[:, None]  # wrong axis put back


def ln_divide_by_var(x):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / (var + 1e-5)  # forgot the square root


def ln_over_all_features_and_time(x):
    mean = x.mean((-2, -1), keepdim=True)
    var = x.var((-2, -1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_no_eps(x):
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var)


def ln_in_place(x):
    x -= x.mean(-1, keepdim=True)  # changes the caller's tensor
    x /= torch.sqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5)
    return x


def ln_eps_required(x, eps):
    mean = x.mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + eps)


def ln_functional(x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[-1:], eps=1e-5)


def ln_var_mean_rsqrt(x: Tensor, eps: float = 1e-5) -> Tensor:
    var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    return (x - mean) * torch.rsqrt(var + eps)


def ln_manual_sums(x: Tensor) -> Tensor:
    D = x.shape[-1]
    mean = x.sum(-1, keepdim=True) / D
    centered = x - mean
    var = (centered * centered).sum(-1, keepdim=True) / D
    return centered / (var + 1e-5).sqrt()


CASES = [
    BlindCase(
        CHECK,
        "batchnorm_axes",
        ln_batchnorm_axes,
        "mistake",
        "normalizes each feature over (B, T), BatchNorm's axes, instead of each position over D",
    ),
    BlindCase(
        CHECK,
        "unbiased_variance",
        ln_unbiased,
        "mistake",
        "uses x.var(-1) with its default unbiased estimate (divides by D - 1)",
    ),
    BlindCase(
        CHECK,
        "eps_outside_sqrt",
        ln_std_plus_eps,
        "mistake",
        "divides by std + eps instead of sqrt(var + eps)",
    ),
    BlindCase(
        CHECK,
        "normalized_over_time",
        ln_over_time,
        "mistake",
        "normalizes over dim=1, the positions, instead of the last axis",
    ),
    BlindCase(
        CHECK,
        "keepdim_dropped_wrong_axis",
        ln_no_keepdim,
        "mistake",
        "computes mean and var without keepdim and puts the variance's axis back in the wrong place",
    ),
    BlindCase(
        CHECK,
        "no_square_root",
        ln_divide_by_var,
        "mistake",
        "divides by var + eps, forgetting the square root",
    ),
    BlindCase(
        CHECK,
        "over_time_and_features",
        ln_over_all_features_and_time,
        "mistake",
        "normalizes each sequence over (T, D) together, like a GroupNorm, instead of each position",
    ),
    BlindCase(CHECK, "no_eps", ln_no_eps, "mistake", "leaves out eps inside the square root"),
    BlindCase(
        CHECK,
        "in_place_on_input",
        ln_in_place,
        "mistake",
        "normalizes x in place with -= and /=, overwriting the caller's tensor",
    ),
    BlindCase(
        CHECK,
        "slip_eps_required",
        ln_eps_required,
        "mistake",
        "makes eps a required second argument with no default",
    ),
    BlindCase(
        CHECK,
        "F_layer_norm",
        ln_functional,
        "correct",
        "calls F.layer_norm over the last axis without weight or bias",
    ),
    BlindCase(
        CHECK,
        "var_mean_rsqrt",
        ln_var_mean_rsqrt,
        "correct",
        "uses torch.var_mean with correction=0 and multiplies by rsqrt, with an optional eps argument",
    ),
    BlindCase(
        CHECK,
        "manual_sums",
        ln_manual_sums,
        "correct",
        "computes mean and biased variance from sums divided by D",
    ),
]
