"""Blind set B29, check_layer_norm (chapter 11): LayerNorm over the features, no gamma or beta."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_layer_norm"


# ---------------------------------------------------------------- mistakes


def ln_batch_axes(x: Tensor) -> Tensor:
    mean = x.mean(dim=(0, 1), keepdim=True)  # every position of the batch
    var = x.var(dim=(0, 1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_unbiased(x: Tensor) -> Tensor:
    return (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True) + 1e-5)


def ln_eps_outside_sqrt(x: Tensor) -> Tensor:
    std = x.std(dim=-1, unbiased=False, keepdim=True)
    return (x - x.mean(dim=-1, keepdim=True)) / (std + 1e-5)


def ln_no_eps(x: Tensor) -> Tensor:
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return (x - mean) / var.sqrt()


def ln_over_positions(x: Tensor) -> Tensor:
    mean = x.mean(dim=1, keepdim=True)  # dim 1: one mean per feature of a sentence
    var = x.var(dim=1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_divide_by_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / (var + 1e-5)


def ln_no_keepdim(x: Tensor) -> Tensor:
    mean = x.mean(dim=-1)
    var = x.var(dim=-1, unbiased=False)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_rms_denominator(x: Tensor) -> Tensor:
    ms = (x**2).mean(dim=-1, keepdim=True)  # mean of the squares
    return (x - x.mean(dim=-1, keepdim=True)) / torch.sqrt(ms + 1e-5)


def ln_eps_bert(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-12)  # BERT's layer_norm_eps


def ln_whole_sentence(x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[1:])  # normalized_shape: everything after the batch


def ln_in_place(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    std = torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + 1e-5)
    return x.sub_(mean).div_(std)  # no extra memory


def ln_statistics_detached(x: Tensor) -> Tensor:
    with torch.no_grad():  # the statistics are just numbers
        mean = x.mean(-1, keepdim=True)
        std = torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + 1e-5)
    return (x - mean) / std


# ---------------------------------------------------------------- correct variants


def ln_functional(x: Tensor) -> Tensor:
    return F.layer_norm(x, (x.shape[-1],), eps=1e-5)


def ln_var_mean_rsqrt(x: Tensor, eps: float = 1e-5) -> Tensor:
    var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
    return (x - mean) * torch.rsqrt(var + eps)


def ln_centered_square(x: Tensor) -> Tensor:
    D = x.shape[-1]
    centered = x - x.sum(dim=-1, keepdim=True) / D
    var = (centered * centered).sum(dim=-1, keepdim=True) / D
    return centered / (var + 1e-5) ** 0.5


CASES = [
    BlindCase(
        CHECK,
        "batch_norm_axes",
        ln_batch_axes,
        "mistake",
        "I took the mean and variance over dims (0, 1), all positions of the batch.",
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
        ln_eps_outside_sqrt,
        "mistake",
        "I divided by std + eps instead of sqrt(var + eps).",
    ),
    BlindCase(
        CHECK,
        "no_eps",
        ln_no_eps,
        "mistake",
        "I left eps out, so a constant vector divides 0 by 0.",
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
        "divide_by_variance",
        ln_divide_by_variance,
        "mistake",
        "I divided by the variance instead of its square root.",
    ),
    BlindCase(
        CHECK,
        "no_keepdim",
        ln_no_keepdim,
        "mistake",
        "I took the mean and variance without keepdim=True, so they no longer line up with x.",
    ),
    BlindCase(
        CHECK,
        "rms_denominator",
        ln_rms_denominator,
        "mistake",
        "I subtracted the mean but divided by the root of the mean of x^2, not of (x - mean)^2.",
    ),
    BlindCase(
        CHECK,
        "eps_1e_12",
        ln_eps_bert,
        "mistake",
        "I used eps = 1e-12, BERT's value, instead of 1e-5.",
    ),
    BlindCase(
        CHECK,
        "whole_sentence_shape",
        ln_whole_sentence,
        "mistake",
        "I called F.layer_norm with normalized_shape x.shape[1:], which normalizes each sentence "
        "over (T, D) together.",
    ),
    BlindCase(
        CHECK,
        "in_place_sub_div",
        ln_in_place,
        "mistake",
        "I normalized with x.sub_(mean).div_(std), which overwrites the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "statistics_without_grad",
        ln_statistics_detached,
        "mistake",
        "I computed the mean and std under torch.no_grad(), as constants, so the gradient "
        "misses their part.",
    ),
    BlindCase(
        CHECK,
        "functional_layer_norm",
        ln_functional,
        "correct",
        "F.layer_norm over the last axis, no weight or bias, eps=1e-5.",
    ),
    BlindCase(
        CHECK,
        "var_mean_rsqrt",
        ln_var_mean_rsqrt,
        "correct",
        "torch.var_mean with correction=0 and rsqrt; eps an optional argument, 1e-5 by default.",
    ),
    BlindCase(
        CHECK,
        "sums_by_hand",
        ln_centered_square,
        "correct",
        "Mean and biased variance written as sums divided by D, then a power 0.5.",
    ),
]
