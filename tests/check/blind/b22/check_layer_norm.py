"""Blind set B22, check_layer_norm (chapter 11): LayerNorm without gamma and beta as readers
write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_layer_norm"

# ---------------------------------------------------------------- mistakes


def ln_batch_norm_axes(x: Tensor) -> Tensor:
    mean = x.mean((0, 1), keepdim=True)
    var = x.var((0, 1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_unbiased(x: Tensor) -> Tensor:
    return (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True) + 1e-5)


def ln_over_t_and_d(x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[1:])  # normalized_shape = everything but the batch


def ln_over_time(x: Tensor) -> Tensor:
    mean = x.mean(1, keepdim=True)
    var = x.var(1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_divide_by_var(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / (var + 1e-5)


def ln_no_centering(x: Tensor) -> Tensor:
    var = x.var(-1, unbiased=False, keepdim=True)
    return x / torch.sqrt(var + 1e-5)


def ln_var_uncentered(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = (x**2).mean(-1, keepdim=True)  # E[x^2]
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_no_keepdim(x: Tensor) -> Tensor:
    mean = x.mean(-1)
    var = x.var(-1, unbiased=False)
    return (x - mean.unsqueeze(1)) / torch.sqrt(var.unsqueeze(1) + 1e-5)  # wrong axis re-added


def ln_in_place(x: Tensor) -> Tensor:
    x -= x.mean(-1, keepdim=True)  # center in place to save memory
    return x / torch.sqrt((x**2).mean(-1, keepdim=True) + 1e-5)


def ln_global_mean(x: Tensor) -> Tensor:
    mean = x.mean()
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_unit_length(x: Tensor) -> Tensor:
    x = x - x.mean(-1, keepdim=True)
    return x / (x.norm(dim=-1, keepdim=True) + 1e-5)  # normalized to length 1


def ln_std_plus_eps_large(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-2)  # read "1e-5" as 1e-2


# ---------------------------------------------------------------- correct variants


def ln_functional(x: Tensor) -> Tensor:
    return F.layer_norm(x, (x.shape[-1],), eps=1e-5)


def ln_module(x: Tensor) -> Tensor:
    norm = nn.LayerNorm(x.shape[-1], elementwise_affine=False).to(x.device, x.dtype)
    return norm(x)


def ln_var_mean_rsqrt(x: Tensor, eps: float = 1e-5) -> Tensor:
    var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
    return (x - mean) * torch.rsqrt(var + eps)


def ln_by_hand(x: Tensor) -> Tensor:
    d = x.shape[-1]
    centered = x - x.sum(dim=2, keepdim=True) / d
    var = centered.pow(2).sum(dim=2, keepdim=True) / d
    return centered / (var + 1e-5).sqrt()


CASES = [
    BlindCase(
        CHECK,
        "batch_norm_axes",
        ln_batch_norm_axes,
        "mistake",
        "I averaged over (B, T), BatchNorm's axes.",
    ),
    BlindCase(
        CHECK, "unbiased", ln_unbiased, "mistake", "I used x.var's default, the unbiased variance."
    ),
    BlindCase(
        CHECK,
        "over_t_and_d",
        ln_over_t_and_d,
        "mistake",
        "I called F.layer_norm with x.shape[1:], normalizing each sequence as a whole.",
    ),
    BlindCase(
        CHECK, "over_time", ln_over_time, "mistake", "I normalized over dim 1, the positions."
    ),
    BlindCase(
        CHECK,
        "divide_by_var",
        ln_divide_by_var,
        "mistake",
        "I divided by the variance, forgetting the square root.",
    ),
    BlindCase(
        CHECK,
        "no_centering",
        ln_no_centering,
        "mistake",
        "I divided by the standard deviation but never subtracted the mean.",
    ),
    BlindCase(
        CHECK,
        "var_uncentered",
        ln_var_uncentered,
        "mistake",
        "I computed the variance as the mean of x^2.",
    ),
    BlindCase(
        CHECK,
        "no_keepdim",
        ln_no_keepdim,
        "mistake",
        "I reduced without keepdim and put the axis back at dim 1.",
    ),
    BlindCase(
        CHECK,
        "in_place",
        ln_in_place,
        "mistake",
        "I subtracted the mean in place, which changes the caller's x.",
    ),
    BlindCase(
        CHECK,
        "global_mean",
        ln_global_mean,
        "mistake",
        "I subtracted the mean of the whole tensor.",
    ),
    BlindCase(
        CHECK,
        "unit_length",
        ln_unit_length,
        "mistake",
        "I divided the centered vector by its L2 norm.",
    ),
    BlindCase(
        CHECK, "eps_1e_2", ln_std_plus_eps_large, "mistake", "I wrote eps = 1e-2 instead of 1e-5."
    ),
    BlindCase(CHECK, "functional", ln_functional, "correct", "F.layer_norm over the last axis."),
    BlindCase(
        CHECK,
        "module",
        ln_module,
        "correct",
        "nn.LayerNorm(D, elementwise_affine=False) built on the fly.",
    ),
    BlindCase(
        CHECK,
        "var_mean_rsqrt",
        ln_var_mean_rsqrt,
        "correct",
        "torch.var_mean with correction=0 and rsqrt; an eps argument.",
    ),
    BlindCase(CHECK, "by_hand", ln_by_hand, "correct", "Sums divided by D, written out."),
]
