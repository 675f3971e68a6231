"""Layer checks: the causal mask, sinusoidal positions, LayerNorm, the feed-forward network and the label-smoothed loss (chapters 10-12 and 14)."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from ..feedforward import PositionwiseFeedForward
from ..masks import causal_mask
from ..positional import sinusoidal_encoding
from ..sequences import PAD_ID
from ..training import LabelSmoothingLoss
from .verdict import (
    POLARITY,
    Verdict,
    Wrong,
    _close,
    _random,
    _run,
    _tensor,
    _with_weights_of,
)

# --- the causal mask ---------------------------------------------------------------------------


def check_causal_mask(fn: Callable[[int], Tensor]) -> Verdict:
    """``fn(T) -> (T, T)`` boolean: row t (a query) is True at the keys 0..t it may attend to."""

    def probes() -> str:
        for T in (4, 7, 1):  # a size where every mistake looks different first
            got = _tensor(fn(T), f"the mask for T = {T}", (T, T))
            if got.dtype != torch.bool:
                raise Wrong(f"the mask has dtype {got.dtype}; use torch.bool (True = may attend).")
            expected = causal_mask(T)
            if torch.equal(got, expected):
                continue
            if torch.equal(got, ~expected):
                raise Wrong(f"mask polarity: yours is True at the future -- {POLARITY}.")
            if torch.equal(got, torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=1)):
                raise Wrong("position t sees position t+1: the causal mask is off by one.")
            if torch.equal(got, torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)):
                raise Wrong("position t does not see itself: a query may attend to its own key.")
            if torch.equal(got, expected.T):
                raise Wrong("rows are queries and columns keys: your mask is transposed.")
            raise Wrong(f"for T = {T} the mask should be\n{expected.int()}\nyours is\n{got.int()}")
        return "right for T = 1, 4 and 7."

    return _run("causal mask", probes)


# --- sinusoidal positions -------------------------------------------------------------------------


def check_sinusoidal_encoding(fn: Callable[[int, int], Tensor]) -> Verdict:
    """``fn(max_len, d_model) -> (max_len, d_model)``: column 2j holds sin(i w_j), column 2j+1
    cos(i w_j), w_j = 10000^(-2j / d_model)."""

    def probes() -> str:
        max_len, D = 50, 16
        got = _tensor(fn(max_len, D), "the table", (max_len, D)).double()
        expected = sinusoidal_encoding(max_len, D).double()
        if _close(got, expected, 1e-4):
            return "the table is right (sines in the even columns, cosines in the odd ones)."
        swapped = expected.clone()
        swapped[:, 0::2], swapped[:, 1::2] = expected[:, 1::2], expected[:, 0::2]
        if _close(got, swapped, 1e-4):
            raise Wrong("sin and cos are swapped: the even columns (0, 2, ...) hold the sines.")
        if _close(got[0], torch.zeros(D, dtype=got.dtype), 1e-6):
            raise Wrong("row 0 is all zeros: cos(0) = 1, so the odd columns of row 0 must be 1.")
        if not _close(got[0], expected[0], 1e-4):
            raise Wrong(f"row 0 should be {expected[0].tolist()} (sin 0 = 0, cos 0 = 1).")
        raise Wrong(
            "the frequencies differ: w_j = 10000^(-2j / d_model), where 2j is the even column "
            f"index (so w_0 = 1 and row 1, column 2 is sin({10000 ** (-2 / D):.4f}))."
        )

    return _run("sinusoidal positional encoding", probes)


# --- LayerNorm ------------------------------------------------------------------------------------


def check_layer_norm(fn: Callable[[Tensor], Tensor], eps: float = 1e-5) -> Verdict:
    """``fn(x) -> y`` for ``x`` of shape ``(B, T, D)``: each position normalised over its ``D``
    features to mean 0 and variance 1 (biased variance, ``eps`` inside the square root)."""

    def probes() -> str:
        x = _random(3, 4, 8) * 3 + 1  # (B, T, D)
        expected = torch.nn.functional.layer_norm(x, (8,), eps=eps)
        got = _tensor(fn(x.clone()), "the output", x.shape)
        if _close(got, expected, 1e-6):
            return "every position is normalised over its features, as nn.LayerNorm does."
        wrong_axes = {
            (0,): "the batch axis B (that is BatchNorm)",
            (1,): "the time axis T",
            (0, 1): "the batch and time axes (that is BatchNorm)",
        }
        for axes, name in wrong_axes.items():
            mean = x.mean(axes, keepdim=True)
            other = (x - mean) / torch.sqrt(x.var(axes, keepdim=True, unbiased=False) + eps)
            if _close(got, other, 1e-6):
                raise Wrong(f"you normalise over {name}; LayerNorm normalises each position "
                            "over its own D features (the last axis).")  # fmt: skip
        unbiased = (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True) + eps)
        if _close(got, unbiased, 1e-6):
            raise Wrong("use the biased variance (divide by D, not D - 1), as nn.LayerNorm does.")
        raise Wrong("the output differs from (x - mean) / sqrt(var + eps) over the last axis.")

    return _run("LayerNorm", probes)


def check_feed_forward(cls: type) -> Verdict:
    """``cls(d_model, d_ff)``: ``linear2(relu(linear1(x)))``, the same at every position."""

    def probes() -> str:
        D, F, B, T = 8, 32, 2, 5
        torch.manual_seed(0)
        mine = cls(D, F).double().eval()
        reference = PositionwiseFeedForward(D, F).double().eval()
        _with_weights_of(mine, reference, ("linear1", "linear2"))
        x = _random(B, T, D)
        with torch.no_grad():
            got = _tensor(mine(x), "the output", (B, T, D))
            if _close(got, reference(x)):
                return "linear1 -> ReLU -> linear2, position by position, is right."
            alone = torch.cat([mine(x[:, t : t + 1]) for t in range(T)], dim=1)  # one at a time
            if _close(alone, reference(x)):
                raise Wrong(
                    "a position's output depends on the other positions: the network must act "
                    "on each position separately (the same weights at each)."
                )
            if _close(got, mine.linear2(mine.linear1(x))):
                raise Wrong("there is no ReLU between the two layers: two linear maps in a row "
                            "are one linear map.")  # fmt: skip
            if _close(got, torch.relu(mine.linear2(mine.linear1(x)))):
                raise Wrong("the ReLU comes after linear2; it belongs between the two layers.")
        raise Wrong("the output differs from linear2(relu(linear1(x))).")

    return _run("position-wise feed-forward network", probes)


# --- the label-smoothed loss ---------------------------------------------------------------------


def check_label_smoothing(cls: type) -> Verdict:
    """``cls(smoothing)``: label-smoothed cross-entropy, averaged over the non-padding targets."""

    def probes() -> str:
        B, T, V, eps = 3, 4, 7, 0.1
        logits = _random(B, T, V)
        target = torch.randint(1, V, (B, T), generator=torch.Generator().manual_seed(3))
        target[0, 2:], target[2, 1:] = PAD_ID, PAD_ID  # padding of different lengths
        mine = cls(eps)
        got = mine(logits, target)
        if not isinstance(got, Tensor) or got.dim() != 0:
            raise Wrong("the loss should be one number (a 0-dimensional tensor), the mean.")
        expected = LabelSmoothingLoss(eps)(logits, target)
        if _close(got, expected, 1e-8):
            x, y = logits.clone().requires_grad_(), logits.clone().requires_grad_()
            mine(x, target).backward()
            LabelSmoothingLoss(eps)(y, target).backward()
            if not _close(x.grad, y.grad, 1e-8):
                raise Wrong("the value is right but the gradients differ from the reference.")
            if (x.grad[target == PAD_ID].abs() > 0).any():
                raise Wrong("padding positions get a gradient: they must not count at all.")
            return "smoothing, padding and the mean over real tokens are right."
        log_p = torch.log_softmax(logits, -1)
        per_token = -(1 - eps) * log_p.gather(-1, target[..., None]).squeeze(-1) - eps * log_p.mean(
            -1
        )
        real = target != PAD_ID
        if _close(got, per_token.mean(), 1e-8):
            raise Wrong("padding positions count in the mean: average over the real targets only "
                        f"({int(real.sum())} of {B * T} here).")  # fmt: skip
        if _close(got, LabelSmoothingLoss(0.0)(logits, target), 1e-8):
            raise Wrong(f"no smoothing: with ε = {eps} the right token's target is {1 - eps} and "
                        f"every token gets ε / V = {eps / V:.4f} on top.")  # fmt: skip
        if _close(got, per_token[real].sum() / B, 1e-8):
            raise Wrong("you divide by the number of sentences; divide by the number of real "
                        "target tokens.")  # fmt: skip
        off_true = -(1 - eps) * log_p.gather(-1, target[..., None]).squeeze(-1)
        off_true = off_true - eps / (V - 1) * (
            log_p.sum(-1) - log_p.gather(-1, target[..., None]).squeeze(-1)
        )
        if _close(got, off_true[real].mean(), 1e-8):
            raise Wrong("ε is spread over the V - 1 wrong tokens; this book (like PyTorch's "
                        "label_smoothing) spreads ε / V over all V tokens.")  # fmt: skip
        raise Wrong(f"the loss is {got.item():.6f}, expected {expected.item():.6f} "
                    f"(logits {tuple(logits.shape)}, targets {tuple(target.shape)}).")  # fmt: skip

    return _run("label-smoothed loss", probes)
