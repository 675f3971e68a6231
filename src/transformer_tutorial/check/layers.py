"""Layer checks: the causal mask, sinusoidal positions and the feed-forward network (chapters 10-12); LayerNorm has its own module, layer_norm.py."""

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
from .tensors import NAMES as TENSOR_NAMES
from .tensors import build, close, expect_dtype_kept, expect_tensor, randn, with_weights_of
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
    "table-not-float32": "the table is right, in {dtype}: return it in float32, the dtype of "
    "the embeddings it is added to (a float64 table would turn every activation after it into "
    "float64). Computing the angles in float64 is fine; convert at the end with .float().",
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
    "ffn-ignores-d-ff": "built as cls(d_model, d_ff) with d_ff = {d_ff}, your hidden layer has "
    "{hidden} = 4 * d_model units: use the d_ff you are given (the paper's 2048 = 4 * 512 is "
    "one choice of it), nn.Linear(d_model, d_ff).",
    "ffn-train-mode-differs": "right in eval mode, but in training mode your output differs "
    "from linear2(relu(linear1(x))), the same on every call: a layer that computes differently "
    "while training, such as a BatchNorm (it normalises with the batch's statistics then). "
    "Parameters and buffers besides linear1 and linear2: {own}. The exercise's network has "
    "only the two layers and the ReLU.",
    "ffn-norm-before": "your network normalises its input first, linear2(relu(linear1("
    "LayerNorm(x))): the LayerNorm belongs to the block around it (chapter 11's pre-norm "
    "x + FFN(LayerNorm(x))); the network itself is linear2(relu(linear1(x))).",
    "ffn-norm-after": "your network normalises its output, LayerNorm(linear2(relu(linear1(x)))): "
    "the LayerNorm belongs to the block around it (chapter 11's Add & Norm, LayerNorm(x + "
    "FFN(x))); the network itself is linear2(relu(linear1(x))).",
    "table-cosines-over-sines": "the even columns hold the cosines and the odd ones are 0: the "
    "cosines were written to the even columns too (pe[:, 0::2] twice), over the sines. Sines go "
    "to 0::2, cosines to 1::2.",
    "ffn-no-bias": "your layers leave out their biases: linear1 and linear2 each add b, "
    "max(0, x W1 + b1) W2 + b2 -- call the layers, linear2(relu(linear1(x))), rather than "
    "multiplying by their weights.",
    "ffn-mixes-positions": "a position's output depends on the other positions: the network "
    "must act on each position separately (the same weights at each).",
    "causal-fixed-size": "for T = {T} your mask is {n} x {n}: build it for the T asked, on "
    "every call. A mask kept from an earlier call, or cut from a table built for fewer "
    "positions, has the wrong size.",
    "causal-table-not-sliced": "for T = {T} your mask is {n} x {n}: its top-left {T} x {T} corner "
    "is the right mask, but the table built for a longer length is not cut to T: return "
    "mask[:T, :T].",
    "causal-size-off-by-one": "for T = {T} your mask is {n} x {n}: one row and column "
    "{more_or_less}. The mask is T x T, one row (query) and one column (key) for each of the T "
    "positions fed in; a BOS at the start is one of them, not an extra one.",
    "ffn-other-activation": "the activation between the layers is {name}; the book's network (the "
    "paper's) uses ReLU, max(0, h) = torch.relu(h).",
    "ffn-add-norm-inside": "your module does the whole Add & Norm, LayerNorm(x + FFN(x)): the "
    "residual and the LayerNorm belong to the block around it (chapter 11); the network itself "
    "is linear2(relu(linear1(x))).",
}

MESSAGES = {
    "ffn-output": "the network's output",
    "ffn-dropout-default": "right in eval mode, but in training mode two calls on the same x "
    "differ: built as cls(d_model, d_ff), your network drops activations, because its "
    "`{name}` defaults to {rate}. The exercise's network has no dropout: give the rate a "
    "default of 0.0, as the book's PositionwiseFeedForward(d_model, d_ff, dropout=0.0) does.",
    "too-many": "too many",
    "too-few": "too few",
    "causal-batched": "the mask for T = {T} has shape {shape}: return ({T}, {T}); the model "
    "broadcasts it over the batch itself.",
    "causal-dtype": "the mask has dtype {dtype}; use torch.bool (True = may attend).",
    "causal-no-diagonal": "position t does not see itself: a query may attend to its own key.",
    "causal-differs": "for T = {T} the mask should be\n{expected}\nyours is\n{got}\nThe first "
    "row that differs is row {t}: query {t} may attend to keys {keys} in yours, and to keys "
    "0..{t} (itself and every earlier position) in the book's.",
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
    sizes = (4, 7, 1, 12, 70)  # first a size where every mistake looks different; 12 > 8, 70 > 64
    for i, T in enumerate(sizes):
        result = fn(T)
        if isinstance(result, Tensor) and tuple(result.shape) in ((1, T, T), (1, 1, T, T)):
            raise Wrong.differs(MESSAGES, "causal-batched", T=T, shape=tuple(result.shape))
        if isinstance(result, Tensor) and result.dim() == 2 and result.shape[0] == result.shape[1]:
            n = result.shape[0]  # square: the size of an earlier call, or one fixed below T
            if n != T and (n in sizes[:i] or n < T - 1):
                raise Wrong.named(MISTAKES, "causal-fixed-size", T=T, n=n)
            if n > T + 1 and torch.equal(result[:T, :T].bool(), causal_mask(T)):
                raise Wrong.named(MISTAKES, "causal-table-not-sliced", T=T, n=n)
            if abs(n - T) == 1:
                more = say(MESSAGES, "too-many" if n > T else "too-few")
                raise Wrong.named(MISTAKES, "causal-size-off-by-one", T=T, n=n, more_or_less=more)
        got = expect_tensor(result, say(TENSOR_NAMES, "mask-for-t", T=T), (T, T))
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
        t = int((got != expected).any(-1).nonzero()[0])  # the first row that differs
        keys = got[t].nonzero().flatten().tolist()
        raise Wrong.differs(MESSAGES, "causal-differs", T=T, expected=expected.int(), got=got.int(),
                            t=t, keys=keys)  # fmt: skip
    return "right for T = 1, 4, 7, 12 and 70."


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
    got = expect_tensor(result, TENSOR_NAMES["table"], (max_len, D))
    if not got.is_floating_point():  # sines and cosines truncated to -1, 0 and 1
        raise Wrong.named(MISTAKES, "table-integer", dtype=got.dtype)
    expected = _table(max_len, D)
    if close(got, expected, 1e-4):
        if got.dtype != torch.float32:
            raise Wrong.named(MISTAKES, "table-not-float32", dtype=got.dtype)
        return "the table is right (sines in the even columns, cosines in the odd ones)."
    swapped = expected.clone()
    swapped[:, 0::2], swapped[:, 1::2] = expected[:, 1::2], expected[:, 0::2]
    if close(got, swapped, 1e-4):
        raise Wrong.named(MISTAKES, "table-swapped")
    overwritten = torch.zeros_like(expected)
    overwritten[:, 0::2] = expected[:, 1::2]  # the cosines written over the sines
    if close(got, overwritten, 1e-4):
        raise Wrong.named(MISTAKES, "table-cosines-over-sines")
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


# --- the position-wise feed-forward network -----------------------------------------------------


@check("position-wise feed-forward network", build="cls(d_model, d_ff)", call="ffn(x)")
def check_feed_forward(cls: type) -> Verdict:
    """``cls(d_model, d_ff)``: ``linear2(relu(linear1(x)))``, the same at every position; called
    on ``(B, T, D)``."""
    D, F, B, T = 8, 24, 2, 5  # d_ff is not 4 d_model: a hidden width of 4 d_model shows
    torch.manual_seed(0)
    mine = cls(D, F)
    hidden = getattr(getattr(mine, "linear1", None), "out_features", F)
    if hidden != F and hidden == 4 * D:
        raise Wrong.named(MISTAKES, "ffn-ignores-d-ff", d_ff=F, hidden=hidden)
    mine = build(cls, (D, F), PositionwiseFeedForward, ("linear1", "linear2"))
    mine = mine.double().eval()
    reference = PositionwiseFeedForward(D, F).double().eval()
    with_weights_of(mine, reference, ("linear1", "linear2"))
    x = randn(B, T, D)
    with torch.no_grad():
        got = expect_tensor(expect_same_twice(lambda: mine(x), say(MESSAGES, "ffn-output"), {"x": x}),
                            TENSOR_NAMES["output"], (B, T, D))  # fmt: skip
        if close(got, reference(x)):
            large = 10 * x  # hidden values beyond 6: an activation capped there shows
            if not close(mine(large), reference(large)):
                raise _feed_forward_large(mine, large)
            _expect_same_in_training(mine, reference, x)
            expect_dtype_kept(got, x, TENSOR_NAMES["output"])
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
            "ffn-norm-before": reference(torch.nn.functional.layer_norm(x, (D,))),
            "ffn-norm-after": torch.nn.functional.layer_norm(reference(x), (D,)),
            "ffn-no-bias": torch.relu(x @ l1.weight.T) @ l2.weight.T,
        }
        for key, wrong in mistakes.items():
            if close(got, wrong):
                raise Wrong.named(MISTAKES, key)
        for name, act in _ACTIVATIONS.items():
            if close(got, l2(act(l1(x)))):
                raise Wrong.named(MISTAKES, "ffn-other-activation", name=name)
        if (slope := _leaky_slope(got, l1, l2, x)) is not None:
            name = f"a leaky ReLU (slope {slope:.3g} below 0)"
            raise Wrong.named(MISTAKES, "ffn-other-activation", name=name)
        moved = x.clone()
        moved[:, 0] += 1.0  # position 0 changes: no other position's output may
        if not close(mine(moved)[:, 1:], got[:, 1:]):
            raise Wrong.named(MISTAKES, "ffn-mixes-positions")
    raise Wrong.differs(MESSAGES, "ffn-differs")


def _expect_same_in_training(mine: torch.nn.Module, reference: torch.nn.Module, x: Tensor):
    """The exercise's network has no dropout, nor anything else that trains differently: in
    training mode two calls agree, and with the output in eval mode."""
    mine.train()
    if not close(mine(x), mine(x)):
        rates = [p for p in inspect.signature(type(mine)).parameters.values()
                 if isinstance(p.default, float) and 0 < p.default < 1]  # fmt: skip
        if rates:  # a rate behind an argument, on by default
            raise Wrong.differs(MESSAGES, "ffn-dropout-default", name=rates[0].name,
                                rate=rates[0].default)  # fmt: skip
        raise Wrong.named(MISTAKES, "ffn-dropout-hard-coded")
    if not close(mine(x), reference(x)):
        own = [n for n, _ in [*mine.named_parameters(), *mine.named_buffers()]
               if not n.startswith(("linear1.", "linear2."))]  # fmt: skip
        raise Wrong.named(MISTAKES, "ffn-train-mode-differs", own=", ".join(own) or "-")


_ACTIVATIONS = {"leaky_relu": torch.nn.functional.leaky_relu, "ELU": torch.nn.functional.elu,
                "SiLU": torch.nn.functional.silu, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
                "ReLU6 (capped at 6)": torch.nn.functional.relu6,
                "softmax": lambda h: torch.softmax(h, dim=-1),
                "softplus": torch.nn.functional.softplus}  # fmt: skip


def _leaky_slope(got: Tensor, l1, l2, x: Tensor) -> float | None:
    """The negative slope of a leaky ReLU that gives ``got``, fitted by least squares and
    confirmed at every position (None if no slope in (0, 1) does)."""
    h = l1(x)
    rest = got - l2(torch.relu(h))  # what the negative part adds
    neg = h.clamp(max=0) @ l2.weight.T
    slope = float((rest * neg).sum() / (neg * neg).sum().clamp_min(1e-300))
    if 0 < slope < 1 and close(got, l2(torch.relu(h) + slope * h.clamp(max=0))):
        return slope
    return None


def _feed_forward_large(mine: torch.nn.Module, x: Tensor) -> Wrong:
    """What goes wrong only for large inputs (an activation capped at 6)."""
    if close(mine(x), mine.linear2(torch.nn.functional.relu6(mine.linear1(x)))):
        return Wrong.named(MISTAKES, "ffn-other-activation", name="ReLU6 (capped at 6)")
    return Wrong.differs(MESSAGES, "ffn-differs-large")
