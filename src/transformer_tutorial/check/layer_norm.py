"""The LayerNorm check (chapter 11): each position normalised over its own features."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from .engine import check
from .tensors import NAMES as TENSOR_NAMES
from .tensors import backward, close, expect_dtype_kept, expect_tensor, randn, tolerance
from .verdict import Verdict, Wrong

MISTAKES = {
    "norm-over-batch": "you normalise over the batch axis B (that is BatchNorm); LayerNorm "
    "normalises each position over its own D features (the last axis).",
    "norm-over-time": "you normalise over the time axis T; LayerNorm normalises each position "
    "over its own D features (the last axis).",
    "norm-over-batch-and-time": "you normalise over the batch and time axes (that is BatchNorm); "
    "LayerNorm normalises each position over its own D features (the last axis).",
    "norm-over-everything": "you normalise over the whole tensor at once; LayerNorm normalises "
    "each position over its own D features (the last axis).",
    "norm-over-time-and-features": "you normalise each sequence over its time and feature "
    "axes (T, D) together; LayerNorm normalises each position over its own D features (the "
    "last axis), so that a position does not depend on the others.",
    "norm-unbiased": "use the biased variance (divide by D, not D - 1), as nn.LayerNorm does.",
    "norm-eps-outside": "eps goes inside the square root: (x - mean) / sqrt(var + eps), not / "
    "(std + eps); it shows where a position's features barely vary.",
    "norm-torch-std": "you divide by the unbiased std plus eps (x.std() is unbiased): LayerNorm "
    "divides by sqrt(var + eps) with the biased variance.",
    "norm-no-eps": "eps is missing: (x - mean) / sqrt(var + eps) stays finite and smooth where a "
    "position's features barely vary.",
    "norm-by-variance": "you divide by the variance; divide by its square root, sqrt(var + eps).",
    "norm-no-centring": "the mean is not subtracted: y = (x - mean) / sqrt(var + eps).",
    "norm-rms": "you divide x by its root mean square, x / sqrt(mean(x ** 2) + eps), which is "
    "RMSNorm: LayerNorm first subtracts the mean, y = (x - mean) / sqrt(var + eps).",
    "norm-other-eps": "your eps is {got:.0e}, the book's (nn.LayerNorm's) {eps:g}: it shows "
    "where a position's features barely vary (variance ~1e-6).",
    "norm-no-division": "you subtract the mean but do not divide by sqrt(var + eps).",
    "norm-mean-var-swapped": "the mean and the variance have changed places: you subtract the "
    "variance and divide by the square root of the mean (NaN where the mean is negative). "
    "torch.var_mean returns (var, mean), in that order.",
    "norm-in-place": "the output is right, but your function changed its input x in place (-=, "
    "/=, or an out= argument): the caller's tensor is overwritten, and autograd needs it for "
    "the backward pass. Compute a new tensor, y = (x - mean) / sqrt(var + eps).",
    "norm-l2": "you divide by the length (L2 norm) of the centred vector, which is sqrt(D) times "
    "its standard deviation: LayerNorm divides by sqrt(var + eps), the norm divided by sqrt(D), "
    "so that each feature has variance 1.",
    "norm-mean-square": "you subtract the mean but divide by sqrt(mean(x ** 2) + eps), the root "
    "mean square of x before centring: the variance is the mean of the *centred* squares, "
    "((x - mean) ** 2).mean(-1).",
    "norm-square-of-sum": "your variance is about 0 in every row: the square of the sum (or of "
    "the mean) of the centred values, which sum to 0. The variance is the mean of their squares, "
    "((x - mean) ** 2).mean(-1).",
    "norm-one-scale": "each position is centred on its own mean, but every position is divided "
    "by the same number ({scale:.4g}): a spread over the whole tensor (x.var() or x.std() "
    "without dim). LayerNorm measures the spread of each position over its own D features: "
    "x.var(-1, keepdim=True, unbiased=False).",
    "norm-mean-absolute-deviation": "you divide by the mean absolute distance from the mean, "
    "(x - mean).abs().mean(-1): LayerNorm divides by the standard deviation, the square root "
    "of the mean of the centred squares, torch.sqrt(((x - mean) ** 2).mean(-1) + eps).",
    "norm-row-scale": "each position is centred on its own mean and divided by one number of its "
    "own, but not by sqrt(var + eps): your positions have variances from {low:.3g} to {high:.3g}, "
    "where LayerNorm's are 1. Divide by torch.sqrt(x.var(-1, keepdim=True, unbiased=False) + "
    "eps).",
    "norm-one-mean": "each position is divided by its own sqrt(var + eps), but the number "
    "subtracted is the same for every position ({shift:.4g}): a mean over the whole tensor "
    "(x.mean() without dim). Subtract each position's own mean, x.mean(-1, keepdim=True).",
    "norm-other-centre": "each position is divided by its own sqrt(var + eps), but what you "
    "subtract is not its mean, so your positions do not have mean 0 (position 0 has "
    "{mean:.3g}). Subtract x.mean(-1, keepdim=True).",
}

MESSAGES = {
    "norm-differs": "the output differs from (x - mean) / sqrt(var + eps) over the last axis.",
    "norm-backward-fails": "the output is right, but the backward pass through it fails: {error}",
    "norm-backward-in-place": "the output is right, but the backward pass through it fails: a "
    "tensor autograd saved for the gradient was changed in place afterwards (/=, -=, div_, "
    "sub_). Compute a new tensor, y = (x - mean) / torch.sqrt(var + eps).",
    "norm-gradient-differs": "the output is right, but its gradient with respect to x differs "
    "from nn.LayerNorm's: the mean and the variance depend on x, and the gradient must flow "
    "through them too (no torch.no_grad(), detach() or .item() on them).",
}


def _layer_norm_input() -> Tensor:
    """``(B, T, D)`` with two positions whose features barely vary (variances ~1e-6 and ~1e-8,
    below eps): there eps decides the output, so its place shows; an eps outside the root acts
    as a different eps inside it at each of the two, so no single eps inside fits it."""
    x = randn(3, 4, 8) * 3 + 1
    x[0, 0] = 2.0 + 1e-3 * randn(8, seed=4)
    x[1, 2] = -1.0 + 1e-4 * randn(8, seed=5)
    return x


@check("LayerNorm", call="fn(x)")
def check_layer_norm(fn: Callable[[Tensor], Tensor], eps: float = 1e-5) -> Verdict:
    """``fn(x) -> y`` for ``x`` of shape ``(B, T, D)``: each position normalised over its ``D``
    features to mean 0 and variance 1 (biased variance, ``eps`` inside the square root; a
    position whose features barely vary shows where eps is)."""
    x = _layer_norm_input()
    expected = torch.nn.functional.layer_norm(x, (8,), eps=eps)
    given = x.clone()
    got = expect_tensor(fn(given), TENSOR_NAMES["output"], x.shape)
    if close(got, expected, 1e-6):
        if not torch.equal(given, x):
            raise Wrong.named(MISTAKES, "norm-in-place")
        _expect_layer_norm_gradient(fn, x, eps)
        expect_dtype_kept(got, x, TENSOR_NAMES["output"])
        return "every position is normalised over its features, as nn.LayerNorm does."
    if (fit := _implied_eps(x, got.detach().double())) is not None:  # 1e-12, 1e-6, ...
        raise Wrong.named(MISTAKES, fit[0], got=fit[1], eps=eps)
    for key, wrong in _layer_norm_mistakes(x, eps).items():
        if close(got, wrong, 1e-6) or close(got.nan_to_num(9.0), wrong.nan_to_num(9.0), 1e-6):
            raise Wrong.named(MISTAKES, key)
    _describe_layer_norm(x.double(), got.detach().double(), eps)
    raise Wrong.differs(MESSAGES, "norm-differs")


def _describe_layer_norm(x: Tensor, got: Tensor, eps: float) -> None:
    """Name what the output shows when no listed mistake reproduces it: the centring right and
    the scale not (one scale for all, or one per position that is not the deviation), or the
    scale right and the centring not."""
    centred = x - x.mean(-1, keepdim=True)
    std = torch.sqrt(x.var(-1, keepdim=True, unbiased=False) + eps)
    if got.mean(-1).abs().max() < 1e-5 and got.abs().amin(-1).gt(0).all():
        divisor = (centred / got).median(-1, keepdim=True).values  # one number per position?
        if close(got, centred / divisor, 1e-6):
            if divisor.max() - divisor.min() < 1e-5 * divisor.abs().max():
                raise Wrong.named(MISTAKES, "norm-one-scale", scale=float(divisor.mean()))
            if close(divisor, centred.abs().mean(-1, keepdim=True) + eps, 1e-5):
                raise Wrong.named(MISTAKES, "norm-mean-absolute-deviation")
            variances = got.var(-1, unbiased=False)
            raise Wrong.named(
                MISTAKES, "norm-row-scale", low=float(variances.min()), high=float(variances.max())
            )
    shift = (x - got * std).median(-1, keepdim=True).values  # what was subtracted, per position
    if close(got, (x - shift) / std, 1e-6):
        if shift.max() - shift.min() < 1e-5 * (1 + x.abs().max()):
            raise Wrong.named(MISTAKES, "norm-one-mean", shift=float(shift.mean()))
        raise Wrong.named(MISTAKES, "norm-other-centre", mean=float(got[0, 0].mean()))


def _expect_layer_norm_gradient(fn: Callable[[Tensor], Tensor], x: Tensor, eps: float) -> None:
    """The gradient with respect to x, through the mean and the variance, as nn.LayerNorm's."""
    r = randn(*x.shape, seed=3)  # a loss that weighs every output differently
    mine, ref = x.clone().requires_grad_(), x.clone().requires_grad_()
    out = fn(mine)
    try:
        backward((out * r).sum(), TENSOR_NAMES["output"])
    except RuntimeError as err:
        if "inplace operation" in str(err):
            raise Wrong.differs(MESSAGES, "norm-backward-in-place") from err
        raise Wrong.differs(MESSAGES, "norm-backward-fails", error=str(err).split("\n")[0]) from err
    (torch.nn.functional.layer_norm(ref, x.shape[-1:], eps=eps) * r).sum().backward()
    if mine.grad is None or not close(mine.grad, ref.grad, 4 * tolerance(out)):
        raise Wrong.differs(MESSAGES, "norm-gradient-differs")


def _implied_eps(x: Tensor, got: Tensor) -> tuple[str, float] | None:
    """The eps >= 1e-14 that gives ``got`` everywhere, inside the square root or outside it
    (std + eps), read at x[0, 0] (features barely vary), with the mistake it makes."""
    centred, var = x - x.mean(-1, keepdim=True), x.var(-1, keepdim=True, unbiased=False)
    ratio, std = centred[0, 0] / got[0, 0], var.sqrt()
    fits = {
        "norm-other-eps": (float((ratio**2).mean() - var[0, 0, 0]), lambda e: torch.sqrt(var + e)),
        "norm-eps-outside": (float(ratio.abs().mean() - std[0, 0, 0]), lambda e: std + e),
    }  # y^2 = c^2 / (var + e), or |y| = |c| / (std + e)
    for key, (e, scale) in fits.items():
        if math.isfinite(e) and e >= 1e-14 and close(got, centred / scale(e), 1e-6):
            return key, e
    return None


def _layer_norm_mistakes(x: Tensor, eps: float) -> dict[str, Tensor]:
    """What each mistake of ``MISTAKES`` makes of ``x``."""

    def over(axes, unbiased=False) -> Tensor:
        centred = x - x.mean(axes, keepdim=True)
        return centred / torch.sqrt(x.var(axes, keepdim=True, unbiased=unbiased) + eps)

    mean, centred = x.mean(-1, keepdim=True), x - x.mean(-1, keepdim=True)
    var, unbiased = x.var(-1, keepdim=True, unbiased=False), x.var(-1, keepdim=True)
    return {
        "norm-over-batch": over((0,)),
        "norm-over-time": over((1,)),
        "norm-over-batch-and-time": over((0, 1)),
        "norm-over-everything": over((0, 1, 2)),
        "norm-over-time-and-features": over((1, 2)),
        "norm-unbiased": over(-1, unbiased=True),
        "norm-torch-std": centred / (unbiased.sqrt() + eps),
        "norm-no-eps": centred / var.sqrt(),
        "norm-by-variance": centred / (var + eps),
        "norm-no-centring": x / torch.sqrt(var + eps),
        "norm-l2": centred / centred.norm(dim=-1, keepdim=True),
        "norm-mean-square": centred / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps),
        "norm-square-of-sum": centred / torch.sqrt(centred.sum(-1, keepdim=True) ** 2 / 8 + eps),
        "norm-rms": x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps),
        "norm-no-division": x - mean,
        "norm-mean-var-swapped": (x - var) / torch.sqrt(mean + eps),  # var_mean's order
    }
