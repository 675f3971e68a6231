"""Blind set B34, check_layer_norm (chapter 11): LayerNorm without gamma or beta, by readers."""

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


def ln_unbiased(x: Tensor) -> Tensor:
    return (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True) + 1e-5)


def ln_std_plus_eps(x: Tensor) -> Tensor:
    std = x.std(-1, unbiased=False, keepdim=True)
    return (x - x.mean(-1, keepdim=True)) / (std + 1e-5)  # eps outside the root


def ln_no_eps(x: Tensor) -> Tensor:
    return (x - x.mean(-1, keepdim=True)) / x.var(-1, unbiased=False, keepdim=True).sqrt()


def ln_over_time(x: Tensor) -> Tensor:
    mean = x.mean(1, keepdim=True)  # over the positions
    var = x.var(1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_over_all(x: Tensor) -> Tensor:
    mean = x.mean((1, 2), keepdim=True)  # the whole sentence
    var = x.var((1, 2), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_divide_by_var(x: Tensor) -> Tensor:
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - x.mean(-1, keepdim=True)) / (var + 1e-5)  # forgot the square root


def ln_no_keepdim(x: Tensor) -> Tensor:
    mean = x.mean(-1)
    var = x.var(-1, unbiased=False)
    return ((x.transpose(0, -1) - mean.T) / torch.sqrt(var.T + 1e-5)).transpose(0, -1)


def ln_no_centering(x: Tensor) -> Tensor:
    var = x.var(-1, unbiased=False, keepdim=True)
    return x / torch.sqrt(var + 1e-5)  # scale only


def ln_rms(x: Tensor) -> Tensor:
    return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5)  # RMSNorm


def ln_eps_big(x: Tensor) -> Tensor:
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - x.mean(-1, keepdim=True)) / torch.sqrt(var + 1e-3)  # a safer eps


def ln_in_place(x: Tensor) -> Tensor:
    x -= x.mean(-1, keepdim=True)  # saves memory
    x /= torch.sqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5)
    return x


def ln_minmax(x: Tensor) -> Tensor:
    lo = x.amin(-1, keepdim=True)
    hi = x.amax(-1, keepdim=True)
    return (x - lo) / (hi - lo + 1e-5)


# ---------------------------------------------------------------- correct variants


def ln_functional(x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[-1:], eps=1e-5)


def ln_var_mean(x: Tensor, eps: float = 1e-5) -> Tensor:
    var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
    return (x - mean) * torch.rsqrt(var + eps)


def ln_by_hand(x: Tensor) -> Tensor:
    D = x.shape[-1]
    mean = x.sum(dim=2, keepdim=True) / D
    centered = x - mean
    var = (centered * centered).sum(dim=2, keepdim=True) / D
    return centered / (var + 1e-5) ** 0.5


CASES = [
    BlindCase(
        CHECK,
        "batchnorm_axes",
        ln_batch_axes,
        "mistake",
        "I normalized over the batch and the positions, (0, 1)",
    ),
    BlindCase(
        CHECK,
        "unbiased_variance",
        ln_unbiased,
        "mistake",
        "I used x.var(-1), which is the unbiased variance by default",
    ),
    BlindCase(
        CHECK,
        "eps_outside_root",
        ln_std_plus_eps,
        "mistake",
        "I divided by std + eps instead of sqrt(var + eps)",
    ),
    BlindCase(CHECK, "no_eps", ln_no_eps, "mistake", "I left out eps"),
    BlindCase(
        CHECK, "over_positions", ln_over_time, "mistake", "I normalized over dim=1, the positions"
    ),
    BlindCase(
        CHECK,
        "whole_sentence",
        ln_over_all,
        "mistake",
        "I normalized over the positions and the features together",
    ),
    BlindCase(
        CHECK,
        "divide_by_variance",
        ln_divide_by_var,
        "mistake",
        "I divided by the variance instead of its square root",
    ),
    BlindCase(
        CHECK,
        "rms_norm",
        ln_rms,
        "mistake",
        "I divided by the root mean square without subtracting the mean",
    ),
    BlindCase(
        CHECK,
        "no_centering",
        ln_no_centering,
        "mistake",
        "I divided by the standard deviation but did not subtract the mean",
    ),
    BlindCase(CHECK, "bigger_eps", ln_eps_big, "mistake", "I used eps = 1e-3 to be safe"),
    BlindCase(
        CHECK,
        "in_place_on_input",
        ln_in_place,
        "mistake",
        "I normalized x in place with -= and /= to save memory",
    ),
    BlindCase(
        CHECK,
        "min_max",
        ln_minmax,
        "mistake",
        "I rescaled each position to [0, 1] with its min and max",
    ),
    BlindCase(
        CHECK,
        "transpose_no_keepdim",
        ln_no_keepdim,
        "correct",
        "I computed mean and var without keepdim and broadcast by transposing",
    ),
    BlindCase(
        CHECK,
        "functional",
        ln_functional,
        "correct",
        "I called F.layer_norm with no weight and bias",
    ),
    BlindCase(
        CHECK,
        "var_mean_rsqrt",
        ln_var_mean,
        "correct",
        "I used torch.var_mean with correction=0 and rsqrt, eps as an argument",
    ),
    BlindCase(
        CHECK,
        "sums_by_hand",
        ln_by_hand,
        "correct",
        "I wrote the mean and the biased variance as sums divided by D",
    ),
]
