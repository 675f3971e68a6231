"""Blind set B9, check_layer_norm (chapter 11): LayerNorm without gamma and beta."""

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


def ln_unbiased_std(x: Tensor) -> Tensor:
    return (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True) + 1e-5)


def ln_eps_outside_sqrt(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    std = x.std(-1, unbiased=False, keepdim=True)
    return (x - mean) / (std + 1e-5)


def ln_no_centering(x: Tensor) -> Tensor:
    var = x.var(-1, unbiased=False, keepdim=True)
    return x / torch.sqrt(var + 1e-5)  # the mean is only used inside the variance


def ln_over_positions(x: Tensor) -> Tensor:
    mean = x.mean(1, keepdim=True)
    var = x.var(1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_over_sentence(x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[1:], eps=1e-5)  # normalized_shape = (T, D)


def ln_eps_1e_6(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-6)  # the eps of many implementations


def ln_second_moment(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt((x**2).mean(-1, keepdim=True) + 1e-5)  # E[x^2], not Var


def ln_one_pass_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = (x * x).mean(-1, keepdim=True) - mean**2  # E[x^2] - E[x]^2 in one pass
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_no_keepdim(x: Tensor) -> Tensor:
    mean = x.mean(-1)  # (B, T)
    var = x.var(-1, unbiased=False)
    return (x - mean) / torch.sqrt(var + 1e-5)


# ---------------------------------------------------------------- correct variants


def ln_functional(x: Tensor) -> Tensor:
    return F.layer_norm(x, (x.shape[-1],), eps=1e-5)


def ln_var_mean_rsqrt(x: Tensor, eps: float = 1e-5) -> Tensor:
    var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    return (x - mean) * torch.rsqrt(var + eps)


def ln_float64_inside(x: Tensor) -> Tensor:
    x64 = x.double()
    centered = x64 - x64.mean(dim=-1, keepdim=True)
    var = centered.pow(2).mean(dim=-1, keepdim=True)
    return (centered / (var + 1e-5).sqrt()).to(x.dtype)


def ln_module_no_affine(x: Tensor) -> Tensor:
    norm = torch.nn.LayerNorm(x.shape[-1], eps=1e-5, elementwise_affine=False)
    return norm(x)


CASES = [
    BlindCase(
        CHECK,
        "batchnorm_axes",
        ln_batch_axes,
        "mistake",
        "I averaged over the batch and time axes (0, 1), as BatchNorm does.",
    ),
    BlindCase(
        CHECK,
        "unbiased_variance",
        ln_unbiased_std,
        "mistake",
        "I used x.var(-1) with its default unbiased=True (divides by D - 1).",
    ),
    BlindCase(
        CHECK,
        "eps_outside_sqrt",
        ln_eps_outside_sqrt,
        "mistake",
        "I divided by std + eps (as in the Annotated Transformer) instead of sqrt(var + eps).",
    ),
    BlindCase(
        CHECK,
        "mean_not_subtracted",
        ln_no_centering,
        "mistake",
        "I divided x by its standard deviation but forgot to subtract the mean.",
    ),
    BlindCase(
        CHECK,
        "normalized_over_time",
        ln_over_positions,
        "mistake",
        "I took the mean and variance over dim=1 (the positions) instead of the last axis.",
    ),
    BlindCase(
        CHECK,
        "normalized_over_whole_sentence",
        ln_over_sentence,
        "mistake",
        "I called F.layer_norm with normalized_shape x.shape[1:], i.e. over (T, D) together.",
    ),
    BlindCase(
        CHECK,
        "eps_1e_minus_6",
        ln_eps_1e_6,
        "mistake",
        "I used eps = 1e-6 instead of 1e-5 (it only shows when the features barely vary).",
    ),
    BlindCase(
        CHECK,
        "second_moment_as_variance",
        ln_second_moment,
        "mistake",
        "I divided by sqrt(mean(x**2) + eps), the raw second moment, instead of the variance.",
    ),
    BlindCase(
        CHECK,
        "one_pass_variance",
        ln_one_pass_variance,
        "mistake",
        "I computed the variance as E[x^2] - E[x]^2, which cancels catastrophically in "
        "float32 when the features have a large mean.",
    ),
    BlindCase(
        CHECK,
        "no_keepdim",
        ln_no_keepdim,
        "mistake",
        "I took the mean and variance without keepdim=True, so the (B, T) statistics "
        "broadcast against the wrong axes.",
    ),
    BlindCase(
        CHECK,
        "functional_layer_norm",
        ln_functional,
        "correct",
        "I called F.layer_norm(x, (D,), eps=1e-5) with no weight and bias.",
    ),
    BlindCase(
        CHECK,
        "var_mean_rsqrt",
        ln_var_mean_rsqrt,
        "correct",
        "I used torch.var_mean(correction=0) and rsqrt, with eps as an optional argument.",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        ln_float64_inside,
        "correct",
        "I centred first, took the mean of the squares in float64, and cast back.",
    ),
    BlindCase(
        CHECK,
        "layernorm_module_no_affine",
        ln_module_no_affine,
        "correct",
        "I built nn.LayerNorm(D, elementwise_affine=False) inside the function.",
    ),
]
