"""Blind set B12, check_layer_norm (chapter 11): LayerNorm without gamma and beta."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_layer_norm"


# ---------------------------------------------------------------- mistakes


def ln_unbiased(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(x.var(-1, keepdim=True) + 1e-5)  # torch's default var


def ln_batch_axes(x: Tensor) -> Tensor:
    mean = x.mean((0, 1), keepdim=True)
    var = x.var((0, 1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_over_time(x: Tensor) -> Tensor:
    mean = x.mean(1, keepdim=True)  # over the positions of the sentence
    var = x.var(1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_no_keepdim(x: Tensor) -> Tensor:
    mean = x.mean(-1)  # (B, T)
    var = x.var(-1, unbiased=False)
    return (x - mean.unsqueeze(0)) / torch.sqrt(var + 1e-5).unsqueeze(0)


def ln_no_centering(x: Tensor) -> Tensor:
    var = x.var(-1, unbiased=False, keepdim=True)
    return x / torch.sqrt(var + 1e-5)  # mean 0 handled by the variance


def ln_divide_by_var(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / (var + 1e-5)


def ln_per_sequence(x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[1:], eps=1e-5)  # everything but the batch


def ln_rms_of_x(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    ms = (x**2).mean(-1, keepdim=True)  # E[x^2] as the variance
    return (x - mean) / torch.sqrt(ms + 1e-5)


def ln_in_place(x: Tensor) -> Tensor:
    x -= x.mean(-1, keepdim=True)  # saves memory
    x /= torch.sqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5)
    return x


# ---------------------------------------------------------------- correct variants


def ln_functional(x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[-1:], eps=1e-5)


def ln_var_mean(x: Tensor, eps: float = 1e-5) -> Tensor:
    var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
    return (x - mean) * torch.rsqrt(var + eps)


def ln_module(x: Tensor) -> Tensor:
    norm = nn.LayerNorm(x.shape[-1], elementwise_affine=False, dtype=x.dtype, device=x.device)
    return norm(x)


def ln_manual_centered(x: Tensor) -> Tensor:
    centered = x - x.mean(dim=-1, keepdim=True)
    denom = (centered * centered).mean(dim=-1, keepdim=True)
    denom.add_(1e-5).sqrt_()  # in place on its own temporary
    return centered / denom


CASES = [
    BlindCase(
        CHECK,
        "unbiased_variance",
        ln_unbiased,
        "mistake",
        "I used x.var(-1), which divides by D - 1.",
    ),
    BlindCase(
        CHECK,
        "batch_norm_axes",
        ln_batch_axes,
        "mistake",
        "I took the mean and variance over the batch and positions (0, 1), BatchNorm's.",
    ),
    BlindCase(
        CHECK,
        "over_positions",
        ln_over_time,
        "mistake",
        "I normalised over dim 1, the positions of a sentence, instead of the features.",
    ),
    BlindCase(
        CHECK,
        "no_keepdim",
        ln_no_keepdim,
        "mistake",
        "I took mean and variance without keepdim and unsqueezed at the front to make them "
        "broadcast, which lines them up with the wrong axes.",
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
        ln_divide_by_var,
        "mistake",
        "I divided by var + eps, forgetting the square root.",
    ),
    BlindCase(
        CHECK,
        "per_sequence",
        ln_per_sequence,
        "mistake",
        "I gave F.layer_norm x.shape[1:], so it normalises each whole sequence (T, D).",
    ),
    BlindCase(
        CHECK,
        "second_moment",
        ln_rms_of_x,
        "mistake",
        "I used the mean of x squared as the variance, without centering it first.",
    ),
    BlindCase(
        CHECK,
        "in_place_on_input",
        ln_in_place,
        "mistake",
        "I subtracted the mean and divided in place on x to save memory, which changes "
        "the caller's tensor.",
    ),
    BlindCase(CHECK, "functional", ln_functional, "correct", "F.layer_norm over the last axis."),
    BlindCase(
        CHECK,
        "var_mean_rsqrt",
        ln_var_mean,
        "correct",
        "torch.var_mean with correction=0 and rsqrt; eps as an optional argument.",
    ),
    BlindCase(
        CHECK,
        "module_no_affine",
        ln_module,
        "correct",
        "An nn.LayerNorm without affine parameters built in the input's dtype.",
    ),
    BlindCase(
        CHECK,
        "centered_in_place",
        ln_manual_centered,
        "correct",
        "add_ and sqrt_ in place on its own temporary denominator.",
    ),
]
