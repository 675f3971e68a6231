"""Blind set B17, check_layer_norm (chapter 11): LayerNorm without gamma and beta, as readers
write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_layer_norm"


# ---------------------------------------------------------------- mistakes


def ln_batch_norm_axes(x: Tensor) -> Tensor:
    mean = x.mean(dim=(0, 1), keepdim=True)  # every feature over all the tokens
    var = x.var(dim=(0, 1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_unbiased_var(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, keepdim=True)  # torch.var's default
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_unbiased_std(x: Tensor) -> Tensor:
    return (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + 1e-5)


def ln_over_positions(x: Tensor) -> Tensor:
    mean = x.mean(dim=1, keepdim=True)  # over the sequence
    var = x.var(dim=1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_over_sentence(x: Tensor) -> Tensor:
    mean = x.mean(dim=(-2, -1), keepdim=True)  # the whole (T, D) sample, as LayerNorm([T, D])
    var = x.var(dim=(-2, -1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_mean_not_subtracted(x: Tensor) -> Tensor:
    var = x.var(-1, unbiased=False, keepdim=True)
    return x / torch.sqrt(var + 1e-5)


def ln_divide_by_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / (var + 1e-5)  # normalise by the variance


def ln_rms_norm(x: Tensor) -> Tensor:
    rms = torch.sqrt((x**2).mean(-1, keepdim=True) + 1e-5)  # no mean, as in modern models
    return x / rms


def ln_no_keepdim(x: Tensor) -> Tensor:
    mean = x.mean(-1)
    var = x.var(-1, unbiased=False)
    return (x - mean) / torch.sqrt(var + 1e-5)  # broadcasting handles the shapes


def ln_in_place(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    x -= mean  # no extra copy of x
    x /= torch.sqrt(var + 1e-5)
    return x


def ln_std_of_raw_squares(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = (x**2).mean(-1, keepdim=True) - mean  # E[x^2] - E[x]
    return (x - mean) / torch.sqrt(var + 1e-5)


# ---------------------------------------------------------------- correct variants


def ln_functional(x: Tensor) -> Tensor:
    """F.layer_norm over the last axis, without weight and bias."""
    return F.layer_norm(x, x.shape[-1:], eps=1e-5)


def ln_var_mean_rsqrt(x: Tensor, eps: float = 1e-5) -> Tensor:
    """torch.var_mean with correction=0 and rsqrt; eps as an argument with a default."""
    var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
    return (x - mean) * torch.rsqrt(var + eps)


def ln_second_moment(x: Tensor) -> Tensor:
    """The variance as E[x^2] - E[x]^2."""
    mean = x.mean(-1, keepdim=True)
    var = (x * x).mean(-1, keepdim=True) - mean * mean
    return (x - mean) / (var + 1e-5).sqrt()


def ln_centred_in_place(x: Tensor) -> Tensor:
    """In-place operations, but on a centred copy of its own, never on x."""
    var = x.var(dim=-1, correction=0, keepdim=True)
    centred = x - x.mean(dim=-1, keepdim=True)
    centred /= (var + 1e-5).sqrt()
    return centred


CASES = [
    BlindCase(
        CHECK,
        "batch_norm_axes",
        ln_batch_norm_axes,
        "mistake",
        "I normalized each feature over the batch and the positions (0, 1): BatchNorm's axes.",
    ),
    BlindCase(
        CHECK,
        "unbiased_variance",
        ln_unbiased_var,
        "mistake",
        "I used x.var(-1), which is the unbiased variance (divides by D - 1).",
    ),
    BlindCase(
        CHECK,
        "unbiased_std_plus_eps",
        ln_unbiased_std,
        "mistake",
        "I divided by x.std(-1) + eps: torch.std is unbiased by default.",
    ),
    BlindCase(
        CHECK,
        "over_positions",
        ln_over_positions,
        "mistake",
        "I normalized over dim=1, the positions of each sentence, instead of the features.",
    ),
    BlindCase(
        CHECK,
        "over_whole_sentence",
        ln_over_sentence,
        "mistake",
        "I normalized each sentence as a whole, over (T, D), like nn.LayerNorm([T, D]).",
    ),
    BlindCase(
        CHECK,
        "mean_not_subtracted",
        ln_mean_not_subtracted,
        "mistake",
        "I divided by the standard deviation but forgot to subtract the mean.",
    ),
    BlindCase(
        CHECK,
        "divided_by_variance",
        ln_divide_by_variance,
        "mistake",
        "I divided by the variance instead of its square root.",
    ),
    BlindCase(
        CHECK,
        "rms_norm",
        ln_rms_norm,
        "mistake",
        "I wrote RMSNorm: x divided by the root mean square, without centring.",
    ),
    BlindCase(
        CHECK,
        "no_keepdim",
        ln_no_keepdim,
        "mistake",
        "I took the mean and variance without keepdim=True, so they do not broadcast against x "
        "along the right axis.",
    ),
    BlindCase(
        CHECK,
        "in_place_on_input",
        ln_in_place,
        "mistake",
        "I normalized x in place with -= and /=, which overwrites the caller's tensor (and fails "
        "for a leaf that requires grad).",
    ),
    BlindCase(
        CHECK,
        "variance_minus_mean",
        ln_std_of_raw_squares,
        "mistake",
        "I wrote the variance as E[x^2] - E[x], forgetting to square the mean.",
    ),
    BlindCase(
        CHECK,
        "functional_layer_norm",
        ln_functional,
        "correct",
        "F.layer_norm over the last axis with no weight and no bias.",
    ),
    BlindCase(
        CHECK,
        "var_mean_rsqrt",
        ln_var_mean_rsqrt,
        "correct",
        "torch.var_mean(correction=0) and rsqrt; eps as an extra argument with default 1e-5.",
    ),
    BlindCase(
        CHECK,
        "second_moment",
        ln_second_moment,
        "correct",
        "The variance as E[x^2] - E[x]^2.",
    ),
    BlindCase(
        CHECK,
        "in_place_on_own_copy",
        ln_centred_in_place,
        "correct",
        "A centred copy of x, then an in-place division on that copy only.",
    ),
]
