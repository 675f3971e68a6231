"""Blind set B19, check_layer_norm (chapter 11): LayerNorm without gamma and beta."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_layer_norm"


# ---------------------------------------------------------------- mistakes


def ln_batch_axes(x: Tensor) -> Tensor:
    mean = x.mean(dim=(0, 1), keepdim=True)  # each feature over the batch
    var = x.var(dim=(0, 1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_unbiased(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, keepdim=True)  # torch's default variance
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_std_default(x: Tensor) -> Tensor:
    return (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + 1e-5)


def ln_time_axis(x: Tensor) -> Tensor:
    mean = x.mean(dim=1, keepdim=True)  # over the positions
    var = x.var(dim=1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_whole_sentence(x: Tensor) -> Tensor:
    mean = x.mean(dim=(1, 2), keepdim=True)  # one mean per sentence
    var = x.var(dim=(1, 2), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_divide_by_var(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / (var + 1e-5)  # forgot the square root


def ln_center_only(x: Tensor) -> Tensor:
    return x - x.mean(dim=-1, keepdim=True)


def ln_no_keepdim(x: Tensor) -> Tensor:
    mean = x.mean(-1)
    var = x.var(-1, unbiased=False)
    return (x - mean.unsqueeze(1)) / torch.sqrt(var.unsqueeze(1) + 1e-5)  # unsqueezed dim 1


def ln_in_place(x: Tensor) -> Tensor:
    var = x.var(-1, unbiased=False, keepdim=True)
    x -= x.mean(-1, keepdim=True)  # no copy of the activations
    x /= torch.sqrt(var + 1e-5)
    return x


def ln_float32(x: Tensor) -> Tensor:
    x = x.float()  # LayerNorm runs in float32
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_global_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean()  # the mean over everything
    return (x - mean) / torch.sqrt(var + 1e-5)


# ---------------------------------------------------------------- correct variants


def ln_functional(x: Tensor) -> Tensor:
    """F.layer_norm over the last axis, no weight and no bias."""
    return F.layer_norm(x, normalized_shape=(x.shape[-1],), eps=1e-5)


def ln_var_mean(x: Tensor, eps: float = 1e-5) -> Tensor:
    """torch.var_mean with correction=0, rsqrt; eps as an argument with a default."""
    var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    return (x - mean) * torch.rsqrt(var + eps)


def ln_by_hand(x: Tensor) -> Tensor:
    """Mean and mean square by hand; the centered copy divided in place."""
    D = x.shape[-1]
    centered = x - x.sum(-1, keepdim=True) / D
    var = (centered * centered).sum(-1, keepdim=True) / D
    centered /= (var + 1e-5).sqrt()
    return centered


CASES = [
    BlindCase(
        CHECK,
        "batchnorm_axes",
        ln_batch_axes,
        "mistake",
        "I normalized each feature over the batch and positions, as BatchNorm does.",
    ),
    BlindCase(
        CHECK,
        "unbiased_variance",
        ln_unbiased,
        "mistake",
        "I used x.var(-1), which divides by D - 1.",
    ),
    BlindCase(
        CHECK,
        "std_plus_eps",
        ln_std_default,
        "mistake",
        "I divided by x.std(-1) + eps, the unbiased standard deviation.",
    ),
    BlindCase(
        CHECK,
        "time_axis",
        ln_time_axis,
        "mistake",
        "I normalized over dim=1, the positions, instead of the features.",
    ),
    BlindCase(
        CHECK,
        "whole_sentence",
        ln_whole_sentence,
        "mistake",
        "I normalized each sentence over all its positions and features together.",
    ),
    BlindCase(
        CHECK,
        "divide_by_variance",
        ln_divide_by_var,
        "mistake",
        "I divided by the variance instead of its square root.",
    ),
    BlindCase(
        CHECK,
        "center_only",
        ln_center_only,
        "mistake",
        "I only subtracted the mean and did not divide.",
    ),
    BlindCase(
        CHECK,
        "no_keepdim",
        ln_no_keepdim,
        "mistake",
        "I took the statistics without keepdim and unsqueezed the wrong axis.",
    ),
    BlindCase(
        CHECK,
        "in_place",
        ln_in_place,
        "mistake",
        "I subtracted and divided in place on x to save memory, which changes the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "float32",
        ln_float32,
        "mistake",
        "I cast x to float32 first, so float64 inputs come back as float32.",
    ),
    BlindCase(
        CHECK,
        "global_variance",
        ln_global_variance,
        "mistake",
        "I subtracted each position's mean but divided by one variance over the whole batch.",
    ),
    BlindCase(
        CHECK,
        "functional_layer_norm",
        ln_functional,
        "correct",
        "F.layer_norm over the last axis without weight and bias.",
    ),
    BlindCase(
        CHECK,
        "var_mean_rsqrt",
        ln_var_mean,
        "correct",
        "torch.var_mean(correction=0) and rsqrt; eps as an argument defaulting to 1e-5.",
    ),
    BlindCase(
        CHECK,
        "by_hand_inplace_temp",
        ln_by_hand,
        "correct",
        "Sums divided by D by hand; the division done in place on the centered copy.",
    ),
]
