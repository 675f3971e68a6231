"""Blind set B6, check_layer_norm (chapter 11): LayerNorm without gamma and beta."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_layer_norm"


# ---------------------------------------------------------------- mistakes


def ln_batch_axes(x: Tensor) -> Tensor:
    mean = x.mean(dim=(0, 1), keepdim=True)  # every feature over the batch and the positions
    var = x.var(dim=(0, 1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_unbiased_std(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    std = x.std(-1, keepdim=True)  # torch's default std
    return (x - mean) / torch.sqrt(std**2 + 1e-5)


def ln_eps_outside_sqrt(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    std = x.var(-1, unbiased=False, keepdim=True).sqrt()
    return (x - mean) / (std + 1e-5)  # as in the Annotated Transformer's LayerNorm


def ln_no_eps(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / var.sqrt()


def ln_over_positions(x: Tensor) -> Tensor:
    mean = x.mean(dim=1, keepdim=True)  # over the sequence
    var = x.var(dim=1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_whole_sentence(x: Tensor) -> Tensor:
    mean = x.mean(dim=(1, 2), keepdim=True)  # one mean per sentence
    var = x.var(dim=(1, 2), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_no_keepdim(x: Tensor) -> Tensor:
    mean = x.mean(-1)  # (B, T)
    var = x.var(-1, unbiased=False)
    return (x - mean.unsqueeze(-1)) / torch.sqrt(var + 1e-5)[..., None, :]


def ln_divide_by_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / (var + 1e-5)  # "normalize by the variance"


def ln_rms_only(x: Tensor) -> Tensor:
    ms = (x**2).mean(-1, keepdim=True)  # the mean is about 0 anyway
    return x / torch.sqrt(ms + 1e-5)


def ln_bert_eps(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-12)  # BERT's layer_norm_eps


def ln_in_place(x: Tensor) -> Tensor:
    x -= x.mean(-1, keepdim=True)  # no extra copy of a big activation
    x /= torch.sqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5)
    return x


# ---------------------------------------------------------------- correct variants


def ln_functional(x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[-1:], eps=1e-5)  # no weight, no bias


def ln_rsqrt(x: Tensor, eps: float = 1e-5) -> Tensor:
    centered = x - x.mean(dim=-1, keepdim=True)
    var = centered.pow(2).sum(dim=-1, keepdim=True) / x.shape[-1]
    return centered * torch.rsqrt(var + eps)


def ln_var_mean(x: Tensor) -> Tensor:
    var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
    return (x - mean) / (var + 1e-5).sqrt()


CASES = [
    BlindCase(
        CHECK,
        "batch_norm_axes",
        ln_batch_axes,
        "mistake",
        "I normalized each feature over the batch and positions (dims 0 and 1), which is "
        "BatchNorm.",
    ),
    BlindCase(
        CHECK,
        "unbiased_std",
        ln_unbiased_std,
        "mistake",
        "I used x.std(-1), which divides by D - 1, instead of the biased variance.",
    ),
    BlindCase(
        CHECK,
        "eps_outside_sqrt",
        ln_eps_outside_sqrt,
        "mistake",
        "I added eps to the standard deviation, (x - mean) / (std + eps), instead of inside "
        "the square root.",
    ),
    BlindCase(
        CHECK,
        "no_eps",
        ln_no_eps,
        "mistake",
        "I left out eps, so a position whose features are all equal divides by zero.",
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
        "whole_sentence",
        ln_whole_sentence,
        "mistake",
        "I normalized each sentence as a whole, over positions and features together.",
    ),
    BlindCase(
        CHECK,
        "keepdim_forgotten",
        ln_no_keepdim,
        "mistake",
        "I reduced without keepdim and put the axis back by hand, unsqueezing the variance at "
        "the wrong place.",
    ),
    BlindCase(
        CHECK,
        "divide_by_variance",
        ln_divide_by_variance,
        "mistake",
        "I divided by the variance plus eps instead of its square root.",
    ),
    BlindCase(
        CHECK,
        "rms_without_mean",
        ln_rms_only,
        "mistake",
        "I did not subtract the mean and divided by the root mean square, as RMSNorm does.",
    ),
    BlindCase(
        CHECK,
        "bert_eps_1e-12",
        ln_bert_eps,
        "mistake",
        "I used eps = 1e-12, as BERT does, instead of 1e-5.",
    ),
    BlindCase(
        CHECK,
        "in_place_on_input",
        ln_in_place,
        "mistake",
        "I normalized x in place with -= and /=, which overwrites the caller's tensor.",
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
        "rsqrt_with_eps_option",
        ln_rsqrt,
        "correct",
        "Centered, the variance as a sum over D divided by D, times rsqrt(var + eps); eps is an "
        "optional argument defaulting to 1e-5.",
    ),
    BlindCase(
        CHECK,
        "var_mean",
        ln_var_mean,
        "correct",
        "torch.var_mean with correction=0.",
    ),
]
