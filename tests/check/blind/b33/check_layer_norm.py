"""Blind set B33, check_layer_norm (chapter 11): LayerNorm without gamma and beta as readers
write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_layer_norm"


# ---------------------------------------------------------------- mistakes


def ln_batch_axes(x: Tensor) -> Tensor:
    mean = x.mean(dim=(0, 1), keepdim=True)  # over the tokens of the batch
    var = x.var(dim=(0, 1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_unbiased(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, keepdim=True)  # torch's default variance
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_over_time(x: Tensor) -> Tensor:
    mean = x.mean(dim=1, keepdim=True)
    var = x.var(dim=1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_divide_by_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / (var + 1e-5)


def ln_only_centred(x: Tensor) -> Tensor:
    return x - x.mean(-1, keepdim=True)  # mean 0; the variance is already about 1


def ln_whole_tensor(x: Tensor) -> Tensor:
    return (x - x.mean()) / torch.sqrt(x.var(unbiased=False) + 1e-5)


def ln_no_keepdim(x: Tensor) -> Tensor:
    mean = x.mean(-1)
    var = x.var(-1, unbiased=False)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_normalized_shape_t_d(x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[1:], eps=1e-5)  # everything but the batch


def ln_in_place(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    std = torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + 1e-5)
    return x.sub_(mean).div_(std)  # no extra memory


def ln_divide_by_norm(x: Tensor) -> Tensor:
    centred = x - x.mean(-1, keepdim=True)
    return centred / (centred.norm(dim=-1, keepdim=True) + 1e-5)  # unit length


def ln_var_mean_swapped(x: Tensor) -> Tensor:
    mean, var = torch.var_mean(x, dim=-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_rms_only(x: Tensor) -> Tensor:
    rms = x.pow(2).mean(-1, keepdim=True)  # mean of squares
    return x / torch.sqrt(rms + 1e-5)


# ---------------------------------------------------------------- correct variants


def ln_functional(x: Tensor) -> Tensor:
    """PyTorch's F.layer_norm over the last axis, no weight or bias."""
    return F.layer_norm(x, (x.shape[-1],), eps=1e-5)


def ln_by_hand(x: Tensor, eps: float = 1e-5) -> Tensor:
    """Mean of squared deviations by hand, rsqrt, and eps as an argument with a default."""
    mu = x.mean(dim=-1, keepdim=True)
    centred = x - mu
    sigma2 = (centred**2).mean(dim=-1, keepdim=True)
    return centred * torch.rsqrt(sigma2 + eps)


def ln_var_mean(x: Tensor) -> Tensor:
    """torch.var_mean with correction=0 (it returns the variance first)."""
    var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
    return (x - mean) / (var + 1e-5).sqrt()


CASES = [
    BlindCase(
        CHECK,
        "batch_axes",
        ln_batch_axes,
        "mistake",
        "I took the mean and variance over dims (0, 1), every token of the batch.",
    ),
    BlindCase(
        CHECK,
        "unbiased",
        ln_unbiased,
        "mistake",
        "I used x.var(-1) with its default, the unbiased variance.",
    ),
    BlindCase(
        CHECK,
        "over_time",
        ln_over_time,
        "mistake",
        "I normalized over dim=1, the positions of each sentence.",
    ),
    BlindCase(
        CHECK,
        "divide_by_variance",
        ln_divide_by_variance,
        "mistake",
        "I divided by var + eps and forgot the square root.",
    ),
    BlindCase(
        CHECK,
        "only_centred",
        ln_only_centred,
        "mistake",
        "I only subtracted the mean and did not divide by the standard deviation.",
    ),
    BlindCase(
        CHECK,
        "whole_tensor",
        ln_whole_tensor,
        "mistake",
        "I used x.mean() and x.var() of the whole tensor.",
    ),
    BlindCase(
        CHECK,
        "no_keepdim",
        ln_no_keepdim,
        "mistake",
        "I took mean(-1) and var(-1) without keepdim=True.",
    ),
    BlindCase(
        CHECK,
        "normalized_shape_t_d",
        ln_normalized_shape_t_d,
        "mistake",
        "I called F.layer_norm(x, x.shape[1:]), normalizing over T and D together.",
    ),
    BlindCase(
        CHECK,
        "in_place",
        ln_in_place,
        "mistake",
        "I normalized x in place with sub_ and div_ to save memory.",
    ),
    BlindCase(
        CHECK,
        "divide_by_norm",
        ln_divide_by_norm,
        "mistake",
        "I divided the centred vector by its norm instead of its standard deviation.",
    ),
    BlindCase(
        CHECK,
        "var_mean_swapped",
        ln_var_mean_swapped,
        "mistake",
        "I unpacked torch.var_mean as (mean, var), but it returns (var, mean).",
    ),
    BlindCase(
        CHECK,
        "rms_only",
        ln_rms_only,
        "mistake",
        "I divided x by the root of its mean square and did not subtract the mean.",
    ),
    BlindCase(
        CHECK,
        "functional",
        ln_functional,
        "correct",
        "F.layer_norm over the last dimension, without weight or bias.",
    ),
    BlindCase(
        CHECK,
        "by_hand",
        ln_by_hand,
        "correct",
        "The mean of squared deviations by hand, rsqrt, eps an argument defaulting to 1e-5.",
    ),
    BlindCase(
        CHECK,
        "var_mean",
        ln_var_mean,
        "correct",
        "torch.var_mean with correction=0, unpacked as (var, mean).",
    ),
]
