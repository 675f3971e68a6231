"""Layer checks: the causal mask, sinusoidal positions, LayerNorm, the feed-forward network and the label-smoothed loss (chapters 10-12 and 14)."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from ..feedforward import PositionwiseFeedForward
from ..masks import causal_mask
from ..sequences import PAD_ID
from ..training import LabelSmoothingLoss
from .diagnoses import MISTAKES as LOSS_MISTAKES
from .diagnoses import counts, expect_same_twice, loss_described, normalisation_named
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
    "causal-transposed": "rows are queries and columns keys: your mask is transposed.",
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
    "where 2j is the even column index (you used j); so row 1, column 2 is sin({w1:.4f}).",
    "table-double-exponent": "your exponent is twice the right one: w_j = 10000^(-2j / "
    "d_model), where 2j is already the even column index (you doubled it); so row 1, column 2 "
    "is sin({w1:.4f}).",
    "table-growing-frequencies": "the frequencies grow along the columns: your angles are "
    "i * 10000^(+2j / d_model), which is also what dividing by w_j gives (i / w_j). The angle "
    "is i * w_j with w_j = 10000^(-2j / d_model), so that w_0 = 1 and the last columns turn "
    "slowest.",
    "table-power-precedence": "your frequencies are 10000^(-2) * {j} / d_model, tiny and growing, "
    "not 10000^(-2j / d_model): ** binds before * and /, so `10000 ** -2 * j / d_model` raises "
    "10000 to -2 alone. Put the exponent in brackets, 10000 ** (-2 * j / d_model).",
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
    "ffn-mixes-positions": "a position's output depends on the other positions: the network "
    "must act on each position separately (the same weights at each).",
    # the label-smoothed loss
    "loss-no-smoothing": "no smoothing: with ε = {eps} the right token's target is {target} and "
    "every token gets ε / V = {share:.4f} on top.",
    "loss-no-log-softmax": "the logits go in as if they were log-probabilities: take "
    "log_softmax of them first.",
    "loss-on-probabilities": "you use the probabilities, not their logarithm: the cross-entropy "
    "takes log_softmax(logits).",
    "loss-full-weight-on-target": "the right token's target is 1 - ε = {target}, not 1: it gives "
    "ε away to the smoothing.",
    "loss-uniform-summed": "the smoothing term sums log p over the V tokens; it is their mean "
    "(ε / V on each token): -(1 - ε) log p[target] - ε mean(log p).",
    "loss-uniform-dropped": "the smoothing term -ε mean(log p) is missing: you keep only "
    "(1 - ε) times the cross-entropy of the right token.",
    "loss-kl-divergence": "you compute the KL divergence to the smoothed target (nn.KLDivLoss); "
    "the book's loss is the cross-entropy, which is larger by the target's entropy, a constant "
    "{entropy:.4f} here.",
    "loss-smoothing-fixed": "built with smoothing={other}, your loss is the one of "
    "smoothing={eps}: the smoothing is fixed in your code instead of taken from the argument "
    "(self.smoothing = smoothing in __init__, used in forward).",
    "loss-uniform-on-logits": "the smoothing term averages the raw logits: it is the mean of "
    "the log-probabilities, -ε mean(log_softmax(logits)), like the target term.",
    "loss-smoothed-prediction": "you smooth the model's distribution, (1 - ε) p + ε / V, and "
    "take its -log p[target]: label smoothing smooths the *target*, so the loss is "
    "-(1 - ε) log p[target] - ε mean(log p).",
    "loss-smoothing-swapped": "the two weights are swapped: the target's log-probability gets "
    "ε = {eps} and the uniform part 1 - ε = {target}. The target gets 1 - ε, the uniform "
    "part ε.",
    "loss-target-share-overwritten": "the target token gets 1 - ε = {target} without its share "
    "ε / V = {share:.4g} of the uniform part: filling every class with ε / V and then writing "
    "1 - ε over the target (scatter_) drops it. The target's weight is 1 - ε + ε / V (add, "
    "with scatter_add_, or weigh -log p[target] by 1 - ε and the mean of -log p by ε).",
    "loss-pad-column-dropped": "the padding column is left out of the uniform part, which is "
    "still divided by V: the book spreads ε / V over all V classes, PAD included, and leaves "
    "out only the padding positions.",
    "loss-other-pad-id": "you leave out the targets equal to {k}, not the padding: padding "
    "(PAD_ID = {pad}) is scored and the real tokens {k} are dropped. Ignore PAD_ID (from "
    "transformer_tutorial.sequences), e.g. ignore_index=PAD_ID.",
    "loss-log-softmax-axis": "the log-softmax runs over axis {axis} of the logits {shape}, not "
    "over the vocabulary: each position's distribution is over the V tokens, "
    "log_softmax(logits, dim=-1).",
    "loss-spread-without-pad": "ε is spread as the Annotated Transformer does, ε / (V - 2) over "
    "the tokens other than the right one and PAD (and the loss is the KL divergence or its "
    "sum). This book, like PyTorch's label_smoothing, puts ε / V = {eps} / {V} on every token, "
    "the right one included, and averages the cross-entropy over the real tokens.",
    "loss-not-a-scalar": "the loss should be one number (a 0-dimensional tensor), the mean.",
    "loss-padding-gradient": "padding positions get a gradient: they must not count at all.",
}

MESSAGES = {
    "ffn-output": "the network's output",
    "norm-differs": "the output differs from (x - mean) / sqrt(var + eps) over the last axis.",
    "causal-batched": "the mask for T = {T} has shape {shape}: return ({T}, {T}); the model "
    "broadcasts it over the batch itself.",
    "causal-dtype": "the mask has dtype {dtype}; use torch.bool (True = may attend).",
    "causal-no-diagonal": "position t does not see itself: a query may attend to its own key.",
    "causal-differs": "for T = {T} the mask should be\n{expected}\nyours is\n{got}",
    "table-row-0": "row 0 should be {row} (sin 0 = 0, cos 0 = 1).",
    "table-frequencies-differ": "the frequencies differ: w_j = 10000^(-2j / d_model), where 2j "
    "is the even column index (so w_0 = 1 and row 1, column 2 is sin({w1:.4f})).",
    "ffn-differs": "the output differs from linear2(relu(linear1(x))).",
    "loss-spread-over-wrong": "ε is spread over the V - 1 wrong tokens; this book (like "
    "PyTorch's label_smoothing) spreads ε / V over all V tokens.",
    "loss-no-gradient": "no gradient reaches the logits: did you detach() something?",
    "loss-gradients-differ": "the value is right but the gradients differ from the reference.",
}

# --- the causal mask ---------------------------------------------------------------------------


@check("causal mask", call="fn(T)")
def check_causal_mask(fn: Callable[[int], Tensor]) -> Verdict:
    """``fn(T) -> (T, T)`` boolean: row t (a query) is True at the keys 0..t it may attend to."""
    for T in (4, 7, 1):  # a size where every mistake looks different first
        result = fn(T)
        if isinstance(result, Tensor) and tuple(result.shape) in ((1, T, T), (1, 1, T, T)):
            raise Wrong.differs(MESSAGES, "causal-batched", T=T, shape=tuple(result.shape))
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
    return "right for T = 1, 4 and 7."


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
    if not 0 < w1 < 1:
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
        raise Wrong.named(MISTAKES, "table-base", base=base)
    if close(got[0], torch.zeros(D, dtype=got.dtype)):
        raise Wrong.named(MISTAKES, "table-zeros")
    if not close(got[0], expected[0], 1e-4):
        raise Wrong.differs(MESSAGES, "table-row-0", row=expected[0].tolist())
    raise Wrong.differs(MESSAGES, "table-frequencies-differ", w1=w1)


# --- LayerNorm ------------------------------------------------------------------------------------


def _layer_norm_input() -> Tensor:
    """``(B, T, D)`` with one position whose features barely vary (variance ~1e-6 < eps): there
    eps decides the output, so its place shows."""
    x = randn(3, 4, 8) * 3 + 1
    x[0, 0] = 2.0 + 1e-3 * randn(8, seed=4)
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
        return "every position is normalised over its features, as nn.LayerNorm does."
    if (other := _implied_eps(x, got.detach().double())) is not None:  # 1e-12, 1e-6, ...
        raise Wrong.named(MISTAKES, "norm-other-eps", got=other, eps=eps)
    for key, wrong in _layer_norm_mistakes(x, eps).items():
        if close(got, wrong, 1e-6):
            raise Wrong.named(MISTAKES, key)
    raise Wrong.differs(MESSAGES, "norm-differs")


def _implied_eps(x: Tensor, got: Tensor) -> float | None:
    """The eps >= 1e-14 that gives ``got`` everywhere, read at x[0, 0] (features barely vary)."""
    centred, var = x - x.mean(-1, keepdim=True), x.var(-1, keepdim=True, unbiased=False)
    e = float(((centred[0, 0] / got[0, 0]) ** 2).mean() - var[0, 0, 0])  # y^2 = c^2 / (var + e)
    ok = math.isfinite(e) and e >= 1e-14 and close(got, centred / torch.sqrt(var + e), 1e-6)
    return e if ok else None


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
        "norm-eps-outside": centred / (var.sqrt() + eps),
        "norm-torch-std": centred / (unbiased.sqrt() + eps),
        "norm-no-eps": centred / var.sqrt(),
        "norm-by-variance": centred / (var + eps),
        "norm-no-centring": x / torch.sqrt(var + eps),
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
        got = expect_tensor(expect_same_twice(lambda: mine(x), say(MESSAGES, "ffn-output")),
                            "the output", (B, T, D))  # fmt: skip
        if close(got, reference(x)):
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
        }
        for key, wrong in mistakes.items():
            if close(got, wrong):
                raise Wrong.named(MISTAKES, key)
        alone = torch.cat([mine(x[:, t : t + 1]) for t in range(T)], dim=1)  # one at a time
        if close(alone, reference(x)):
            raise Wrong.named(MISTAKES, "ffn-mixes-positions")
    raise Wrong.differs(MESSAGES, "ffn-differs")


# --- the label-smoothed loss ---------------------------------------------------------------------


def _smoothed(log_p: Tensor, target: Tensor, eps: float, right: float | None = None) -> Tensor:
    """Per token: ``-(1 - eps) log p[target] - eps mean(log p)`` (``right`` replaces 1 - eps)."""
    on_target = log_p.gather(-1, target[..., None]).squeeze(-1)
    return -(1 - eps if right is None else right) * on_target - eps * log_p.mean(-1)


def _diagnose_smoothing(got: Tensor, expected: Tensor, logits: Tensor, target: Tensor,
                        eps: float) -> None:  # fmt: skip
    """Raise the mistake (or the difference) that gives the reader's loss ``got``."""
    V = logits.shape[-1]
    log_p = torch.log_softmax(logits, -1)
    per_token = _smoothed(log_p, target, eps)
    real = target != PAD_ID
    smooth = torch.full_like(log_p, eps / V) + (1 - eps) * torch.nn.functional.one_hot(target, V)
    entropy = (smooth * smooth.log()).sum(-1)[real].mean()
    named = normalisation_named(got, per_token, real)
    if named:
        raise Wrong.named(LOSS_MISTAKES, named, ratio=got.item() / expected.item(), **counts(real))
    mistakes = _smoothing_mistakes(logits, log_p, target, eps) | {
        "loss-kl-divergence": per_token[real].mean() + entropy
    }
    for key, wrong in mistakes.items():
        if close(got, wrong):
            raise Wrong.named(MISTAKES, key, eps=eps, target=1 - eps, share=eps / V,
                              entropy=-float(entropy))  # fmt: skip
    for k in target.unique().tolist():  # another id ignored in PAD_ID's place (fairseq's is 1)
        if k != PAD_ID and close(got, per_token[target != k].mean()):
            raise Wrong.named(MISTAKES, "loss-other-pad-id", k=k, pad=PAD_ID)
    _smoothing_axes_and_spread(got, logits, log_p, target, eps)
    raise Wrong(loss_described(got.item(), expected.item(), real))


def _smoothing_mistakes(logits: Tensor, log_p: Tensor, target: Tensor, eps: float) -> dict:
    """The loss each mistake of the label-smoothed loss gives, per mistake id."""
    V, real = logits.shape[-1], target != PAD_ID
    on_target = log_p.gather(-1, target[..., None]).squeeze(-1)
    others = log_p.sum(-1) - on_target  # the summed log-probabilities of every other class
    return {
        "loss-no-smoothing": LabelSmoothingLoss(0.0)(logits, target),
        "loss-no-log-softmax": _smoothed(logits, target, eps)[real].mean(),
        "loss-on-probabilities": _smoothed(log_p.exp(), target, eps)[real].mean(),
        "loss-full-weight-on-target": _smoothed(log_p, target, eps, right=1.0)[real].mean(),
        "loss-uniform-summed": (-(1 - eps) * on_target - eps * log_p.sum(-1))[real].mean(),
        "loss-uniform-dropped": (-(1 - eps) * on_target)[real].mean(),
        "loss-smoothing-swapped": _smoothed(log_p, target, 1 - eps)[real].mean(),
        "loss-uniform-on-logits": (-(1 - eps) * on_target - eps * logits.mean(-1))[real].mean(),
        "loss-smoothed-prediction": -(
            ((1 - eps) * log_p.exp() + eps / V).log().gather(-1, target[..., None])[..., 0]
        )[real].mean(),
        "loss-target-share-overwritten": (-(1 - eps) * on_target - eps / V * others)[real].mean(),
        "loss-pad-column-dropped": (
            -(1 - eps) * on_target - eps / V * (log_p.sum(-1) - log_p[..., PAD_ID])
        )[real].mean(),
    }


def _smoothing_axes_and_spread(got, logits, log_p, target, eps) -> None:
    """Raise the mistake when the reader's loss is a log-softmax over another axis, or the
    Annotated Transformer's spread of eps over V - 2 classes."""
    V, real = logits.shape[-1], target != PAD_ID
    on_target = log_p.gather(-1, target[..., None]).squeeze(-1)
    for axis in range(log_p.dim() - 1):  # the log-softmax over the batch or the time axis
        if close(got, _smoothed(torch.log_softmax(logits, axis), target, eps)[real].mean()):
            raise Wrong.named(
                MISTAKES, "loss-log-softmax-axis", axis=axis, shape=tuple(logits.shape)
            )
    spread = torch.full_like(log_p, eps / (V - 2)).scatter(-1, target[..., None], 1 - eps)
    spread[..., PAD_ID] = 0.0  # the Annotated Transformer's target: eps / (V - 2), PAD left out
    cross = -(spread * log_p).sum(-1)  # (B, T)
    kl = cross + (spread * spread.clamp_min(1e-300).log()).sum(-1)
    if any(
        close(got, value[real].mean()) or close(got, value[real].sum()) for value in (cross, kl)
    ):
        raise Wrong.named(MISTAKES, "loss-spread-without-pad", eps=eps, V=V)
    off_true = -(1 - eps) * on_target - eps / (V - 1) * (log_p.sum(-1) - on_target)
    if close(got, off_true[real].mean()):
        raise Wrong.differs(MESSAGES, "loss-spread-over-wrong")


@check("label-smoothed loss", build="cls(smoothing)", call="loss(logits, target)")
def check_label_smoothing(cls: type) -> Verdict:
    """``cls(smoothing)``: label-smoothed cross-entropy, averaged over the non-padding targets;
    called as ``loss(logits, target)``; value and gradients, padding gets none."""
    B, T, V, eps = 3, 4, 7, 0.1
    logits = randn(B, T, V)
    target = torch.randint(1, V, (B, T), generator=torch.Generator().manual_seed(3))
    target[0, 2:], target[2, 1:] = PAD_ID, PAD_ID  # padding of different lengths
    mine = cls(eps)
    got = mine(logits, target)
    if not isinstance(got, Tensor) or got.dim() != 0:
        raise Wrong.named(MISTAKES, "loss-not-a-scalar")
    expected = LabelSmoothingLoss(eps)(logits, target)
    if close(got, expected, 1e-8):
        x, y = logits.clone().requires_grad_(), logits.clone().requires_grad_()
        mine_loss = mine(x, target)
        backward(mine_loss, "the loss")
        LabelSmoothingLoss(eps)(y, target).backward()
        if x.grad is None:
            raise Wrong.differs(MESSAGES, "loss-no-gradient")
        if (x.grad[target == PAD_ID].abs() > 0).any():
            raise Wrong.named(MISTAKES, "loss-padding-gradient")
        if not close(x.grad, y.grad, tolerance(mine_loss)):
            raise Wrong.differs(MESSAGES, "loss-gradients-differ")
        other = 0.25  # another smoothing: the module must use the one it is built with
        got = cls(other)(logits, target)
        if isinstance(got, Tensor) and close(got, expected, 1e-8):
            raise Wrong.named(MISTAKES, "loss-smoothing-fixed", other=other, eps=eps)
        if not (isinstance(got, Tensor) and close(got, LabelSmoothingLoss(other)(logits, target))):
            _diagnose_smoothing(got, LabelSmoothingLoss(other)(logits, target), logits, target,
                                other)  # fmt: skip
        return "smoothing, padding and the mean over real tokens are right."
    _diagnose_smoothing(got, expected, logits, target, eps)
