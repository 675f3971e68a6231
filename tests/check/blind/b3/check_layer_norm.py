"""Blind cases for check_layer_norm (chapter 11), written from the chapter's text only."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .. import BlindCase

CHECK = "check_layer_norm"


def batch_norm_axes(x):
    mean = x.mean((0, 1), keepdim=True)
    var = x.var((0, 1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def unbiased_variance(x):
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, keepdim=True)  # default: unbiased
    return (x - mean) / torch.sqrt(var + 1e-5)


def eps_outside_sqrt(x):
    mean = x.mean(-1, keepdim=True)
    std = x.std(-1, unbiased=False, keepdim=True)
    return (x - mean) / (std + 1e-5)


def mean_not_subtracted(x):
    var = x.var(-1, unbiased=False, keepdim=True)
    return x / torch.sqrt(var + 1e-5)


def divided_by_variance(x):
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / (var + 1e-5)


def over_positions(x):
    mean = x.mean(1, keepdim=True)
    var = x.var(1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def whole_sentence(x):
    mean = x.mean((1, 2), keepdim=True)
    var = x.var((1, 2), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def forgot_keepdim(x):
    mean = x.mean(-1)  # (B, T)
    var = x.var(-1, unbiased=False)  # (B, T)
    return (x - mean) / torch.sqrt(var + 1e-5)


def global_variance(x):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean()  # one number for the whole batch
    return (x - mean) / torch.sqrt(var + 1e-5)


def eps_required(x, eps):
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps)


def functional_layer_norm(x, eps=1e-5):
    return F.layer_norm(x, x.shape[-1:], eps=eps)


def var_mean_rsqrt(x):
    var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    return (x - mean) * torch.rsqrt(var + 1e-5)


def centered_squares(x):
    centered = x - x.mean(dim=-1, keepdim=True)
    var = centered.pow(2).mean(dim=-1, keepdim=True)
    return centered / (var + 1e-5).sqrt()


def module_without_affine(x):
    norm = nn.LayerNorm(x.shape[-1], eps=1e-5, elementwise_affine=False).to(x.dtype)
    return norm(x)


CASES = [
    BlindCase(
        CHECK,
        "batch_norm_axes",
        batch_norm_axes,
        "mistake",
        "I took mean and variance over (0, 1), the batch and positions: BatchNorm's axes",
    ),
    BlindCase(
        CHECK,
        "unbiased_variance",
        unbiased_variance,
        "mistake",
        "I used x.var(-1) with its default unbiased=True (divides by D - 1)",
    ),
    BlindCase(
        CHECK,
        "eps_outside_sqrt",
        eps_outside_sqrt,
        "mistake",
        "I divided by std + eps, adding eps outside the square root instead of inside",
    ),
    BlindCase(
        CHECK,
        "mean_not_subtracted",
        mean_not_subtracted,
        "mistake",
        "I forgot to subtract the mean, only dividing by sqrt(var + eps)",
    ),
    BlindCase(
        CHECK,
        "divided_by_variance",
        divided_by_variance,
        "mistake",
        "I divided by var + eps instead of its square root",
    ),
    BlindCase(
        CHECK,
        "over_positions",
        over_positions,
        "mistake",
        "I normalized over dim=1, each feature over the positions of its sentence",
    ),
    BlindCase(
        CHECK,
        "whole_sentence",
        whole_sentence,
        "mistake",
        "I normalized over (1, 2), all positions and features of a sentence together",
    ),
    BlindCase(
        CHECK,
        "forgot_keepdim",
        forgot_keepdim,
        "mistake",
        "I forgot keepdim=True, so the (B, T) mean and variance broadcast against the wrong axes",
    ),
    BlindCase(
        CHECK,
        "global_variance",
        global_variance,
        "mistake",
        "per-position mean, but one variance for the whole tensor (.mean() without a dim)",
    ),
    BlindCase(
        CHECK,
        "eps_required",
        eps_required,
        "mistake",
        "I made eps a required argument without a default, so layer_norm(x) fails",
    ),
    BlindCase(
        CHECK,
        "functional_layer_norm",
        functional_layer_norm,
        "correct",
        "F.layer_norm over the last axis without weight and bias; eps is an optional argument",
    ),
    BlindCase(
        CHECK,
        "var_mean_rsqrt",
        var_mean_rsqrt,
        "correct",
        "torch.var_mean with correction=0, and torch.rsqrt instead of dividing by sqrt",
    ),
    BlindCase(
        CHECK,
        "centered_squares",
        centered_squares,
        "correct",
        "the variance as the mean of the squared centered values",
    ),
    BlindCase(
        CHECK,
        "module_without_affine",
        module_without_affine,
        "correct",
        "an nn.LayerNorm(D, elementwise_affine=False) built inside the function",
    ),
]
