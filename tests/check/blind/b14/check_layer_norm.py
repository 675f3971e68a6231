"""Blind set B14, check_layer_norm (chapter 11): LayerNorm without gamma or beta."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_layer_norm"


# ---------------------------------------------------------------- mistakes


def ln_batch_axes(x: Tensor) -> Tensor:
    mean = x.mean((0, 1), keepdim=True)  # each feature over the batch and positions
    var = x.var((0, 1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_unbiased(x: Tensor) -> Tensor:
    return (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True) + 1e-5)


def ln_std_unbiased(x: Tensor) -> Tensor:
    return (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + 1e-5)


def ln_over_positions(x: Tensor) -> Tensor:
    mean = x.mean(dim=1, keepdim=True)  # over the sequence
    var = x.var(dim=1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_over_t_and_d(x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[1:])  # normalized_shape = everything but the batch


def ln_divide_by_var(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    return (x - mean) / (x.var(-1, unbiased=False, keepdim=True) + 1e-5)


def ln_no_centering(x: Tensor) -> Tensor:
    var = x.var(-1, unbiased=False, keepdim=True)
    return x / torch.sqrt(var + 1e-5)  # the variance already removes the mean


def ln_rms(x: Tensor) -> Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5)  # RMS norm


def ln_center_only(x: Tensor) -> Tensor:
    return x - x.mean(dim=-1, keepdim=True)


def ln_mean_over_all(x: Tensor) -> Tensor:
    mean = x.mean()  # one mean for the whole tensor
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_in_place(x: Tensor) -> Tensor:
    var = x.var(-1, unbiased=False, keepdim=True)
    x -= x.mean(-1, keepdim=True)
    x /= torch.sqrt(var + 1e-5)
    return x


# ---------------------------------------------------------------- correct variants


def ln_functional(x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[-1:], eps=1e-5)


def ln_var_mean(x: Tensor, eps: float = 1e-5) -> Tensor:
    var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    return (x - mean) * torch.rsqrt(var + eps)


def ln_squares(x):
    centred = x - x.mean(dim=-1, keepdim=True)
    var = (centred**2).mean(dim=-1, keepdim=True)
    out = centred.clone()
    out /= (var + 1e-5).sqrt()  # in place on my own temporary
    return out


CASES = [
    BlindCase(
        CHECK,
        "batch_axes",
        ln_batch_axes,
        "mistake",
        "I normalized each feature over the batch and positions, BatchNorm's axes.",
    ),
    BlindCase(
        CHECK,
        "unbiased_variance",
        ln_unbiased,
        "mistake",
        "I used x.var(-1), which is the unbiased variance by default.",
    ),
    BlindCase(
        CHECK,
        "std_plus_eps",
        ln_std_unbiased,
        "mistake",
        "I divided by x.std(-1) + eps: unbiased, and eps outside the square root.",
    ),
    BlindCase(
        CHECK,
        "over_positions",
        ln_over_positions,
        "mistake",
        "I normalized over dim=1, the positions, instead of the features.",
    ),
    BlindCase(
        CHECK,
        "over_t_and_d",
        ln_over_t_and_d,
        "mistake",
        "I called F.layer_norm with x.shape[1:], normalizing over positions and features.",
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
        "I divided by the root mean square of x, without centering.",
    ),
    BlindCase(
        CHECK,
        "center_only",
        ln_center_only,
        "mistake",
        "I only subtracted the mean, without dividing by the standard deviation.",
    ),
    BlindCase(
        CHECK,
        "global_mean",
        ln_mean_over_all,
        "mistake",
        "I subtracted one mean over the whole tensor instead of each position's.",
    ),
    BlindCase(
        CHECK,
        "in_place_input",
        ln_in_place,
        "mistake",
        "I normalized x in place with -= and /=, overwriting the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "functional",
        ln_functional,
        "correct",
        "F.layer_norm over the last axis, no weight or bias.",
    ),
    BlindCase(
        CHECK,
        "var_mean_rsqrt",
        ln_var_mean,
        "correct",
        "torch.var_mean with correction=0 and rsqrt; an extra eps argument.",
    ),
    BlindCase(
        CHECK,
        "mean_of_squares",
        ln_squares,
        "correct",
        "The variance as the mean of squared deviations; /= on my own copy.",
    ),
]
