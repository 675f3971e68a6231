"""Blind cases for check_layer_norm (chapter 11), written from the chapter's text only."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .. import BlindCase

CHECK = "check_layer_norm"


def unbiased_variance(x):
    return (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True) + 1e-5)


def batch_axes(x):
    mean = x.mean((0, 1), keepdim=True)
    var = x.var((0, 1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def eps_outside_root(x):
    mean = x.mean(-1, keepdim=True)
    std = x.std(-1, unbiased=False, keepdim=True)
    return (x - mean) / (std + 1e-5)


def whole_sentence(x):
    mean = x.mean((-2, -1), keepdim=True)
    var = x.var((-2, -1), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


def not_centred(x):
    var = x.var(-1, unbiased=False, keepdim=True)
    return x / torch.sqrt(var + 1e-5)


def divide_by_variance(x):
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / (var + 1e-5)


def no_eps(x):
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / var.sqrt()


def squares_by_hand(x, eps=1e-5):
    centred = x - x.mean(dim=-1, keepdim=True)
    var = (centred**2).mean(dim=-1, keepdim=True)
    return centred * torch.rsqrt(var + eps)


def functional_layer_norm(x):
    return F.layer_norm(x, x.shape[-1:], eps=1e-5)


def var_mean_correction(x):
    var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
    out = x.clone()
    out.sub_(mean).div_(torch.sqrt(var + 1e-5))
    return out


CASES = [
    BlindCase(
        CHECK,
        "unbiased_variance",
        unbiased_variance,
        "mistake",
        "I used x.var(-1) with its default, the unbiased (N - 1) variance",
    ),
    BlindCase(
        CHECK,
        "batch_axes",
        batch_axes,
        "mistake",
        "I took mean and variance over (B, T), per feature, like the batch_norm next to it",
    ),
    BlindCase(
        CHECK,
        "eps_outside_root",
        eps_outside_root,
        "mistake",
        "I divided by std + eps instead of sqrt(var + eps)",
    ),
    BlindCase(
        CHECK,
        "whole_sentence",
        whole_sentence,
        "mistake",
        "I normalized each sentence over its (T, D) values together",
    ),
    BlindCase(
        CHECK,
        "not_centred",
        not_centred,
        "mistake",
        "I divided x by the standard deviation without subtracting the mean",
    ),
    BlindCase(
        CHECK,
        "divide_by_variance",
        divide_by_variance,
        "mistake",
        "I divided by var + eps, forgetting the square root",
    ),
    BlindCase(
        CHECK,
        "no_eps",
        no_eps,
        "mistake",
        "I left out the eps and divided by the plain standard deviation",
    ),
    BlindCase(
        CHECK,
        "squares_by_hand",
        squares_by_hand,
        "correct",
        "variance as the mean of the squared deviations, rsqrt; eps as an optional argument",
    ),
    BlindCase(
        CHECK,
        "functional_layer_norm",
        functional_layer_norm,
        "correct",
        "I called F.layer_norm over the last axis with no weight and no bias",
    ),
    BlindCase(
        CHECK,
        "var_mean_correction",
        var_mean_correction,
        "correct",
        "torch.var_mean with correction=0, then sub_ and div_ in place on a clone",
    ),
]
