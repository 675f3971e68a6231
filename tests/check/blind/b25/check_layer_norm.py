"""Blind set B25, check_layer_norm (chapter 11): LayerNorm without gamma and beta."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_layer_norm"


# ---------------------------------------------------------------- mistakes


def ln_batch_axes(x: Tensor) -> Tensor:
    mean = x.mean((0, 1), keepdim=True)
    var = x.var((0, 1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_unbiased(x: Tensor) -> Tensor:
    return (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True) + 1e-5)


def ln_eps_outside(x: Tensor) -> Tensor:
    std = x.std(-1, unbiased=False, keepdim=True)
    return (x - x.mean(-1, keepdim=True)) / (std + 1e-5)


def ln_no_eps(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    return (x - mean) / x.var(-1, unbiased=False, keepdim=True).sqrt()


def ln_over_positions(x: Tensor) -> Tensor:
    mean = x.mean(1, keepdim=True)  # over the sentence
    var = x.var(1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_over_sentence_and_features(x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[1:])  # the shape of one example


def ln_divide_by_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / (var + 1e-5)


def ln_no_centring(x: Tensor) -> Tensor:
    var = x.var(-1, unbiased=False, keepdim=True)
    return x / torch.sqrt(var + 1e-5)


def ln_rms(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    ms = (x * x).mean(-1, keepdim=True)  # the variance as the mean of the squares
    return (x - mean) / torch.sqrt(ms + 1e-5)


def ln_no_keepdim(x: Tensor) -> Tensor:
    mean = x.mean(-1)
    var = x.var(-1, unbiased=False)
    return (x - mean.unsqueeze(1)) / torch.sqrt(var.unsqueeze(1) + 1e-5)


def ln_eps_bert(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-12)  # BERT's eps


def ln_in_place(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    std = torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + 1e-5)
    return x.sub_(mean).div_(std)  # no extra memory


def ln_var_from_uncentred(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = (x**2).mean(-1, keepdim=True) - mean  # E[x^2] - E[x]
    return (x - mean) / torch.sqrt(var.clamp_min(0) + 1e-5)


# ---------------------------------------------------------------- correct variants


def ln_functional(x: Tensor) -> Tensor:
    return F.layer_norm(x, (x.shape[-1],), eps=1e-5)


def ln_var_mean_rsqrt(x: Tensor, eps: float = 1e-5) -> Tensor:
    var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
    return (x - mean) * torch.rsqrt(var + eps)


def ln_module(x: Tensor) -> Tensor:
    norm = nn.LayerNorm(x.shape[-1], eps=1e-5, elementwise_affine=False)
    return norm.to(dtype=x.dtype, device=x.device)(x)


def ln_centred_squares(x: Tensor) -> Tensor:
    centred = x - x.mean(dim=2, keepdim=True)
    var = (centred * centred).sum(dim=2, keepdim=True) / x.shape[2]
    return centred / (var + 1e-5) ** 0.5


CASES = [
    BlindCase(
        CHECK,
        "batch_norm_axes",
        ln_batch_axes,
        "mistake",
        "I took the mean and variance over (0, 1), the batch and the positions.",
    ),
    BlindCase(
        CHECK,
        "unbiased_variance",
        ln_unbiased,
        "mistake",
        "I used x.var(-1) with its default, the unbiased variance.",
    ),
    BlindCase(
        CHECK,
        "eps_outside_sqrt",
        ln_eps_outside,
        "mistake",
        "I divided by std + eps instead of sqrt(var + eps).",
    ),
    BlindCase(
        CHECK,
        "no_eps",
        ln_no_eps,
        "mistake",
        "I left out eps, so a position whose features are all equal gives NaN.",
    ),
    BlindCase(
        CHECK,
        "over_positions",
        ln_over_positions,
        "mistake",
        "I normalized over dim 1, the positions of the sentence.",
    ),
    BlindCase(
        CHECK,
        "normalized_shape_of_example",
        ln_over_sentence_and_features,
        "mistake",
        "I called F.layer_norm with x.shape[1:], so each sentence is normalized as one block.",
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
        "no_centring",
        ln_no_centring,
        "mistake",
        "I divided by the standard deviation but did not subtract the mean.",
    ),
    BlindCase(
        CHECK,
        "mean_square_as_variance",
        ln_rms,
        "mistake",
        "I used the mean of the squares as the variance, as RMSNorm does, but still subtracted "
        "the mean.",
    ),
    BlindCase(
        CHECK,
        "no_keepdim",
        ln_no_keepdim,
        "mistake",
        "I forgot keepdim and put the axis back with unsqueeze(1) instead of unsqueeze(-1).",
    ),
    BlindCase(
        CHECK,
        "eps_1e_12",
        ln_eps_bert,
        "mistake",
        "I used BERT's eps = 1e-12 instead of 1e-5.",
    ),
    BlindCase(
        CHECK,
        "in_place",
        ln_in_place,
        "mistake",
        "I wrote x.sub_(mean).div_(std) to save memory, which overwrites the caller's x.",
    ),
    BlindCase(
        CHECK,
        "variance_minus_mean",
        ln_var_from_uncentred,
        "mistake",
        "I computed the variance as E[x^2] - E[x], forgetting to square the mean.",
    ),
    BlindCase(
        CHECK,
        "functional",
        ln_functional,
        "correct",
        "F.layer_norm over the last axis with no weight or bias.",
    ),
    BlindCase(
        CHECK,
        "var_mean_rsqrt",
        ln_var_mean_rsqrt,
        "correct",
        "torch.var_mean with correction=0 and rsqrt; eps as an argument with the default 1e-5.",
    ),
    BlindCase(
        CHECK,
        "layer_norm_module",
        ln_module,
        "correct",
        "nn.LayerNorm(D, elementwise_affine=False) built inside the function.",
    ),
    BlindCase(
        CHECK,
        "centred_squares",
        ln_centred_squares,
        "correct",
        "The variance as the mean of the squared centred values, dim=2, and ** 0.5.",
    ),
]
