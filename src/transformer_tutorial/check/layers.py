"""Layer checks: the causal mask, sinusoidal positions, LayerNorm, the feed-forward network and the label-smoothed loss (chapters 10-12 and 14)."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable

import torch
from torch import Tensor

from ..feedforward import PositionwiseFeedForward
from ..masks import causal_mask
from .diagnoses import expect_same_twice
from .engine import check
from .tensors import backward, close, expect_tensor, randn, tolerance, with_weights_of
from .verdict import Verdict, Wrong, say

MISTAKES = {
    "table-frequency-per-column": "each column has its own frequency: yours computes it from "
    "the column index c itself; a sine and the cosine beside it share one, "
    "w_j = 10000^(-2j / d_model) for columns 2j and 2j + 1.",
    "table-two-pi": "your angles are 2 pi i w_j: the book's are i w_j, with "
    "w_j = 10000^(-2j / d_model) (no factor 2 pi; the wavelengths already run from 2 pi to "
    "10000 * 2 pi).",
    "table-exponent-zero": "every frequency is 1, so all the sine columns are the same, "
    "sin(pos): the frequencies w_j = 10000^(-2j / d_model) are missing, or their exponent is 0 "
    "for every j. Integer division does that (2j // d_model, or integer tensors divided with "
    "//); divide as floats: 10000 ** (-torch.arange(0, d_model, 2) / d_model).",
    "table-base": "your frequencies follow the base {base:g} instead of 10000: w_j = "
    "10000^(-2j / d_model). (Written as exp(-2j ln(10000) / d_model), the log must be the "
    "natural one, math.log.)",
    # LayerNorm
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
    "norm-in-place": "the output is right, but your function changed its input x in place (-=, "
    "/=, or an out= argument): the caller's tensor is overwritten, and autograd needs it for "
    "the backward pass. Compute a new tensor, y = (x - mean) / sqrt(var + eps).",
}

MISTAKES |= {
    # the causal mask
    "causal-additive": "yours is an additive mask (0 and -inf); the book's masks are boolean "
    "(torch.bool), True = may attend, and masked_softmax puts the -inf in.",
    "causal-flipped": "mask polarity: yours is True at the future -- in this book a mask is True "
    "where a query *may attend*.",
    "causal-all-true": "nothing is masked: row t may attend only to the keys 0..t.",
    "causal-off-by-one": "position t sees position t+1: the causal mask is off by one.",
    "causal-transposed": "rows are queries and columns keys: your mask is transposed (torch.triu "
    "where torch.tril is meant, or the positions compared the other way).",
    # sinusoidal positions
    "table-transposed": "your table is (d_model, max_len) = {shape}: one row per position, "
    "(max_len, d_model).",
    "table-swapped": "sin and cos are swapped: the even columns (0, 2, ...) hold the sines.",
    "table-halves": "the sines fill the first half of the columns and the cosines the second; "
    "the book interleaves them: sin in the even columns 0, 2, ..., cos in the odd ones.",
    "table-from-position-1": "row i holds position i + 1: positions start at 0, so row 0 is "
    "sin 0 = 0, cos 0 = 1.",
    "table-all-sines": "every column holds a sine: the odd columns 1, 3, ... hold cosines.",
    "table-half-exponent": "your exponent is half the right one: w_j = 10000^(-2j / d_model), "
    "where 2j is the even column index (you used j, or divided by 2 d_model); so row 1, column 2 "
    "is sin({w1:.4f}).",
    "table-double-exponent": "your exponent is twice the right one: w_j = 10000^(-2j / d_model), "
    "where 2j is already the even column index (you doubled it, or divided by d_model / 2); so "
    "row 1, column 2 is sin({w1:.4f}).",
    "table-growing-frequencies": "the frequencies grow along the columns: your angles are "
    "i * 10000^(+2j / d_model), which is also what dividing by w_j gives (i / w_j). The angle "
    "is i * w_j with w_j = 10000^(-2j / d_model), so that w_0 = 1 and the last columns turn "
    "slowest.",
    "table-power-precedence": "your frequencies are 10000^(-2) * {j} / d_model, tiny and growing, "
    "not 10000^(-2j / d_model): ** binds before * and /, so `10000 ** -2 * j / d_model` raises "
    "10000 to -2 alone. Put the exponent in brackets, 10000 ** (-2 * j / d_model).",
    "table-integer": "the table has dtype {dtype}: every sine and cosine is cut to an integer. "
    "Build it as floats (torch.zeros(max_len, d_model), torch.arange(...).float()).",
    "table-zeros": "row 0 is all zeros: cos(0) = 1, so the odd columns of row 0 must be 1.",
    # the feed-forward network
    "ffn-no-relu": "there is no ReLU between the two layers: two linear maps in a row are one "
    "linear map.",
    "ffn-relu-after": "the ReLU comes after linear2; it belongs between the two layers.",
    "ffn-gelu": "the activation is GELU; the book's network (the paper's) uses ReLU.",
    "ffn-relu-on-input": "the ReLU is applied to the input x; it belongs between linear1 and "
    "linear2.",
    "ffn-with-residual": "you add the input x back: the residual connection belongs to the block "
    "(chapter 11's Add & Norm), the network itself is linear2(relu(linear1(x))).",
    "ffn-relu-twice": "a ReLU follows linear2 as well; the network ends with linear2, whose "
    "output may be negative: linear2(relu(linear1(x))).",
    "ffn-clamp-max": "your activation keeps the negative part, min(h, 0) (clamp(max=0)); ReLU "
    "keeps the positive part, max(h, 0) = h.clamp(min=0).",
    "ffn-dropout-hard-coded": "right in eval mode, but in training mode two calls on the same x "
    "differ: your network drops activations at random (a dropout with a fixed rate?). The "
    "exercise's network is linear2(relu(linear1(x))); a dropout belongs behind an argument, as "
    "in the book's PositionwiseFeedForward(d_model, d_ff, dropout=0.0), so that the model "
    "around it chooses the rate.",
    "ffn-mixes-positions": "a position's output depends on the other positions: the network "
    "must act on each position separately (the same weights at each).",
    "causal-fixed-size": "for T = {T} your mask is {n} x {n}: build it for the T asked, on "
    "every call. A mask kept from an earlier call, or cut from a table built for fewer "
    "positions, has the wrong size.",
    "ffn-other-activation": "the activation between the layers is {name}; the book's network (the "
    "paper's) uses ReLU, max(0, h) = torch.relu(h).",
    "ffn-add-norm-inside": "your module does the whole Add & Norm, LayerNorm(x + FFN(x)): the "
    "residual and the LayerNorm belong to the block around it (chapter 11); the network itself "
    "is linear2(relu(linear1(x))).",
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
    "ffn-output": "the network's output",
    "ffn-dropout-default": "right in eval mode, but in training mode two calls on the same x "
    "differ: built as cls(d_model, d_ff), your network drops activations, because its "
    "`{name}` defaults to {rate}. The exercise's network has no dropout: give the rate a "
    "default of 0.0, as the book's PositionwiseFeedForward(d_model, d_ff, dropout=0.0) does.",
    "norm-differs": "the output differs from (x - mean) / sqrt(var + eps) over the last axis.",
    "norm-backward-fails": "the output is right, but the backward pass through it fails: {error}",
    "norm-backward-in-place": "the output is right, but the backward pass through it fails: a "
    "tensor autograd saved for the gradient was changed in place afterwards (/=, -=, div_, "
    "sub_). Compute a new tensor, y = (x - mean) / torch.sqrt(var + eps).",
    "norm-gradient-differs": "the output is right, but its gradient with respect to x differs "
    "from nn.LayerNorm's: the mean and the variance depend on x, and the gradient must flow "
    "through them too (no torch.no_grad(), detach() or .item() on them).",
    "causal-batched": "the mask for T = {T} has shape {shape}: return ({T}, {T}); the model "
    "broadcasts it over the batch itself.",
    "causal-dtype": "the mask has dtype {dtype}; use torch.bool (True = may attend).",
    "causal-no-diagonal": "position t does not see itself: a query may attend to its own key.",
    "causal-differs": "for T = {T} the mask should be\n{expected}\nyours is\n{got}",
    "table-row-0": "row 0 should be {row} (sin 0 = 0, cos 0 = 1).",
    "table-frequencies-differ": "the angles differ: row i, column 2j is sin(i * w_j) for the "
    "positions i = 0, 1, 2, ... and w_j = 10000^(-2j / d_model), where 2j is the even column "
    "index (so w_0 = 1 and row 1, column 2 is sin({w1:.4f})). Look at the positions (an arange, "
    "not a linspace), the frequencies (the log(10000) in exp(-2j log(10000) / d_model)) and the "
    "unit (radians).",
    "ffn-differs": "the output differs from linear2(relu(linear1(x))).",
    "ffn-differs-large": "right for inputs of about unit size, but for inputs ten times larger "
    "the output differs from linear2(relu(linear1(x))).",
}

# --- the causal mask ---------------------------------------------------------------------------


@check("causal mask", call="fn(T)")
def check_causal_mask(fn: Callable[[int], Tensor]) -> Verdict:
    """``fn(T) -> (T, T)`` boolean: row t (a query) is True at the keys 0..t it may attend to."""
    sizes = (4, 7, 1, 12)  # first a size where every mistake looks different; 12 > 8
    for i, T in enumerate(sizes):
        result = fn(T)
        if isinstance(result, Tensor) and tuple(result.shape) in ((1, T, T), (1, 1, T, T)):
            raise Wrong.differs(MESSAGES, "causal-batched", T=T, shape=tuple(result.shape))
        if isinstance(result, Tensor) and result.dim() == 2 and result.shape[0] == result.shape[1]:
            n = result.shape[0]  # square: the size of an earlier call, or one fixed below T
            if n != T and (n in sizes[:i] or n < T - 1):
                raise Wrong.named(MISTAKES, "causal-fixed-size", T=T, n=n)
        got = expect_tensor(result, f"the mask for T = {T}", (T, T))
        expected = causal_mask(T)
        if got.is_floating_point() and torch.isinf(got).any():
            raise Wrong.named(MISTAKES, "causal-additive")
        if got.dtype != torch.bool:
            raise Wrong.differs(MESSAGES, "causal-dtype", dtype=got.dtype)
        if torch.equal(got, expected):
            continue
        if torch.equal(got, ~expected):
            raise Wrong.named(MISTAKES, "causal-flipped")
        if T > 1 and got.all():
            raise Wrong.named(MISTAKES, "causal-all-true")
        if torch.equal(got, torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=1)):
            raise Wrong.named(MISTAKES, "causal-off-by-one")
        if torch.equal(got, torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)):
            raise Wrong.differs(MESSAGES, "causal-no-diagonal")
        if torch.equal(got, expected.T):
            raise Wrong.named(MISTAKES, "causal-transposed")
        raise Wrong.differs(MESSAGES, "causal-differs", T=T, expected=expected.int(), got=got.int())
    return "right for T = 1, 4, 7 and 12."


# --- sinusoidal positions -------------------------------------------------------------------------


def _table(max_len: int, D: int, exponent: float = 1.0, start: int = 0, halves: bool = False,
           cos: bool = True, base: float = 10000.0, scale: float = 1.0,
           per_column: bool = False, inverse: bool = False) -> Tensor:  # fmt: skip
    """The sinusoidal table, or one typical mistake of it."""
    position = torch.arange(start, start + max_len, dtype=torch.float64)[:, None]
    two_j = torch.arange(0, D, 2, dtype=torch.float64)
    w = base ** (-exponent * two_j / D)  # (D/2,)
    angles = scale * (position / w if inverse else position * w)  # (max_len, D/2)
    second = torch.cos(angles) if cos else torch.sin(angles)
    if per_column:  # column c gets its own frequency base^(-c / D)
        w_odd = base ** (-exponent * (two_j + 1) / D)
        second = torch.cos(scale * position * w_odd)
    if halves:
        return torch.cat([torch.sin(angles), second], dim=-1)
    return torch.stack([torch.sin(angles), second], dim=-1).flatten(1)


def _base_of(got: Tensor, D: int) -> float | None:
    """The base b of w_j = b^(-2j / D) that the table's column 2 (sin(i w_1)) shows, if any."""
    w1 = float(torch.asin(got[1, 2].clamp(-1, 1)))
    if not 0 < w1 < 1.0001:  # w_1 = 1 (base 1) included
        return None
    return round(w1 ** (-D / 2), 3)


@check("sinusoidal positional encoding", call="fn(max_len, d_model)")
def check_sinusoidal_encoding(fn: Callable[[int, int], Tensor]) -> Verdict:
    """``fn(max_len, d_model) -> (max_len, d_model)``: column 2j holds sin(i w_j), column 2j+1
    cos(i w_j), w_j = 10000^(-2j / d_model), for positions i = 0 .. max_len - 1."""
    max_len, D = 50, 16
    result = fn(max_len, D)
    if isinstance(result, Tensor) and tuple(result.shape) == (D, max_len):
        raise Wrong.named(MISTAKES, "table-transposed", shape=(D, max_len))
    got = expect_tensor(result, "the table", (max_len, D))
    if not got.is_floating_point():  # sines and cosines truncated to -1, 0 and 1
        raise Wrong.named(MISTAKES, "table-integer", dtype=got.dtype)
    expected = _table(max_len, D)
    if close(got, expected, 1e-4):
        return "the table is right (sines in the even columns, cosines in the odd ones)."
    swapped = expected.clone()
    swapped[:, 0::2], swapped[:, 1::2] = expected[:, 1::2], expected[:, 0::2]
    if close(got, swapped, 1e-4):
        raise Wrong.named(MISTAKES, "table-swapped")
    w1 = 10000 ** (-2 / D)
    mistakes = [  # the mistake, the table it gives
        ("table-halves", {"halves": True}),
        ("table-from-position-1", {"start": 1}),
        ("table-all-sines", {"cos": False}),
        ("table-half-exponent", {"exponent": 0.5}),
        ("table-double-exponent", {"exponent": 2.0}),
        ("table-growing-frequencies", {"exponent": -1.0}),
        ("table-frequency-per-column", {"per_column": True}),
        ("table-frequency-per-column", {"per_column": True, "exponent": 2.0}),
        ("table-two-pi", {"scale": 2 * math.pi}),
    ]
    for key, variant in mistakes:
        if close(got, _table(max_len, D, **variant), 1e-4):
            raise Wrong.named(MISTAKES, key, w1=w1)
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    for j, index in (("j", torch.arange(D // 2)), ("2j", torch.arange(0, D, 2))):
        angles = position * (10000.0**-2 * index.double() / D)  # (max_len, D/2)
        table = torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(1)
        if close(got, table, 1e-4):
            raise Wrong.named(MISTAKES, "table-power-precedence", j=j)
    base = _base_of(got, D)
    if base is not None and close(got, _table(max_len, D, base=base), 1e-4):
        if abs(base - 1) < 1e-6:  # every w_j = 1: the exponent vanished, not the base
            raise Wrong.named(MISTAKES, "table-exponent-zero")
        raise Wrong.named(MISTAKES, "table-base", base=base)
    if close(got[0], torch.zeros(D, dtype=got.dtype)):
        raise Wrong.named(MISTAKES, "table-zeros")
    if not close(got[0], expected[0], 1e-4):
        raise Wrong.differs(MESSAGES, "table-row-0", row=expected[0].tolist())
    raise Wrong.differs(MESSAGES, "table-frequencies-differ", w1=w1)


# --- LayerNorm ------------------------------------------------------------------------------------


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
    got = expect_tensor(fn(given), "the output", x.shape)
    if close(got, expected, 1e-6):
        if not torch.equal(given, x):
            raise Wrong.named(MISTAKES, "norm-in-place")
        _expect_layer_norm_gradient(fn, x, eps)
        return "every position is normalised over its features, as nn.LayerNorm does."
    if (fit := _implied_eps(x, got.detach().double())) is not None:  # 1e-12, 1e-6, ...
        raise Wrong.named(MISTAKES, fit[0], got=fit[1], eps=eps)
    for key, wrong in _layer_norm_mistakes(x, eps).items():
        if close(got, wrong, 1e-6):
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
        backward((out * r).sum(), "the output")
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
    }


# --- the position-wise feed-forward network -----------------------------------------------------


@check("position-wise feed-forward network", build="cls(d_model, d_ff)", call="ffn(x)")
def check_feed_forward(cls: type) -> Verdict:
    """``cls(d_model, d_ff)``: ``linear2(relu(linear1(x)))``, the same at every position; called
    on ``(B, T, D)``."""
    D, F, B, T = 8, 32, 2, 5
    torch.manual_seed(0)
    mine = cls(D, F)
    with_weights_of(mine, PositionwiseFeedForward(D, F), ("linear1", "linear2"))
    mine = mine.double().eval()
    reference = PositionwiseFeedForward(D, F).double().eval()
    with_weights_of(mine, reference, ("linear1", "linear2"))
    x = randn(B, T, D)
    with torch.no_grad():
        got = expect_tensor(expect_same_twice(lambda: mine(x), say(MESSAGES, "ffn-output"), {"x": x}),
                            "the output", (B, T, D))  # fmt: skip
        if close(got, reference(x)):
            large = 10 * x  # hidden values beyond 6: an activation capped there shows
            if not close(mine(large), reference(large)):
                raise _feed_forward_large(mine, large)
            _expect_no_dropout(mine, x)
            return "linear1 -> ReLU -> linear2, position by position, is right."
        l1, l2 = mine.linear1, mine.linear2
        mistakes = {  # the mistake, the output it gives
            "ffn-no-relu": l2(l1(x)),
            "ffn-relu-after": torch.relu(l2(l1(x))),
            "ffn-gelu": l2(torch.nn.functional.gelu(l1(x))),
            "ffn-relu-on-input": l2(l1(torch.relu(x))),
            "ffn-with-residual": x + reference(x),
            "ffn-relu-twice": torch.relu(reference(x)),
            "ffn-clamp-max": l2(l1(x).clamp(max=0)),
            "ffn-add-norm-inside": torch.nn.functional.layer_norm(x + reference(x), (D,)),
        }
        for key, wrong in mistakes.items():
            if close(got, wrong):
                raise Wrong.named(MISTAKES, key)
        for name, act in _ACTIVATIONS.items():
            if close(got, l2(act(l1(x)))):
                raise Wrong.named(MISTAKES, "ffn-other-activation", name=name)
        moved = x.clone()
        moved[:, 0] += 1.0  # position 0 changes: no other position's output may
        if not close(mine(moved)[:, 1:], got[:, 1:]):
            raise Wrong.named(MISTAKES, "ffn-mixes-positions")
    raise Wrong.differs(MESSAGES, "ffn-differs")


def _expect_no_dropout(mine: torch.nn.Module, x: Tensor) -> None:
    """The exercise's network has no dropout: in training mode two calls must agree."""
    mine.train()
    if not close(mine(x), mine(x)):
        rates = [p for p in inspect.signature(type(mine)).parameters.values()
                 if isinstance(p.default, float) and 0 < p.default < 1]  # fmt: skip
        if rates:  # a rate behind an argument, on by default
            raise Wrong.differs(MESSAGES, "ffn-dropout-default", name=rates[0].name,
                                rate=rates[0].default)  # fmt: skip
        raise Wrong.named(MISTAKES, "ffn-dropout-hard-coded")


_ACTIVATIONS = {"leaky_relu": torch.nn.functional.leaky_relu, "ELU": torch.nn.functional.elu,
                "SiLU": torch.nn.functional.silu, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
                "ReLU6 (capped at 6)": torch.nn.functional.relu6}  # fmt: skip


def _feed_forward_large(mine: torch.nn.Module, x: Tensor) -> Wrong:
    """What goes wrong only for large inputs (an activation capped at 6)."""
    if close(mine(x), mine.linear2(torch.nn.functional.relu6(mine.linear1(x)))):
        return Wrong.named(MISTAKES, "ffn-other-activation", name="ReLU6 (capped at 6)")
    return Wrong.differs(MESSAGES, "ffn-differs-large")
