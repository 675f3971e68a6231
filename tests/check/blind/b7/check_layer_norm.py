"""Blind set B7, check_layer_norm (chapter 11): LayerNorm without gamma and beta."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_layer_norm"


# ---------------------------------------------------------------- mistakes


def ln_eps_outside_sqrt(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    std = x.var(-1, unbiased=False, keepdim=True).sqrt()
    return (x - mean) / (std + 1e-5)  # eps added to the std


def ln_no_eps(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var)  # eps only matters for constant rows


def ln_whole_sentence(x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[1:])  # normalized_shape = everything but the batch


def ln_std_unbiased(x: Tensor) -> Tensor:
    mean = x.mean(dim=-1, keepdim=True)
    var = x.std(dim=-1, keepdim=True) ** 2  # torch.std, squared
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_no_keepdim(x: Tensor) -> Tensor:
    mean = x.mean(-1)  # (B, T)
    var = x.var(-1, unbiased=False)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_divide_by_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / (var + 1e-5)  # divided by sigma^2


def ln_rms_denominator(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    ms = (x**2).mean(-1, keepdim=True)  # the variance: the mean of the squares
    return (x - mean) / torch.sqrt(ms + 1e-5)


def ln_over_positions(x: Tensor) -> Tensor:
    mean = x.mean(1, keepdim=True)  # dim 1
    var = x.var(1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_bert_eps(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-12)  # BERT's layer_norm_eps


def ln_in_place(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return x.sub_(mean).div_(torch.sqrt(var + 1e-5))  # no extra memory


def ln_returns_stats(x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5), mean, var  # the statistics, for plots


def ln_variance_about_zero_mean(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    centred = x - mean
    var = centred.sum(-1, keepdim=True) ** 2 / x.shape[-1]  # squared the sum, not the terms
    return centred / torch.sqrt(var + 1e-5)


# ---------------------------------------------------------------- correct variants


def ln_functional(x: Tensor) -> Tensor:
    return F.layer_norm(x, (x.shape[-1],), eps=1e-5)


def ln_module_identity_affine(x: Tensor) -> Tensor:
    norm = nn.LayerNorm(x.shape[-1], dtype=x.dtype, device=x.device)  # gamma = 1, beta = 0
    return norm(x)


def ln_rsqrt_var_mean(x: Tensor, eps: float = 1e-5) -> Tensor:
    var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
    return (x - mean) * torch.rsqrt(var + eps)


def ln_float64_inside(x: Tensor) -> Tensor:
    x64 = x.double()
    centred = x64 - x64.mean(-1, keepdim=True)
    var = (centred * centred).mean(-1, keepdim=True)
    return (centred / (var + 1e-5).sqrt()).to(x.dtype)


CASES = [
    BlindCase(
        check=CHECK,
        name="eps_added_to_std",
        code=ln_eps_outside_sqrt,
        kind="mistake",
        what="I added eps to the standard deviation, (x - mu) / (sigma + eps), instead of "
        "inside the square root; it shows for rows with a small variance.",
    ),
    BlindCase(
        check=CHECK,
        name="no_eps",
        code=ln_no_eps,
        kind="mistake",
        what="I left eps out, so a constant row gives 0/0 = NaN and tiny variances blow up.",
    ),
    BlindCase(
        check=CHECK,
        name="layer_norm_over_t_and_d",
        code=ln_whole_sentence,
        kind="mistake",
        what="I called F.layer_norm(x, x.shape[1:]), which normalizes each sentence over all "
        "its positions and features together.",
    ),
    BlindCase(
        check=CHECK,
        name="torch_std_unbiased",
        code=ln_std_unbiased,
        kind="mistake",
        what="I got the variance from torch.std squared, which divides by D - 1 by default.",
    ),
    BlindCase(
        check=CHECK,
        name="keepdim_missing",
        code=ln_no_keepdim,
        kind="mistake",
        what="I forgot keepdim=True on the mean and variance, so (B, T) is broadcast against "
        "the feature axis (an error, or silently wrong when T == D).",
    ),
    BlindCase(
        check=CHECK,
        name="divided_by_variance",
        code=ln_divide_by_variance,
        kind="mistake",
        what="I divided by the variance plus eps instead of its square root.",
    ),
    BlindCase(
        check=CHECK,
        name="mean_of_squares_as_variance",
        code=ln_rms_denominator,
        kind="mistake",
        what="I subtracted the mean but divided by sqrt(mean(x^2) + eps), the RMSNorm "
        "denominator, instead of the variance of x.",
    ),
    BlindCase(
        check=CHECK,
        name="statistics_over_positions",
        code=ln_over_positions,
        kind="mistake",
        what="I took the mean and variance over dim 1 (the positions) instead of the last axis.",
    ),
    BlindCase(
        check=CHECK,
        name="bert_eps_1e_12",
        code=ln_bert_eps,
        kind="mistake",
        what="I used eps = 1e-12 (BERT's) instead of 1e-5; it shows for rows with a small "
        "variance.",
    ),
    BlindCase(
        check=CHECK,
        name="in_place_sub_div",
        code=ln_in_place,
        kind="mistake",
        what="I normalized in place with x.sub_(mean).div_(std), which overwrites the "
        "caller's input and fails on a tensor that requires grad.",
    ),
    BlindCase(
        check=CHECK,
        name="returns_statistics_too",
        code=ln_returns_stats,
        kind="mistake",
        what="I returned (normalized, mean, var) instead of the normalized tensor alone.",
    ),
    BlindCase(
        check=CHECK,
        name="square_of_the_sum",
        code=ln_variance_about_zero_mean,
        kind="mistake",
        what="I wrote the variance as (sum of the centred values)^2 / D instead of the sum of "
        "their squares / D (which is 0 for a centred row).",
    ),
    BlindCase(
        check=CHECK,
        name="f_layer_norm_last_axis",
        code=ln_functional,
        kind="correct",
        what="I called F.layer_norm(x, (D,), eps=1e-5) with no weight or bias.",
    ),
    BlindCase(
        check=CHECK,
        name="fresh_nn_layernorm",
        code=ln_module_identity_affine,
        kind="correct",
        what="I built a fresh nn.LayerNorm(D) inside the function; its gamma starts at 1 and "
        "beta at 0, so it changes nothing.",
    ),
    BlindCase(
        check=CHECK,
        name="var_mean_rsqrt_eps_kwarg",
        code=ln_rsqrt_var_mean,
        kind="correct",
        what="I used torch.var_mean(correction=0) and rsqrt, with eps as an optional argument "
        "(default 1e-5).",
    ),
    BlindCase(
        check=CHECK,
        name="float64_inside",
        code=ln_float64_inside,
        kind="correct",
        what="I computed the statistics in float64 by hand and cast back to the input dtype.",
    ),
]
