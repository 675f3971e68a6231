"""Blind set B18, check_layer_norm (chapter 11): LayerNorm without gamma and beta as readers
write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_layer_norm"


# ---------------------------------------------------------------- mistakes


def ln_batch_axes(x: Tensor) -> Tensor:
    mean = x.mean(dim=(0, 1), keepdim=True)  # statistics over the batch and positions
    var = x.var(dim=(0, 1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_unbiased_var(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, keepdim=True)  # torch.var's default
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_eps_outside_sqrt(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    std = x.std(-1, unbiased=False, keepdim=True)
    return (x - mean) / (std + 1e-5)


def ln_over_positions(x: Tensor) -> Tensor:
    mean = x.mean(dim=1, keepdim=True)  # over the T positions of each feature
    var = x.var(dim=1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_rms_only(x: Tensor) -> Tensor:
    ms = x.pow(2).mean(-1, keepdim=True)  # no mean subtracted
    return x / torch.sqrt(ms + 1e-5)


def ln_divide_by_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / (var + 1e-5)


def ln_no_keepdim(x: Tensor) -> Tensor:
    mean = x.mean(-1)
    var = x.var(-1, unbiased=False)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_in_place(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    std = torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + 1e-5)
    x -= mean  # no extra copy of x
    x /= std
    return x


def ln_per_sample(x: Tensor) -> Tensor:
    mean = x.mean(dim=(1, 2), keepdim=True)  # each sample from its own content
    var = x.var(dim=(1, 2), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_sqrt_of_sum(x: Tensor) -> Tensor:
    centered = x - x.mean(-1, keepdim=True)
    norm = torch.sqrt((centered**2).sum(-1, keepdim=True) + 1e-5)  # the length of the vector
    return centered / norm


# ---------------------------------------------------------------- correct variants


def ln_functional(x: Tensor) -> Tensor:
    """F.layer_norm over the last axis, no weight or bias (eps 1e-5 is its default)."""
    return F.layer_norm(x, normalized_shape=(x.shape[-1],))


def ln_var_mean_rsqrt(x: Tensor, eps: float = 1e-5) -> Tensor:
    """torch.var_mean with correction=0 and rsqrt; eps as an extra argument."""
    var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
    return (x - mean) * torch.rsqrt(var + eps)


def ln_moments(x: Tensor) -> Tensor:
    """The variance as E[x^2] - E[x]^2; in-place ops only on the new tensors."""
    D = x.size(-1)
    mean = x.sum(dim=-1, keepdim=True) / D
    var = (x * x).sum(dim=-1, keepdim=True) / D - mean**2
    out = x - mean
    out.div_(var.add_(1e-5).sqrt_())
    return out


CASES = [
    BlindCase(
        CHECK,
        "batch_norm_axes",
        ln_batch_axes,
        "mistake",
        "I took the mean and variance over (B, T), one statistic per feature: BatchNorm's axes.",
    ),
    BlindCase(
        CHECK,
        "unbiased_variance",
        ln_unbiased_var,
        "mistake",
        "I used x.var(-1) with its default, the unbiased variance (divided by D - 1).",
    ),
    BlindCase(
        CHECK,
        "eps_outside_sqrt",
        ln_eps_outside_sqrt,
        "mistake",
        "I divided by std + eps instead of sqrt(var + eps).",
    ),
    BlindCase(
        CHECK,
        "over_positions",
        ln_over_positions,
        "mistake",
        "I normalized over dim=1, each feature over the positions of its sentence.",
    ),
    BlindCase(
        CHECK,
        "rms_only",
        ln_rms_only,
        "mistake",
        "I divided by the root mean square and never subtracted the mean.",
    ),
    BlindCase(
        CHECK,
        "divide_by_variance",
        ln_divide_by_variance,
        "mistake",
        "I divided by the variance (plus eps) instead of its square root.",
    ),
    BlindCase(
        CHECK,
        "no_keepdim",
        ln_no_keepdim,
        "mistake",
        "I forgot keepdim=True, so the (B, T) mean does not line up with (B, T, D).",
    ),
    BlindCase(
        CHECK,
        "in_place_on_input",
        ln_in_place,
        "mistake",
        "I normalized with x -= mean and x /= std, which overwrites the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "per_sample_over_t_and_d",
        ln_per_sample,
        "mistake",
        "I took one mean and variance per sample, over all its positions and features.",
    ),
    BlindCase(
        CHECK,
        "sqrt_of_sum",
        ln_sqrt_of_sum,
        "mistake",
        "I divided the centered vector by the square root of its sum of squares, not of its mean.",
    ),
    BlindCase(
        CHECK,
        "functional_layer_norm",
        ln_functional,
        "correct",
        "F.layer_norm over the last axis, with no weight and no bias.",
    ),
    BlindCase(
        CHECK,
        "var_mean_rsqrt",
        ln_var_mean_rsqrt,
        "correct",
        "torch.var_mean with correction=0 and rsqrt; eps as an extra argument with a default.",
    ),
    BlindCase(
        CHECK,
        "moments_in_place_temporaries",
        ln_moments,
        "correct",
        "The variance as E[x^2] - E[x]^2; in-place div_, add_, sqrt_ only on new tensors.",
    ),
]
