"""Chapter 11, "Your turn": ``layer_norm(x)``.

Each position of ``x`` ``(B, T, D)`` normalised over its ``D`` features to mean 0 and variance 1,
the biased variance, ``eps = 1e-5`` inside the square root; no gamma, no beta.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_layer_norm"


# --- mistakes ---------------------------------------------------------------------------------


def eps_added_to_std(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    std = x.std(-1, unbiased=False, keepdim=True)
    return (x - mean) / (std + 1e-5)  # eps outside the square root


def whole_sentence_statistics(x: Tensor) -> Tensor:
    mean = x.mean(dim=(1, 2), keepdim=True)  # over all positions and features of a sentence
    var = x.var(dim=(1, 2), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def no_eps(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / var.sqrt()


def mean_without_keepdim(x: Tensor) -> Tensor:
    mean = x.mean(-1)  # (B, T)
    var = ((x - mean.unsqueeze(-1)) ** 2).mean(-1)
    return (x - mean) / torch.sqrt(var + 1e-5)  # (B, T, D) - (B, T) lines up T with D


def bert_eps(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-12)  # the eps I remembered from BERT


def divided_by_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / (var + 1e-5)  # forgot the square root


def root_mean_square_only(x: Tensor) -> Tensor:
    return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5)  # no centring


def in_place_on_input(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return x.sub_(mean).div_(torch.sqrt(var + 1e-5))  # saves memory


def feature_axis_is_one(x: Tensor) -> Tensor:
    mean = x.mean(1, keepdim=True)  # features on dim 1, as for nn.BatchNorm1d
    var = x.var(1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def layernorm_over_full_shape(x: Tensor) -> Tensor:
    norm = nn.LayerNorm(x.shape, elementwise_affine=False)  # meant x.shape[-1]
    return norm(x)


def unbiased_by_default(x: Tensor) -> Tensor:
    mean = torch.mean(x, dim=-1, keepdim=True)
    var = torch.var(x, dim=-1, keepdim=True)  # torch.var's default correction
    return (x - mean) * torch.rsqrt(var + 1e-5)


# --- correct variants -------------------------------------------------------------------------


def functional_layer_norm(x: Tensor) -> Tensor:
    return F.layer_norm(x, (x.shape[-1],), eps=1e-5)


def squares_by_hand(x: Tensor, eps: float = 1e-5) -> Tensor:
    centred = x - x.mean(dim=-1, keepdim=True)
    var = (centred * centred).mean(dim=-1, keepdim=True)
    return centred * torch.rsqrt(var + eps)


def var_mean_correction_zero(x: Tensor) -> Tensor:
    var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
    out = x.clone()
    out -= mean
    out /= (var + 1e-5).sqrt()
    return out


CASES = [
    BlindCase(
        CHECK,
        "eps_added_to_std",
        eps_added_to_std,
        "mistake",
        "I divided by std + eps, putting eps outside the square root.",
    ),
    BlindCase(
        CHECK,
        "whole_sentence_statistics",
        whole_sentence_statistics,
        "mistake",
        "I took one mean and variance per sentence, over dims (1, 2), instead of per position.",
    ),
    BlindCase(
        CHECK,
        "no_eps",
        no_eps,
        "mistake",
        "I left eps out of the square root.",
    ),
    BlindCase(
        CHECK,
        "mean_without_keepdim",
        mean_without_keepdim,
        "mistake",
        "I took the mean without keepdim=True, so (B, T, D) - (B, T) lines T up with D.",
    ),
    BlindCase(
        CHECK,
        "bert_eps",
        bert_eps,
        "mistake",
        "I used eps = 1e-12 (BERT's) instead of 1e-5.",
    ),
    BlindCase(
        CHECK,
        "divided_by_variance",
        divided_by_variance,
        "mistake",
        "I divided by the variance plus eps and forgot the square root.",
    ),
    BlindCase(
        CHECK,
        "root_mean_square_only",
        root_mean_square_only,
        "mistake",
        "I divided x by its root mean square and never subtracted the mean (RMSNorm).",
    ),
    BlindCase(
        CHECK,
        "in_place_on_input",
        in_place_on_input,
        "mistake",
        "I used sub_ and div_ on x itself, which overwrites the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "feature_axis_is_one",
        feature_axis_is_one,
        "mistake",
        "I normalised over dim 1 (the positions) thinking it was the feature axis.",
    ),
    BlindCase(
        CHECK,
        "layernorm_over_full_shape",
        layernorm_over_full_shape,
        "mistake",
        "I built nn.LayerNorm(x.shape) instead of nn.LayerNorm(x.shape[-1]), so it normalises "
        "over the whole tensor.",
    ),
    BlindCase(
        CHECK,
        "unbiased_by_default",
        unbiased_by_default,
        "mistake",
        "I called torch.var without unbiased=False, so it divides by D - 1.",
    ),
    BlindCase(
        CHECK,
        "functional_layer_norm",
        functional_layer_norm,
        "correct",
        "I called F.layer_norm over the last axis with eps 1e-5 and no weight or bias.",
    ),
    BlindCase(
        CHECK,
        "squares_by_hand",
        squares_by_hand,
        "correct",
        "I centred x, averaged the squares myself and multiplied by rsqrt, with eps as an "
        "optional argument.",
    ),
    BlindCase(
        CHECK,
        "var_mean_correction_zero",
        var_mean_correction_zero,
        "correct",
        "I used torch.var_mean with correction=0 and in-place -= and /= on a clone of x.",
    ),
]
