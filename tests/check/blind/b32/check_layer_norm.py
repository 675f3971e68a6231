"""Blind set B32, check_layer_norm (chapter 11): LayerNorm without gamma and beta."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_layer_norm"

EPS = 1e-5


# ---------------------------------------------------------------- mistakes


def ln_over_time(x: Tensor) -> Tensor:
    mean = x.mean(1, keepdim=True)  # over the positions
    var = x.var(1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + EPS)


def ln_over_batch(x: Tensor) -> Tensor:
    mean = x.mean(0, keepdim=True)
    var = x.var(0, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + EPS)


def ln_over_sentence(x: Tensor) -> Tensor:
    mean = x.mean((1, 2), keepdim=True)  # the whole sentence: positions and features
    var = x.var((1, 2), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + EPS)


def ln_unbiased_std(x: Tensor) -> Tensor:
    return (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True) + EPS)


def ln_divide_by_var(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / (var + EPS)  # forgot the square root


def ln_no_centering(x: Tensor) -> Tensor:
    var = x.var(-1, unbiased=False, keepdim=True)
    return x / torch.sqrt(var + EPS)  # scaled but not centered


def ln_rms(x: Tensor) -> Tensor:
    return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + EPS)  # RMSNorm


def ln_global_mean(x: Tensor) -> Tensor:
    mean = x.mean()  # one mean for the whole batch
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + EPS)


def ln_in_place(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    std = torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + EPS)
    return x.sub_(mean).div_(std)  # saves memory, but overwrites the input


def ln_returns_stats(x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + EPS), mean, var  # as a BatchNorm would keep them


def ln_float32(x: Tensor) -> Tensor:
    x = x.float()  # work in float32
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + EPS)


def ln_eps_one(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1)  # 1e-5 misread; "+ 1" keeps it safe


def ln_mean_abs_dev(x: Tensor) -> Tensor:
    centered = x - x.mean(-1, keepdim=True)
    return centered / (centered.abs().mean(-1, keepdim=True) + EPS)  # spread as mean |x - mu|


def ln_detached_stats(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True).detach()  # statistics are constants, I thought
    std = torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + EPS).detach()
    return (x - mean) / std


# ---------------------------------------------------------------- correct variants


def ln_functional(x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[-1:], eps=1e-5)


def ln_module(x: Tensor) -> Tensor:
    norm = nn.LayerNorm(x.shape[-1], eps=1e-5, elementwise_affine=False)
    return norm.to(x.dtype)(x)


def ln_var_mean_rsqrt(x: Tensor, eps: float = 1e-5) -> Tensor:
    var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
    return (x - mean) * torch.rsqrt(var + eps)


def ln_manual_squares(x: Tensor) -> Tensor:
    D = x.shape[-1]
    mean = x.sum(-1, keepdim=True) / D
    centered = x - mean
    var = (centered * centered).sum(-1, keepdim=True) / D
    return centered / (var + 1e-5) ** 0.5


def ln_float64_inside(x: Tensor) -> Tensor:
    y = x.double()
    y = (y - y.mean(-1, keepdim=True)) / (y.var(-1, unbiased=False, keepdim=True) + 1e-5).sqrt()
    return y.to(x.dtype)


CASES = [
    BlindCase(
        CHECK,
        "over_positions",
        ln_over_time,
        "mistake",
        "I normalized over dim 1, the positions, instead of the features.",
    ),
    BlindCase(
        CHECK,
        "over_batch",
        ln_over_batch,
        "mistake",
        "I normalized over dim 0, the batch.",
    ),
    BlindCase(
        CHECK,
        "over_whole_sentence",
        ln_over_sentence,
        "mistake",
        "I normalized each sentence over its positions and features together.",
    ),
    BlindCase(
        CHECK,
        "unbiased_variance",
        ln_unbiased_std,
        "mistake",
        "I used x.var(-1), which is the unbiased variance (divides by D - 1).",
    ),
    BlindCase(
        CHECK,
        "divide_by_variance",
        ln_divide_by_var,
        "mistake",
        "I divided by var + eps, forgetting the square root.",
    ),
    BlindCase(
        CHECK,
        "no_centering",
        ln_no_centering,
        "mistake",
        "I divided by the standard deviation but did not subtract the mean.",
    ),
    BlindCase(
        CHECK,
        "rms_norm",
        ln_rms,
        "mistake",
        "I divided by the root mean square (RMSNorm), without subtracting the mean.",
    ),
    BlindCase(
        CHECK,
        "global_mean",
        ln_global_mean,
        "mistake",
        "I subtracted x.mean() over the whole tensor instead of each position's mean.",
    ),
    BlindCase(
        CHECK,
        "in_place",
        ln_in_place,
        "mistake",
        "I used sub_ and div_ on x, which overwrites the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "returns_stats",
        ln_returns_stats,
        "mistake",
        "I returned (normalized, mean, var) instead of the normalized tensor alone.",
    ),
    BlindCase(
        CHECK,
        "float32_inside",
        ln_float32,
        "mistake",
        "I cast x to float32 first, so float64 inputs come back float32.",
    ),
    BlindCase(
        CHECK,
        "eps_one",
        ln_eps_one,
        "mistake",
        "I added 1 instead of 1e-5 under the square root.",
    ),
    BlindCase(
        CHECK,
        "mean_absolute_deviation",
        ln_mean_abs_dev,
        "mistake",
        "I divided by the mean absolute deviation instead of the standard deviation.",
    ),
    BlindCase(
        CHECK,
        "detached_statistics",
        ln_detached_stats,
        "mistake",
        "I detached the mean and the standard deviation, so the gradient is wrong.",
    ),
    BlindCase(
        CHECK,
        "functional",
        ln_functional,
        "correct",
        "F.layer_norm(x, x.shape[-1:], eps=1e-5) with no weight or bias.",
    ),
    BlindCase(
        CHECK,
        "module_no_affine",
        ln_module,
        "correct",
        "An nn.LayerNorm(D, elementwise_affine=False) built inside the function.",
    ),
    BlindCase(
        CHECK,
        "var_mean_rsqrt",
        ln_var_mean_rsqrt,
        "correct",
        "torch.var_mean with correction=0 and rsqrt; eps as an optional argument.",
    ),
    BlindCase(
        CHECK,
        "manual_squares",
        ln_manual_squares,
        "correct",
        "Sums divided by D by hand, the variance from the squared centered values.",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        ln_float64_inside,
        "correct",
        "Computed in float64 and cast back to x's dtype.",
    ),
]
