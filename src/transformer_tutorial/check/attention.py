"""Attention checks: masked softmax, scaled dot-product, additive and multi-head attention (chapters 6 and 9)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from itertools import product

import torch
from torch import Tensor

from ..attention import AdditiveAttention, attention, masked_softmax
from ..multihead import MultiHeadAttention
from .diagnoses import (
    GRADIENTS,
    MASKING,
    call_attention,
    implied_divisor,
    masking_mistake,
    random_output,
    scale_named,
)
from .engine import check
from .self_attention import unmasked_weights
from .tensors import backward, close, expect_tensor, randn, tolerance, unpacks_to, with_weights_of
from .verdict import POLARITY, Verdict, Wrong, say

MISTAKES = {
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
    "attention-weights-first": "you return (weights, out); the book's attention returns "
    "(out, weights).",
    "attention-k-times-q": "your weights are (T_k, T_q) = ({tk}, {tq}) per head: the scores are "
    "q @ k^T, one row per query, not k @ q^T.",
    "multihead-split-dh-first": "you split D into (Dh, H) instead of (H, Dh): view the "
    "projection as (B, T, H, Dh), then move H forward, so that head h gets features h*Dh .. "
    "(h+1)*Dh - 1; you merge the heads as (Dh, H) instead of (H, Dh): transpose back to (B, T, "
    "H, Dh), then reshape to (B, T, D).",
    "multihead-split-no-transpose": "you view the projection (B, T, D) straight as (B, H, T, "
    "Dh), which mixes positions into the heads: view it as (B, T, H, Dh), then transpose(1, 2).",
    "multihead-merge-no-transpose": "you reshape the heads' outputs (B, H, T, Dh) straight "
    "to (B, T, D), which mixes positions: transpose(1, 2) back to (B, T, H, Dh) first, then "
    "reshape.",
    "multihead-heads-reversed": "the heads are concatenated in the wrong order: head h's "
    "output belongs in columns h*Dh .. (h+1)*Dh - 1.",
    "multihead-sqrt-d": "the scores are divided by sqrt(D), not sqrt(Dh): each head works in "
    "Dh = D / H dimensions.",
    "multihead-unscaled": "you forgot to divide the scores by sqrt(Dh).",
    "multihead-v-through-k-proj": "the values go through k_proj: project them with v_proj.",
    "multihead-keys-from-query": "the keys and values are projected from the query, not from "
    "`key` and `value`: self-attention passes the same tensor three times, cross-attention "
    "does not. Project k_proj(key) and v_proj(value).",
    "multihead-no-out-proj": "out_proj is not applied: the concatenated heads are mixed by "
    "out_proj at the end.",
    "multihead-mask-flipped": "mask polarity: in this book a mask is True where a query *may "
    "attend*.",
    "multihead-mask-ignored": "the mask is not used: padding keys must get weight 0.",
    "additive-no-tanh": "there is no tanh between the sum W_q q + W_k k and w_v: without it the "
    "score is linear in q and k.",
    "additive-tanh-after-w_v": "the tanh comes after w_v: it belongs inside, score = w_v . "
    "tanh(W_q q + W_k k), so that w_v weighs the squashed features.",
    "additive-relu": "the score squashes with ReLU; additive attention uses tanh.",
    "additive-no-w_v": "w_v is not used: you sum tanh(W_q q + W_k k) over its hidden features; "
    "w_v weighs them (score = w_v . tanh(...)).",
    "additive-weights-first": "you return (weights, out); the book's module returns "
    "(out, weights).",
    "additive-out-from-keys": "out has the keys' size {dk}: out = weights @ values, the values' "
    "size {dv}.",
    "multihead-by-sqrt-heads": "you divide the scores by sqrt(num_heads); each head divides by "
    "the square root of its own width, sqrt(Dh) = sqrt(d_model / num_heads).",
    "multihead-k-through-q-proj": "the keys go through q_proj: each input has its own "
    "projection, K = k_proj(key).",
    "multihead-v-from-key": "the values are projected from the key input: V = v_proj(value) "
    "(key and value are the same tensor in self-attention, but not in every call).",
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
    "multihead-split-dh-first-only": "you split D into (Dh, H) instead of (H, Dh): view the "
    "projection as (B, T, H, Dh), then move H forward, so that head h gets features h*Dh .. "
    "(h+1)*Dh - 1.",
    "multihead-merge-dh-first": "you merge the heads as (Dh, H) instead of (H, Dh): "
    "transpose back to (B, T, H, Dh), then reshape to (B, T, D).",
    "multihead-by-dh": "you divide the scores by Dh, not by sqrt(Dh).",
    "layout-split-dh-first": "you split D into (Dh, H) instead of (H, Dh): view the "
    "projection as (B, T, H, Dh), then move H forward, so that head h gets features h*Dh .. "
    "(h+1)*Dh - 1",
    "layout-split-no-transpose": "you view the projection (B, T, D) straight as (B, H, T, "
    "Dh), which mixes positions into the heads: view it as (B, T, H, Dh), then transpose(1, 2)",
    "layout-merge-dh-first": "you merge the heads as (Dh, H) instead of (H, Dh): transpose "
    "back to (B, T, H, Dh), then reshape to (B, T, D)",
    "layout-merge-no-transpose": "you reshape the heads' outputs (B, H, T, Dh) straight to "
    "(B, T, D), which mixes positions: transpose(1, 2) back to (B, T, H, Dh) first, then reshape",
    "layout-heads-reversed": "the heads are concatenated in the wrong order: head h's output "
    "belongs in columns h*Dh .. (h+1)*Dh - 1",
    "multihead-split-and-merge": "{split}; {merge}.",
    "multihead-nan-output": "your output contains NaN: a query whose keys are all masked gets "
    "softmax(-inf, ..., -inf) = 0/0. Give such rows all-zero weights (chapter 6).",
    "multihead-out-differs": "out differs from the reference (D = {D}, H = {H}, q {q}, k and v "
    "{k}).",
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
        got = expect_tensor(fn(scores.clone(), m), "the weights", scores.shape)
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
    return "values, gradients, every mask and a fully masked row are right."


def _expect_no_overflow(fn: Callable, scores: Tensor, mask: Tensor) -> None:
    """Visible scores in the thousands (unscaled dot products of long vectors) must not make
    exp() overflow, and inf / inf NaN; masked ones are lowest, so exp()ing them first is fine.
    Overflow is named when the NaN rows are those with a visible score past exp()'s limit in
    the reader's dtype, and each row shifted down by its largest score (the same weights) comes
    out right; a max taken over the wrong axis or the whole tensor empties other rows."""
    got = expect_tensor(fn(scores.clone(), mask), "the weights", scores.shape)
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
        if shapes == (tuple(expected_w.shape), tuple(expected.shape)):
            raise Wrong.named(MISTAKES, "attention-weights-first")
        if shapes[1] == (*expected_w.shape[:-2], Tk, Tq):
            raise Wrong.named(MISTAKES, "attention-k-times-q", tk=Tk, tq=Tq)
        sizes = {"T_q": Tq, "T_k": Tk, "d_k, the keys' width": dk, "d_v": dv}
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
            raise random_output(rerun, out, "out") or Wrong.differs(
                MESSAGES, "attention-out-differs"
            )
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
    return ("values, weights, gradients, with and without a padding mask and with a query "
            "that sees no key, are right.")  # fmt: skip


# --- multi-head attention ---------------------------------------------------------------------

_SPLIT = ("right", "dh_first", "direct")  # how a reader may split (B, T, D) into heads
_MERGE = ("right", "dh_first", "direct", "reversed")  # and merge them back
_LAYOUT = {  # one wrong step: its message (and the mistake, if one is named)
    ("dh_first", "dh_first"): "multihead-split-dh-first",
    ("dh_first", "right"): "multihead-split-dh-first-only",
    ("direct", "right"): "multihead-split-no-transpose",
    ("right", "dh_first"): "multihead-merge-dh-first",
    ("right", "direct"): "multihead-merge-no-transpose",
    ("right", "reversed"): "multihead-heads-reversed",
}
_CLAUSE = {  # each wrong step as a clause, for two at once
    "dh_first": ("layout-split-dh-first", "layout-merge-dh-first"),
    "direct": ("layout-split-no-transpose", "layout-merge-no-transpose"),
    "reversed": (None, "layout-heads-reversed"),
}


def _layout_mistake(split: str, merge: str) -> Wrong:
    """The verdict for a wrong split into heads, a wrong merge, or both."""
    if (split, merge) in _LAYOUT:
        return Wrong.named_or_differs(MISTAKES, MESSAGES, _LAYOUT[split, merge])
    return Wrong.differs(MESSAGES, "multihead-split-and-merge",
                         split=say(MESSAGES, _CLAUSE[split][0]),
                         merge=say(MESSAGES, _CLAUSE[merge][1]))  # fmt: skip


def _multihead_variant(m, H, q, k, v, mask, scale=None, split="right", merge="right",
                       fill=None, value_proj="v_proj", out_proj=True, axis=-1,
                       key_proj="k_proj", value_from="value", added=False):  # fmt: skip
    """Our multi-head attention with the reader's projections, or typical mistakes of it."""
    B, Tq, D = q.shape
    Dh = D // H

    def heads(x: Tensor) -> Tensor:  # (B, T, D) -> (B, H, T, Dh)
        T = x.shape[1]
        if split == "dh_first":
            return x.reshape(B, T, Dh, H).permute(0, 3, 1, 2)
        if split == "direct":
            return x.reshape(B, H, T, Dh)
        return x.reshape(B, T, H, Dh).transpose(1, 2)

    qh, kh = heads(m.q_proj(q)), heads(getattr(m, key_proj)(k))
    vh = heads(getattr(m, value_proj)(k if value_from == "key" else v))
    if fill is None and axis == -1 and not added:
        out, weights = attention(qh, kh, vh, mask=mask, scale=scale)
    else:  # a -1e9 fill, BERT's -10000 added, or the softmax over another axis (B, H, T_q, T_k)
        scores = qh @ kh.transpose(-2, -1) / math.sqrt(Dh)
        if mask is not None:
            filled = scores.masked_fill(~mask, -math.inf if fill is None else fill)
            scores = scores - 1e4 * ~mask if added else filled
        weights = torch.softmax(scores, axis).nan_to_num()
        out = weights @ vh
    if merge == "reversed":
        out = out.flip(1)
    if merge == "dh_first":
        merged = out.permute(0, 2, 3, 1).reshape(B, Tq, D)
    elif merge == "direct":
        merged = out.reshape(B, Tq, D)
    else:
        merged = out.transpose(1, 2).reshape(B, Tq, D)
    return (m.out_proj(merged) if out_proj else merged), weights


def _multihead_diagnosis(mine, reference, H, D, out, q, k, v, m) -> Wrong:
    """Name the mistake that turns the book's multi-head attention into ``out``."""
    if random := random_output(lambda: mine(q, k, v, mask=m), out, "out"):
        return random
    if m is None and close(out, _multihead_variant(mine, H, q, q, q, None)[0]):
        return Wrong.named(MISTAKES, "multihead-keys-from-query")
    nan = torch.isnan(out).any(-1)  # (B, Tq): the queries whose output is NaN
    if nan.any():  # the NaN rows said only when they are the queries that see no key
        seen = ~nan.unsqueeze(-1).expand_as(out)
        if m is not None and close(out[seen], reference(q, k, v, mask=~m)[0][seen]):
            return Wrong.named(MISTAKES, "multihead-mask-flipped")
        blind = m is not None and torch.equal(nan, ~m.expand(-1, 1, q.shape[1], -1).any(-1)[:, 0])
        if blind and close(out[seen], reference(q, k, v, mask=m)[0][seen]):
            return Wrong.differs(MESSAGES, "multihead-nan-output")
        return Wrong.differs(MESSAGES, "multihead-out-differs", D=D, H=H, q=tuple(q.shape),
                             k=tuple(k.shape))  # fmt: skip
    layouts = [(s, m) for s, m in product(_SPLIT, _MERGE) if (s, m) != ("right", "right")]
    candidates = [(_layout_mistake(s, m), {"split": s, "merge": m}) for s, m in layouts]
    others = {
        "multihead-sqrt-d": {"scale": 1 / math.sqrt(D)},
        "multihead-unscaled": {"scale": 1.0},
        "multihead-by-dh": {"scale": 1 / (D // H)},
        "multihead-by-sqrt-heads": {"scale": 1 / math.sqrt(H)},
        "multihead-k-through-q-proj": {"key_proj": "q_proj"},
        "multihead-v-from-key": {"value_from": "key"},
        "multihead-v-through-k-proj": {"value_proj": "k_proj"},
        "multihead-no-out-proj": {"out_proj": False},
    }
    candidates += [
        (Wrong.named_or_differs(MISTAKES, MESSAGES, key), variant)
        for key, variant in others.items()
    ]
    for axis in (1, 2):  # the heads, the queries
        wrong = Wrong.named(MASKING, "softmax-wrong-axis", axis=axis - 4, polarity=POLARITY)
        candidates.append((wrong, {"axis": axis}))
    if m is not None:
        candidates.append((Wrong.named(MASKING, "softmax-minus-1e9"), {"fill": -1e9}))
        candidates.append((Wrong.named(MASKING, "softmax-added-minus-1e4"), {"added": True}))
    for verdict, variant in candidates:
        if close(out, _multihead_variant(mine, H, q, k, v, m, **variant)[0]):
            return verdict
    if m is not None and close(out, reference(q, k, v, mask=~m)[0]):
        return Wrong.named(MISTAKES, "multihead-mask-flipped")
    if m is not None and close(out, reference(q, k, v)[0]):
        return Wrong.named(MISTAKES, "multihead-mask-ignored")
    return Wrong.differs(MESSAGES, "multihead-out-differs", D=D, H=H, q=tuple(q.shape),
                         k=tuple(k.shape))  # fmt: skip


@check(
    "multi-head attention", build="cls(d_model, num_heads)", call="m(query, key, value, mask=None)"
)
def check_multihead(cls: type) -> Verdict:
    """``cls(d_model, num_heads)``: projections ``q_proj, k_proj, v_proj, out_proj``; H heads of
    Dh = D / H dimensions each attend with the scale 1/sqrt(Dh), are concatenated in order and
    mixed by ``out_proj``; ``m(query, key, value, mask=None)`` with a padding mask ``(B, 1, 1,
    T_k)`` and a mask ``(B, 1, T_q, T_k)`` where a query sees no key (its heads output zeros)."""
    D, H, B, Tq, Tk = 40, 4, 2, 3, 5  # Dh = 10: no other scale (sqrt(H), int(sqrt(Dh))) equals it
    torch.manual_seed(0)
    mine = cls(D, H)
    with_weights_of(mine, MultiHeadAttention(D, H), ("q_proj", "k_proj", "v_proj", "out_proj"))
    mine = mine.double()
    reference = MultiHeadAttention(D, H).double()
    with_weights_of(mine, reference, ("q_proj", "k_proj", "v_proj", "out_proj"))
    q, k, v = randn(B, Tq, D), randn(B, Tk, D, seed=1), randn(B, Tk, D, seed=2)
    padding = torch.ones(B, 1, 1, Tk, dtype=torch.bool)
    padding[1, ..., 3:] = False  # two padding keys in sequence 1
    blind = padding.expand(B, 1, Tq, Tk).clone()
    blind[0, :, 1] = False  # query 1 of sequence 0 sees no key
    probes = [(q, k, v, m) for m in (None, padding, blind)]
    probes.append((q[:1, :1], k[:1], v[:1], padding[:1]))  # B = T_q = 1: axes of size one
    probes.append((q[:, :1], k, v, padding))  # T_q = 1 alone
    with torch.no_grad():
        for q, k, v, m in probes:
            B, Tq = q.shape[:2]
            result = call_attention(mine, q, k, v, m)  # out, or (out, weights)
            out = result[0] if isinstance(result, (tuple, list)) else result
            out = expect_tensor(out, "out", (B, Tq, D))
            expected, _ = reference(q, k, v, mask=m)
            if not close(out, expected):
                raise _multihead_diagnosis(mine, reference, H, D, out, q, k, v, m)
    return ("heads, scale, concatenation, output projection, the padding mask and a query "
            "that sees no key are right.")  # fmt: skip


# --- additive attention ---------------------------------------------------------------------------

_SCORES = {  # score functions a reader may write instead of w_v . tanh(W_q q + W_k k)
    "additive-no-tanh": lambda m, pre: m.w_v(pre),
    "additive-tanh-after-w_v": lambda m, pre: torch.tanh(m.w_v(pre)),
    "additive-double-tanh": lambda m, pre: torch.tanh(m.w_v(torch.tanh(pre))),
    "additive-relu": lambda m, pre: m.w_v(torch.relu(pre)),
    "additive-sigmoid": lambda m, pre: m.w_v(torch.sigmoid(pre)),
    "additive-no-w_v": lambda m, pre: torch.tanh(pre).sum(-1, keepdim=True),
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
    mine = cls(Dq, Dk, Hd)
    with_weights_of(mine, AdditiveAttention(Dq, Dk, Hd), ("W_q", "W_k", "w_v"))
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
            if shapes == ((B, Tq, Tk), (B, Tq, Dv)):
                raise Wrong.named(MISTAKES, "additive-weights-first")
            if shapes == ((B, Tq, Dk), (B, Tq, Tk)) and close(result[0], result[1].to(k) @ k):
                raise Wrong.named(MISTAKES, "additive-out-from-keys", dk=Dk, dv=Dv)
            sizes = {"hidden_dim (W_k's width)": Hd, "key_dim": Dk, "T_k": Tk}
            out = expect_tensor(result[0], "out", (B, Tq, Dv), sizes)
            weights = expect_tensor(result[1], "weights", (B, Tq, Tk))
            want_out, want_w = reference(q, k, v, mask=m)
            if close(out, want_out) and close(weights, want_w):
                continue
            if wrong := unmasked_weights(out, weights, want_out, reference(q, k, v)[1], m):
                raise wrong
            pre = mine.W_q(q).unsqueeze(-2) + mine.W_k(k).unsqueeze(-3)  # (B, Tq, Tk, Hd)
            for key, score in _SCORES.items():
                if close(weights, masked_softmax(score(mine, pre).squeeze(-1), m)):
                    raise Wrong.named_or_differs(MISTAKES, MESSAGES, key)
            if close(weights, want_w):
                raise Wrong.differs(MESSAGES, "additive-out-differs")
            scores = mine.w_v(torch.tanh(pre)).squeeze(-1)
            raise masking_mistake(weights, scores, m)
    return ("scores, masked weights (also for a query that sees no key) and the weighted sum "
            "of the values are right.")  # fmt: skip
