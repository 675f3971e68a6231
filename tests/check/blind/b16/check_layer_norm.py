"""Blind set B16, check_layer_norm (chapter 11): LayerNorm without gamma and beta, as readers
write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_layer_norm"


# ---------------------------------------------------------------- mistakes


def ln_batch_axes(x: Tensor) -> Tensor:
    mean = x.mean(dim=(0, 1), keepdim=True)  # one statistic per feature
    var = x.var(dim=(0, 1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_unbiased(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    std = x.std(-1, keepdim=True)  # torch's default std
    return (x - mean) / torch.sqrt(std**2 + 1e-5)


def ln_no_centering(x: Tensor) -> Tensor:
    var = x.var(-1, unbiased=False, keepdim=True)
    return x / torch.sqrt(var + 1e-5)  # divide by the spread


def ln_divide_by_variance(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / (var + 1e-5)


def ln_whole_sentence(x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[1:], eps=1e-5)  # normalized_shape = everything but the batch


def ln_over_positions(x: Tensor) -> Tensor:
    mean = x.mean(1, keepdim=True)  # over the T positions of each sentence
    var = x.var(1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_no_keepdim(x: Tensor) -> Tensor:
    mean = x.mean(-1)
    var = x.var(-1, unbiased=False)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_keras_epsilon(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-3)  # Keras' LayerNormalization epsilon


def ln_in_place(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    x -= mean  # no extra copy of the activations
    x /= torch.sqrt(var + 1e-5)
    return x


def ln_constant_statistics(x: Tensor) -> Tensor:
    with torch.no_grad():  # statistics are just numbers, no gradient needed
        mean = x.mean(-1, keepdim=True)
        var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def ln_mean_square(x: Tensor) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    second_moment = (x**2).mean(-1, keepdim=True)  # the mean of the squares
    return (x - mean) / torch.sqrt(second_moment + 1e-5)


def ln_centered_divided_in_place(x: Tensor) -> Tensor:
    centered = x - x.mean(dim=-1, keepdim=True)  # a new tensor, so in place is safe
    var = centered.square().mean(dim=-1, keepdim=True)
    centered /= (var + 1e-5).sqrt()
    return centered


# ---------------------------------------------------------------- correct variants


def ln_functional(x: Tensor) -> Tensor:
    return F.layer_norm(x, (x.shape[-1],))  # eps defaults to 1e-5


def ln_module_per_call(x: Tensor) -> Tensor:
    norm = nn.LayerNorm(x.shape[-1], elementwise_affine=False).to(x.device, x.dtype)
    return norm(x)


def ln_var_mean_rsqrt(x: Tensor, eps: float = 1e-5) -> Tensor:
    var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    return (x - mean) * torch.rsqrt(var + eps)


def ln_centered_then_scaled(x: Tensor) -> Tensor:
    centered = x - x.sum(dim=-1, keepdim=True) / x.shape[-1]
    var = centered.square().mean(dim=-1, keepdim=True)
    return centered.mul(var.add(1e-5).rsqrt())


CASES = [
    BlindCase(
        CHECK,
        "batch_norm_axes",
        ln_batch_axes,
        "mistake",
        "I averaged over (0, 1), the batch and the positions, which is BatchNorm.",
    ),
    BlindCase(
        CHECK,
        "unbiased_variance",
        ln_unbiased,
        "mistake",
        "I used x.std(-1), whose default is the unbiased estimate (divides by D - 1).",
    ),
    BlindCase(
        CHECK,
        "mean_not_subtracted",
        ln_no_centering,
        "mistake",
        "I divided x by its standard deviation but did not subtract the mean.",
    ),
    BlindCase(
        CHECK,
        "divided_by_variance",
        ln_divide_by_variance,
        "mistake",
        "I divided by var + eps, forgetting the square root.",
    ),
    BlindCase(
        CHECK,
        "normalized_over_t_and_d",
        ln_whole_sentence,
        "mistake",
        "I called F.layer_norm with x.shape[1:], so each sentence is normalized over all its "
        "positions and features together.",
    ),
    BlindCase(
        CHECK,
        "normalized_over_positions",
        ln_over_positions,
        "mistake",
        "I took the mean and variance over dim=1, the positions, for each feature.",
    ),
    BlindCase(
        CHECK,
        "keepdim_missing",
        ln_no_keepdim,
        "mistake",
        "I took mean(-1) and var(-1) without keepdim=True, so (B, T) is broadcast against "
        "(B, T, D) along the wrong axes.",
    ),
    BlindCase(
        CHECK,
        "epsilon_1e_3",
        ln_keras_epsilon,
        "mistake",
        "I used eps = 1e-3, Keras' default, instead of 1e-5.",
    ),
    BlindCase(
        CHECK,
        "input_modified_in_place",
        ln_in_place,
        "mistake",
        "I normalized x in place with -= and /= to save memory, which overwrites the caller's "
        "tensor (and fails on a leaf that requires grad).",
    ),
    BlindCase(
        CHECK,
        "statistics_without_gradient",
        ln_constant_statistics,
        "mistake",
        "I computed the mean and variance under torch.no_grad(), so the gradient treats them "
        "as constants.",
    ),
    BlindCase(
        CHECK,
        "mean_square_instead_of_variance",
        ln_mean_square,
        "mistake",
        "I subtracted the mean but divided by the root of the mean of the squares, not of the "
        "squared deviations.",
    ),
    BlindCase(
        CHECK,
        "centered_tensor_divided_in_place",
        ln_centered_divided_in_place,
        "mistake",
        "I divided my own centered tensor in place with /=; the values are right, but autograd "
        "saved that tensor for the variance's gradient, so backward fails.",
    ),
    BlindCase(
        CHECK,
        "functional_layer_norm",
        ln_functional,
        "correct",
        "F.layer_norm over the last axis, without weight and bias.",
    ),
    BlindCase(
        CHECK,
        "layer_norm_module_per_call",
        ln_module_per_call,
        "correct",
        "A fresh nn.LayerNorm(D, elementwise_affine=False) built on every call.",
    ),
    BlindCase(
        CHECK,
        "var_mean_rsqrt",
        ln_var_mean_rsqrt,
        "correct",
        "torch.var_mean with correction=0 and rsqrt; eps as an extra argument with a default.",
    ),
    BlindCase(
        CHECK,
        "centered_by_hand",
        ln_centered_then_scaled,
        "correct",
        "Mean as sum / D, variance of the centered tensor, .mul by .rsqrt of var + eps.",
    ),
]
