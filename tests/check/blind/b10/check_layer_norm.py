"""Blind set B10, check_layer_norm (chapter 11): LayerNorm without gamma and beta as readers
write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_layer_norm"


# ---------------------------------------------------------------- mistakes


def ln_batch_axes(x: Tensor) -> Tensor:
    mean = x.mean(dim=(0, 1), keepdim=True)  # over the batch and the positions
    var = x.var(dim=(0, 1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_unbiased_std(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    std = x.std(-1, keepdim=True)  # torch's default std
    return (x - mean) / torch.sqrt(std**2 + 1e-5)


def ln_over_positions(x: Tensor) -> Tensor:
    mean = x.mean(dim=1, keepdim=True)
    var = x.var(dim=1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_no_centering(x: Tensor) -> Tensor:
    var = x.var(-1, unbiased=False, keepdim=True)
    return x / torch.sqrt(var + 1e-5)  # divide by the standard deviation


def ln_divide_by_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / (var + 1e-5)


def ln_whole_tensor(x: Tensor) -> Tensor:
    return (x - x.mean()) / torch.sqrt(x.var(unbiased=False) + 1e-5)


def ln_second_moment(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = (x**2).mean(-1, keepdim=True)  # E[x^2]
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_no_keepdim(x: Tensor) -> Tensor:
    mean = x.mean(-1)
    var = x.var(-1, unbiased=False)
    return (x - mean[..., None]) / torch.sqrt(var + 1e-5)[:, None]


def ln_in_place(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    x -= mean  # no extra memory
    x /= torch.sqrt(var + 1e-5)
    return x


def ln_f_layer_norm_sentence(x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[1:], eps=1e-5)  # each sentence normalised


def ln_f_normalize(x: Tensor) -> Tensor:
    centred = x - x.mean(dim=-1, keepdim=True)
    return F.normalize(centred, dim=-1, eps=1e-5)  # divide by the length of the vector


def ln_rsqrt_no_mean_in_var(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = (x**2).mean(-1, keepdim=True) - mean  # E[x^2] - E[x]
    return (x - mean) * torch.rsqrt(var + 1e-5)


# ---------------------------------------------------------------- correct variants


def ln_functional(x: Tensor) -> Tensor:
    return F.layer_norm(x, (x.shape[-1],), eps=1e-5)


def ln_var_mean_rsqrt(x: Tensor, eps: float = 1e-5) -> Tensor:
    """torch.var_mean with correction=0, rsqrt; eps as an extra optional argument."""
    var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    return (x - mean) * torch.rsqrt(var + eps)


def ln_by_hand(x: Tensor) -> Tensor:
    D = x.size(-1)
    centred = x - x.sum(-1, keepdim=True) / D
    var = centred.pow(2).sum(-1, keepdim=True) / D
    out = centred.clone()
    out.div_((var + 1e-5).sqrt())  # in place on my own copy
    return out


def ln_module_inside(x: Tensor) -> Tensor:
    """nn.LayerNorm without affine parameters, built for the input's width."""
    norm = torch.nn.LayerNorm(x.shape[-1], eps=1e-5, elementwise_affine=False)
    return norm(x)


CASES = [
    BlindCase(
        CHECK,
        "batch_norm_axes",
        ln_batch_axes,
        "mistake",
        "I took the mean and variance over dims (0, 1), BatchNorm's axes.",
    ),
    BlindCase(
        CHECK,
        "unbiased_std",
        ln_unbiased_std,
        "mistake",
        "I used x.std(-1), whose default is the unbiased estimate.",
    ),
    BlindCase(
        CHECK,
        "over_positions",
        ln_over_positions,
        "mistake",
        "I normalised over dim=1, the positions of the sentence, instead of the features.",
    ),
    BlindCase(
        CHECK,
        "no_centering",
        ln_no_centering,
        "mistake",
        "I divided by the standard deviation but forgot to subtract the mean.",
    ),
    BlindCase(
        CHECK,
        "divide_by_variance",
        ln_divide_by_variance,
        "mistake",
        "I divided by var + eps instead of its square root.",
    ),
    BlindCase(
        CHECK,
        "whole_tensor_stats",
        ln_whole_tensor,
        "mistake",
        "I used x.mean() and x.var() without a dim, one mean and variance for the whole batch.",
    ),
    BlindCase(
        CHECK,
        "second_moment_as_variance",
        ln_second_moment,
        "mistake",
        "I computed the variance as mean(x**2) without subtracting the mean first.",
    ),
    BlindCase(
        CHECK,
        "no_keepdim",
        ln_no_keepdim,
        "mistake",
        "Without keepdim I put the axis back with [:, None] for the variance, which is the "
        "position axis of a (B, T) tensor.",
    ),
    BlindCase(
        CHECK,
        "in_place_on_input",
        ln_in_place,
        "mistake",
        "I subtracted and divided in place with -= and /=, which changes the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "f_layer_norm_whole_sentence",
        ln_f_layer_norm_sentence,
        "mistake",
        "I called F.layer_norm with x.shape[1:], which normalises each sentence over (T, D).",
    ),
    BlindCase(
        CHECK,
        "f_normalize",
        ln_f_normalize,
        "mistake",
        "I centred x and then used F.normalize, which divides by the vector's length, "
        "sqrt(D) times its standard deviation.",
    ),
    BlindCase(
        CHECK,
        "variance_minus_mean",
        ln_rsqrt_no_mean_in_var,
        "mistake",
        "I wrote the variance as E[x^2] - E[x], forgetting to square the mean.",
    ),
    BlindCase(
        CHECK,
        "f_layer_norm_last_dim",
        ln_functional,
        "correct",
        "F.layer_norm over the last dimension, without weight or bias.",
    ),
    BlindCase(
        CHECK,
        "var_mean_rsqrt",
        ln_var_mean_rsqrt,
        "correct",
        "torch.var_mean with correction=0 and rsqrt; eps as an extra optional argument.",
    ),
    BlindCase(
        CHECK,
        "sums_by_hand",
        ln_by_hand,
        "correct",
        "Mean and variance from sums divided by D; the division done in place on a copy.",
    ),
    BlindCase(
        CHECK,
        "layernorm_module_no_affine",
        ln_module_inside,
        "correct",
        "A fresh nn.LayerNorm(D, elementwise_affine=False) applied to x.",
    ),
]
