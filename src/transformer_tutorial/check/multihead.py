"""The multi-head attention check (chapter 9): heads split, attended and merged as the book's."""

from __future__ import annotations

import math
from itertools import product

import torch
from torch import Tensor

from ..attention import attention
from ..multihead import MultiHeadAttention
from .diagnoses import MASKING, call_attention, random_output
from .engine import check
from .tensors import (
    build,
    close,
    expect_dtype_kept,
    expect_pair_order,
    expect_tensor,
    randn,
    with_weights_of,
)
from .verdict import POLARITY, Verdict, Wrong, say

MISTAKES = {
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
    "multihead-by-sqrt-heads": "you divide the scores by sqrt(num_heads); each head divides by "
    "the square root of its own width, sqrt(Dh) = sqrt(d_model / num_heads).",
    "multihead-q-through-k-proj": "the queries go through k_proj: each input has its own "
    "projection, Q = q_proj(query).",
    "multihead-k-through-q-proj": "the keys go through q_proj: each input has its own "
    "projection, K = k_proj(key).",
    "multihead-v-from-key": "the values are projected from the key input: V = v_proj(value) "
    "(key and value are the same tensor in self-attention, but not in every call).",
}

MESSAGES = {
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
}


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
                       key_proj="k_proj", value_from="value", added=False,
                       query_proj="q_proj"):  # fmt: skip
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

    qh, kh = heads(getattr(m, query_proj)(q)), heads(getattr(m, key_proj)(k))
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
        "multihead-q-through-k-proj": {"query_proj": "k_proj"},
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
    mine = build(cls, (D, H), MultiHeadAttention, ("q_proj", "k_proj", "v_proj", "out_proj"))
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
            expect_pair_order(result, ("out", "weights"), ((B, Tq, D), (B, H, Tq, k.shape[1])))
            out = result[0] if isinstance(result, (tuple, list)) else result
            out = expect_tensor(out, "out", (B, Tq, D), {"T_q": Tq, "T_k": k.shape[1]})
            expected, _ = reference(q, k, v, mask=m)
            if not close(out, expected):
                raise _multihead_diagnosis(mine, reference, H, D, out, q, k, v, m)
    expect_dtype_kept(out, q, "out")
    return ("heads, scale, concatenation, output projection, the padding mask and a query "
            "that sees no key are right.")  # fmt: skip
