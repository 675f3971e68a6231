"""Attention checks: masked softmax, scaled dot-product and additive attention (chapter 6); multi-head attention has its own module, multihead.py."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import torch
from torch import Tensor

from ..attention import AdditiveAttention, attention, masked_softmax
from .diagnoses import (
    GRADIENTS,
    call_attention,
    implied_divisor,
    masking_mistake,
    random_output,
    scale_named,
)
from .engine import check
from .self_attention import unmasked_weights
from .tensors import NAMES as TENSOR_NAMES
from .tensors import (
    backward,
    build,
    close,
    expect_dtype_kept,
    expect_pair_order,
    expect_tensor,
    randn,
    tolerance,
    unpacks_to,
    with_weights_of,
)
from .verdict import POLARITY, Verdict, Wrong

MISTAKES = {
    "additive-dropout-on": "right in eval mode, but in training mode two calls on the same input "
    "give different outputs: your module applies dropout of its own. The exercise builds it as "
    "cls(query_dim, key_dim, hidden_dim), with no dropout: give a dropout argument the default "
    "0.0, as the book's module does, or leave dropout out.",
    "softmax-overflow": "with scores up to {top} your weights are NaN: exp(score) overflows to inf "
    "(float64 ends near exp(709)), and inf / inf is NaN. Subtract each row's largest visible "
    "score before exp (softmax(s) = softmax(s - max s)), as torch.softmax does.",
    "softmax-detached": "no gradient reaches the scores: did you detach() them or the weights?",
    "softmax-nan-gradient": "the gradient has NaN: a fully masked row must not reach softmax as "
    "-inf.",
    "attention-unscaled": "the scores reach the softmax without the division by sqrt(d_k) "
    "(forgotten, or applied to the output or to v instead): with d_k = {dk} the softmax gets "
    "scores {ratio:.1f} times too large and its weights are too peaked.",
    "attention-sqrt-dv": "you divide the scores by sqrt(d_v) = sqrt({dv}); the scale is "
    "1/sqrt(d_k) = 1/sqrt({dk}), the size of the query and key vectors whose dot product it "
    "tames (v's size plays no part).",
    "attention-by-dk": "you divide the scores by d_k = {dk} (by d_k itself, or by sqrt(d_k) "
    "twice: q or k scaled, then the scores again), not once by its square root: the dot product "
    "of two random d_k-vectors has standard deviation sqrt(d_k).",
    "attention-sqrt-tk": "you divide the scores by sqrt(T_k) = sqrt({tk}), the number of keys; "
    "the scale is 1/sqrt(d_k) = 1/sqrt({dk}), the size of the query and key vectors.",
    "attention-scales-weights": "you divide the weights by sqrt(d_k) after the softmax, so rows "
    "no longer sum to 1: divide the scores, before the softmax.",
    "attention-one-result": "your function returns one tensor: return a pair (out, weights), as "
    "the book's attention does.",
    "attention-k-times-q": "your weights are (T_k, T_q) = ({tk}, {tq}) per head: the scores are "
    "q @ k^T, one row per query, not k @ q^T.",
    "additive-no-tanh": "there is no tanh between the sum W_q q + W_k k and w_v: without it the "
    "score is linear in q and k.",
    "additive-tanh-after-w_v": "the tanh comes after w_v: it belongs inside, score = w_v . "
    "tanh(W_q q + W_k k), so that w_v weighs the squashed features.",
    "additive-relu": "the score squashes with ReLU; additive attention uses tanh.",
    "additive-product": "the projected query and key are multiplied: additive attention adds "
    "them, score = w_v . tanh(W_q q + W_k k).",
    "additive-no-w_v": "w_v is not used: you sum tanh(W_q q + W_k k) over its hidden features; "
    "w_v weighs them (score = w_v . tanh(...)).",
    "additive-out-from-keys": "out has the keys' size {dk}: out = weights @ values, the values' "
    "size {dv}.",
    "attention-out-mean": "the weights are right, but out is {T_k} times too small: the "
    "weighted values are averaged over the {T_k} keys; they are summed, out = weights @ v (the "
    "weights already sum to 1).",
    "attention-out-mask-inverted": "the weights are right, but out is the output under the mask "
    "inverted: the call that computes out (a fused kernel, such as "
    "F.scaled_dot_product_attention, whose boolean attn_mask is True where a query may attend) "
    "gets ~mask, or a mask of the other polarity -- {polarity}.",
}

MESSAGES = {
    "softmax-gradients-differ": "the values are right but the gradients differ from the reference.",
    "attention-times-sqrt-dk": "you multiply the scores by sqrt(d_k); divide them by it.",
    "attention-out-differs": "the weights are right but out is not: out = weights @ v.",
    "attention-nan-gradient": "the gradient with respect to {name} has NaN. This probe has a "
    "query that sees no key, whose zero weights need a finite gradient too: a row of -inf into "
    "softmax, or a sum clamped to a tiny number (1 / tiny overflows backward), gives NaN. Zero "
    "such a row with torch.where after the softmax, as masked_softmax does (chapter 6).",
    "attention-gradient-differs": "the gradient with respect to {name} differs from the reference.",
    "additive-double-tanh": "there is a second tanh after w_v: the score is w_v . tanh(W_q q + "
    "W_k k), with no tanh around it.",
    "additive-sigmoid": "the score squashes with sigmoid; additive attention uses tanh.",
    "additive-not-a-pair": "return a pair (out, weights), as the book's module does.",
    "attention-not-a-pair": "your function returns a {kind}: return a pair (out, weights), as "
    "the book's attention does.",
    "additive-out-differs": "the weights are right but out is not: out = weights @ values.",
}

# --- masked softmax ---------------------------------------------------------------------------


@check("masked softmax", call="fn(scores, mask)")
def check_masked_softmax(fn: Callable[[Tensor, Tensor | None], Tensor]) -> Verdict:
    """``fn(scores, mask)``: softmax over the last axis, masked keys exactly 0, a fully masked
    row all zeros (its gradient too, never NaN); ``mask`` is boolean, True = may attend,
    broadcastable to ``scores``, or None."""
    scores, mask = randn(2, 3, 4, 5), randn(2, 1, 4, 5, seed=1) > -0.3  # (B, H, T_q, T_k)
    mask[0, 0, 1] = False  # query 1 of sequence 0 sees no key at all; True = may attend
    padding = torch.arange(5) < torch.tensor([5, 3]).view(2, 1, 1, 1)  # (B, 1, 1, T_k), keys
    for i, m in enumerate(probes := (None, mask, padding)):  # keys 3, 4 of sentence 1: padding
        expected = masked_softmax(scores, m)
        got = expect_tensor(fn(scores.clone(), m), TENSOR_NAMES["weights"], scores.shape)
        if not close(got, expected, 1e-8):
            raise masking_mistake(got, scores, m, [(scores, right) for right in probes[:i]])
    _expect_no_overflow(fn, (scores * 1000).masked_fill(~mask, -3000.0), mask)
    # gradients, including through the fully masked row
    x = scores.clone().requires_grad_()
    got = fn(x, mask)
    if not got.requires_grad:
        raise Wrong.named(MISTAKES, "softmax-detached")
    got.mul(randn(*scores.shape, seed=2)).sum().backward()
    y = scores.clone().requires_grad_()
    masked_softmax(y, mask).mul(randn(*scores.shape, seed=2)).sum().backward()
    if x.grad is None:
        raise Wrong.named(MISTAKES, "softmax-detached")
    if torch.isnan(x.grad).any():
        raise Wrong.named(MISTAKES, "softmax-nan-gradient")
    if not close(x.grad, y.grad, tolerance(got)):  # as precise as the reader's dtype
        raise Wrong.differs(MESSAGES, "softmax-gradients-differ")
    expect_dtype_kept(got, scores, TENSOR_NAMES["weights"])
    return "values, gradients, every mask and a fully masked row are right."


def _expect_no_overflow(fn: Callable, scores: Tensor, mask: Tensor) -> None:
    """Visible scores in the thousands (unscaled dot products of long vectors) must not make
    exp() overflow, and inf / inf NaN; masked ones are lowest, so exp()ing them first is fine.
    Overflow is named when the NaN rows are those with a visible score past exp()'s limit in
    the reader's dtype, and each row shifted down by its largest score (the same weights) comes
    out right; a max taken over the wrong axis or the whole tensor empties other rows."""
    got = expect_tensor(fn(scores.clone(), mask), TENSOR_NAMES["weights"], scores.shape)
    right = masked_softmax(scores, mask)
    if close(got, right, 1e-8):
        return
    nan = torch.isnan(got).any(-1)
    if nan.any():
        limit = math.log(torch.finfo(got.dtype).max)  # near 709 in float64, 89 in float32
        past = (scores.masked_fill(~mask, -math.inf) > limit).any(-1)
        shifted = scores - scores.amax(-1, keepdim=True)
        if torch.equal(nan, past) and close(fn(shifted, mask), right, 1e-8):
            raise Wrong.named(MISTAKES, "softmax-overflow", top=f"{scores.max().item():.0f}")
    raise masking_mistake(got, scores, mask)


# --- scaled dot-product attention ------------------------------------------------------------


def _attention_mask(B: int, Tq: int, Tk: int) -> Tensor:
    """``(B, 1, T_q, T_k)``: sequence 1 has two padding keys; query 1 of sequence 0 sees none."""
    mask = torch.ones(B, 1, Tq, Tk, dtype=torch.bool)
    mask[1, ..., 2:] = False
    mask[0, :, 1] = False
    return mask


def _scale_diagnosis(fn_out: Tensor, fn_w: Tensor, q, k, v, mask, dk: int, dv: int) -> Wrong | None:
    """The scale a reader used instead of 1/sqrt(d_k), named; None if it is not the scale."""
    tk = k.shape[-2]
    scales = {  # the scale, the mistake (or the message) and its fields
        1.0: ("attention-unscaled", {"dk": dk, "ratio": math.sqrt(dk)}),
        1 / math.sqrt(dv): ("attention-sqrt-dv", {"dv": dv, "dk": dk}),
        1 / dk: ("attention-by-dk", {"dk": dk}),
        math.sqrt(dk): ("attention-times-sqrt-dk", {}),
        1 / math.sqrt(tk): ("attention-sqrt-tk", {"tk": tk, "dk": dk}),
    }
    for scale, (key, fields) in scales.items():
        out, weights = attention(q, k, v, mask=mask, scale=scale)
        if close(fn_w, weights) or close(fn_out, out):
            return Wrong.named_or_differs(MISTAKES, MESSAGES, key, **fields)
    weights = masked_softmax(q @ k.transpose(-2, -1), mask) / math.sqrt(dk)
    if close(fn_w, weights):
        return Wrong.named(MISTAKES, "attention-scales-weights")
    divisor = implied_divisor(fn_w, q @ k.transpose(-2, -1))
    if divisor is not None and close(fn_w, attention(q, k, v, mask=mask, scale=1 / divisor)[1]):
        shapes = {f"q.shape[{i}]": n for i, n in enumerate(q.shape[:-1])}
        return scale_named(divisor, shapes | {"k.shape[-2] (T_k)": tk, "v.shape[-1] (d_v)": dv}, dk)
    return None


def _out_mistake(out: Tensor, q: Tensor, k: Tensor, v: Tensor, m: Tensor | None) -> Wrong:
    """The weights are right, out is not: out from a mean over the keys, or from the mask
    inverted (a fused kernel called with the book's mask, whose True means the opposite)."""
    expected, weights = attention(q, k, v, m)
    if close(out, expected / k.shape[-2]):
        return Wrong.named(MISTAKES, "attention-out-mean", T_k=k.shape[-2])
    if m is not None and not m.all() and close(out.nan_to_num(), attention(q, k, v, ~m)[0]):
        return Wrong.named(MISTAKES, "attention-out-mask-inverted", polarity=POLARITY)
    return Wrong.differs(MESSAGES, "attention-out-differs")


@check("scaled dot-product attention", call="fn(q, k, v, mask=None)")
def check_attention(fn: Callable[..., tuple[Tensor, Tensor]]) -> Verdict:
    """``fn(q, k, v, mask=None) -> (out, weights)``: ``softmax(q k^T / sqrt(d_k)) v`` with the
    mask of ``check_masked_softmax`` (a query that may see no key gets zero weights and a zero
    output); q ``(..., T_q, d_k)``, k ``(..., T_k, d_k)``, v ``(..., T_k, d_v)`` with d_k !=
    d_v; out ``(..., T_q, d_v)``, weights ``(..., T_q, T_k)``; values and gradients."""
    B, H, Tq, Tk, dk, dv = 2, 2, 3, 4, 12, 5  # d_k / 2 and 2 d_k are no other size
    q, k, v = randn(B, H, Tq, dk), randn(B, H, Tk, dk, seed=1), randn(B, H, Tk, dv, seed=2)
    mask = _attention_mask(B, Tq, Tk)
    for m in (None, mask):
        expected, expected_w = attention(q, k, v, mask=m)
        result = call_attention(fn, q, k, v, m)
        if isinstance(result, Tensor):
            raise Wrong.named(MISTAKES, "attention-one-result")
        if not unpacks_to(result, 2):
            raise Wrong.differs(MESSAGES, "attention-not-a-pair", kind=type(result).__name__)
        shapes = tuple(tuple(getattr(r, "shape", ())) for r in result)
        expect_pair_order(result, ("out", "weights"), (expected.shape, expected_w.shape))
        if shapes[1] == (*expected_w.shape[:-2], Tk, Tq):
            raise Wrong.named(MISTAKES, "attention-k-times-q", tk=Tk, tq=Tq)
        sizes = {"T_q": Tq, "T_k": Tk, TENSOR_NAMES["d-k-keys"]: dk, "d_v": dv}
        out = expect_tensor(result[0], "out", expected.shape, sizes)
        weights = expect_tensor(result[1], "weights", expected_w.shape, sizes)
        if close(weights, expected_w) and close(out, expected):
            continue
        if wrong := unmasked_weights(out, weights, expected, attention(q, k, v)[1], m):
            raise wrong
        if named := _scale_diagnosis(out, weights, q, k, v, m, dk, dv):
            raise named
        if close(weights, expected_w):
            rerun = functools.partial(call_attention, fn, q, k, v, m)  # a dropout left on?
            raise random_output(rerun, out, "out") or _out_mistake(out, q, k, v, m)
        raise masking_mistake(weights, q @ k.transpose(-2, -1) / math.sqrt(dk), m)
    qs = [t.clone().requires_grad_() for t in (q, k, v)]
    rs = [t.clone().requires_grad_() for t in (q, k, v)]
    out = fn(*qs, mask=mask)[0]
    backward(out.sum(), "out")
    attention(*rs, mask=mask)[0].sum().backward()
    for name, a, b in zip("qkv", qs, rs, strict=True):
        if a.grad is not None and torch.isnan(a.grad).any():
            raise Wrong.differs(MESSAGES, "attention-nan-gradient", name=name)
        if a.grad is None:
            raise Wrong.named(GRADIENTS, "gradient-detached", name=name)
        if not close(a.grad, b.grad, tolerance(out)):
            raise Wrong.differs(MESSAGES, "attention-gradient-differs", name=name)
    expect_dtype_kept(out, q, "out")
    return ("values, weights, gradients, with and without a padding mask and with a query "
            "that sees no key, are right.")  # fmt: skip


# --- additive attention ---------------------------------------------------------------------------

_SCORES = {  # score functions a reader may write instead of w_v . tanh(W_q q + W_k k), from
    # the projected queries a (B, T_q, 1, H) and keys b (B, 1, T_k, H)
    "additive-no-tanh": lambda m, a, b: m.w_v(a + b),
    "additive-tanh-after-w_v": lambda m, a, b: torch.tanh(m.w_v(a + b)),
    "additive-double-tanh": lambda m, a, b: torch.tanh(m.w_v(torch.tanh(a + b))),
    "additive-relu": lambda m, a, b: m.w_v(torch.relu(a + b)),
    "additive-sigmoid": lambda m, a, b: m.w_v(torch.sigmoid(a + b)),
    "additive-no-w_v": lambda m, a, b: torch.tanh(a + b).sum(-1, keepdim=True),
    "additive-product": lambda m, a, b: m.w_v(torch.tanh(a * b)),
}


@check("additive attention", build="cls(query_dim, key_dim, hidden_dim)",
       call="m(queries, keys, values, mask=None)")  # fmt: skip
def check_additive_attention(cls: type) -> Verdict:
    """``cls(query_dim, key_dim, hidden_dim)``: score = ``w_v . tanh(W_q q + W_k k)``, then the
    masked softmax over the keys (a padding mask ``(B, 1, T_k)``, and a mask ``(B, T_q, T_k)``
    where a query sees no key: zero weights) and the weighted sum of the values; called as
    ``m(queries, keys, values, mask=None) -> (out, weights)``."""
    Dq, Dk, Hd, Dv, B, Tq, Tk = 3, 7, 6, 5, 2, 2, 4  # key_dim apart from T_k
    torch.manual_seed(0)
    mine = build(cls, (Dq, Dk, Hd), AdditiveAttention, ("W_q", "W_k", "w_v"))
    mine = mine.double().eval()
    reference = AdditiveAttention(Dq, Dk, Hd).double().eval()
    with_weights_of(mine, reference, ("W_q", "W_k", "w_v"))
    q, k, v = randn(B, Tq, Dq), randn(B, Tk, Dk, seed=1), randn(B, Tk, Dv, seed=2)
    padding = torch.ones(B, 1, Tk, dtype=torch.bool)
    padding[1, :, 2:] = False
    blind = padding.expand(B, Tq, Tk).clone()
    blind[0, 1] = False  # query 1 of sequence 0 sees no key
    probes = [(q, k, v, m) for m in (None, padding, blind)]
    probes.append((q[:1, :1], k[:1], v[:1], padding[:1]))  # B = T_q = 1: axes of size one
    probes.append((q[:, :1], k, v, padding))  # T_q = 1 alone
    with torch.no_grad():
        for q, k, v, m in probes:
            B, Tq = q.shape[:2]
            result = call_attention(mine, q, k, v, m)
            if not unpacks_to(result, 2):
                raise Wrong.differs(MESSAGES, "additive-not-a-pair")
            shapes = tuple(tuple(getattr(r, "shape", ())) for r in result)
            expect_pair_order(result, ("out", "weights"), ((B, Tq, Dv), (B, Tq, Tk)))
            if shapes == ((B, Tq, Dk), (B, Tq, Tk)) and close(result[0], result[1].to(k) @ k):
                raise Wrong.named(MISTAKES, "additive-out-from-keys", dk=Dk, dv=Dv)
            sizes = {TENSOR_NAMES["hidden-dim"]: Hd, "key_dim": Dk, "T_k": Tk}
            out = expect_tensor(result[0], "out", (B, Tq, Dv), sizes)
            weights = expect_tensor(result[1], "weights", (B, Tq, Tk))
            want_out, want_w = reference(q, k, v, mask=m)
            if close(out, want_out) and close(weights, want_w):
                continue
            if wrong := unmasked_weights(out, weights, want_out, reference(q, k, v)[1], m):
                raise wrong
            a, b = mine.W_q(q).unsqueeze(-2), mine.W_k(k).unsqueeze(-3)  # (B, Tq, 1, Hd) ...
            for key, score in _SCORES.items():
                if close(weights, masked_softmax(score(mine, a, b).squeeze(-1), m)):
                    raise Wrong.named_or_differs(MISTAKES, MESSAGES, key)
            if close(weights, want_w):
                raise Wrong.differs(MESSAGES, "additive-out-differs")
            scores = mine.w_v(torch.tanh(a + b)).squeeze(-1)  # (B, Tq, Tk)
            raise masking_mistake(weights, scores, m)
    _expect_no_dropout(mine, *probes[1])
    return ("scores, masked weights (also for a query that sees no key) and the weighted sum "
            "of the values are right.")  # fmt: skip


def _expect_no_dropout(mine: torch.nn.Module, q: Tensor, k: Tensor, v: Tensor, m: Tensor) -> None:
    """Built as the exercise builds it, the module has no dropout: in training mode too, two
    calls on the same input agree."""
    mine.train()
    with torch.no_grad():
        first, second = (call_attention(mine, q, k, v, m)[0] for _ in range(2))
    mine.eval()
    if not close(first, second):
        raise Wrong.named(MISTAKES, "additive-dropout-on")
