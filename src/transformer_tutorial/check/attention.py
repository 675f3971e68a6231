"""Attention checks: masked softmax, scaled dot-product, additive and multi-head attention (chapters 6 and 9)."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from ..attention import AdditiveAttention, attention, masked_softmax
from ..multihead import MultiHeadAttention
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

# --- masked softmax ---------------------------------------------------------------------------


def _softmax_diagnosis(weights: Tensor, scores: Tensor, mask: Tensor | None) -> str:
    """The likeliest mistake that turns the reference into ``weights``."""
    if torch.isnan(weights).any():
        return (
            "your weights contain NaN: a query whose keys are all masked gets softmax(-inf, ..., "
            "-inf) = 0/0. Give such rows all-zero weights (chapter 6)."
        )
    if mask is not None:
        if _close(weights, masked_softmax(scores, ~mask)):
            return f"mask polarity: you masked the keys that may be seen -- {POLARITY}."
        if (weights[~mask.expand_as(weights)].abs() > 1e-9).any():
            return "masked keys get weight above 0: fill their scores with -inf before softmax."
    for axis in range(scores.dim() - 1):
        if _close(weights, torch.softmax(scores, dim=axis)):
            return (
                f"your weights sum to 1 over axis {axis - scores.dim()}, not over the keys (the "
                "last axis) -- did you take the softmax over the wrong axis?"
            )
    return "the weights differ from softmax over the keys."


def check_masked_softmax(fn: Callable[[Tensor, Tensor | None], Tensor]) -> Verdict:
    """``fn(scores, mask)``: softmax over the last axis, masked keys exactly 0, a fully masked
    row all zeros; ``mask`` is boolean, True = may attend, broadcastable to ``scores``."""

    def probes() -> str:
        scores = _random(2, 3, 4, 5)  # (B, H, T_q, T_k)
        mask = _random(2, 1, 4, 5, seed=1) > -0.3  # (B, 1, T_q, T_k), True = may attend
        mask[0, 0, 1] = False  # query 1 of sequence 0 sees no key at all
        for m in (None, mask):
            expected = masked_softmax(scores, m)
            got = _tensor(fn(scores.clone(), m), "the weights", scores.shape)
            if not _close(got, expected, 1e-8):
                raise Wrong(_softmax_diagnosis(got, scores, m) + f" (scores {tuple(scores.shape)})")
        # gradients, including through the fully masked row
        x = scores.clone().requires_grad_()
        fn(x, mask).mul(_random(*scores.shape, seed=2)).sum().backward()
        y = scores.clone().requires_grad_()
        masked_softmax(y, mask).mul(_random(*scores.shape, seed=2)).sum().backward()
        if x.grad is None or torch.isnan(x.grad).any():
            raise Wrong("the gradient has NaN: a fully masked row must not reach softmax as -inf.")
        if not _close(x.grad, y.grad, 1e-8):
            raise Wrong("the values are right but the gradients differ from the reference.")
        return "values, gradients, every mask and a fully masked row are right."

    return _run("masked softmax", probes)


# --- scaled dot-product attention ------------------------------------------------------------


def check_attention(fn: Callable[..., tuple[Tensor, Tensor]]) -> Verdict:
    """``fn(q, k, v, mask=None) -> (out, weights)``: ``softmax(q k^T / sqrt(d_k)) v`` with the
    mask of ``check_masked_softmax``; q ``(..., T_q, d_k)``, k ``(..., T_k, d_k)``, v ``(...,
    T_k, d_v)``; out ``(..., T_q, d_v)``, weights ``(..., T_q, T_k)``."""

    def probes() -> str:
        B, H, Tq, Tk, dk, dv = 2, 2, 3, 4, 8, 5
        q, k, v = (
            _random(B, H, Tq, dk),
            _random(B, H, Tk, dk, seed=1),
            _random(B, H, Tk, dv, seed=2),
        )
        mask = torch.ones(B, 1, Tq, Tk, dtype=torch.bool)
        mask[1, ..., 2:] = False  # sequence 1 has two padding keys
        for m in (None, mask):
            expected, expected_w = attention(q, k, v, mask=m)
            result = fn(q, k, v, mask=m)
            if not (isinstance(result, tuple) and len(result) == 2):
                raise Wrong("return a pair (out, weights), as the book's attention does.")
            out = _tensor(result[0], "out", expected.shape)
            weights = _tensor(result[1], "weights", expected_w.shape)
            if _close(weights, expected_w) and _close(out, expected):
                continue
            unscaled, _ = attention(q, k, v, mask=m, scale=1.0)
            if _close(out, unscaled):
                raise Wrong(
                    "you forgot to divide the scores by sqrt(d_k): with d_k = 8 the softmax gets "
                    "scores 2.8 times too large and its weights are too peaked."
                )
            if _close(weights, expected_w):
                raise Wrong("the weights are right but out is not: out = weights @ v.")
            raise Wrong(_softmax_diagnosis(weights, q @ k.transpose(-2, -1) / math.sqrt(dk), m))
        qs = [t.clone().requires_grad_() for t in (q, k, v)]
        rs = [t.clone().requires_grad_() for t in (q, k, v)]
        fn(*qs, mask=mask)[0].sum().backward()
        attention(*rs, mask=mask)[0].sum().backward()
        for name, a, b in zip("qkv", qs, rs, strict=True):
            if a.grad is None or not _close(a.grad, b.grad):
                raise Wrong(f"the gradient with respect to {name} differs from the reference.")
        return "values, weights, gradients, with and without a padding mask, are right."

    return _run("scaled dot-product attention", probes)


# --- multi-head attention ---------------------------------------------------------------------


def _multihead_variant(m, H, q, k, v, mask, scale=None, reverse_heads=False, split_dh_first=False):
    """Our multi-head attention with the reader's projections, or one typical mistake of it."""
    B, Tq, D = q.shape
    Dh = D // H

    def split(x: Tensor) -> Tensor:  # (B, T, D) -> (B, H, T, Dh)
        if split_dh_first:
            return x.view(B, x.shape[1], Dh, H).permute(0, 3, 1, 2)
        return x.view(B, x.shape[1], H, Dh).transpose(1, 2)

    heads, weights = attention(split(m.q_proj(q)), split(m.k_proj(k)), split(m.v_proj(v)),
                               mask=mask, scale=scale)  # fmt: skip
    if reverse_heads:
        heads = heads.flip(1)
    if split_dh_first:  # merged back the same (wrong) way it was split
        return m.out_proj(heads.permute(0, 2, 3, 1).reshape(B, Tq, D)), weights
    return m.out_proj(heads.transpose(1, 2).reshape(B, Tq, D)), weights


def check_multihead(cls: type) -> Verdict:
    """``cls(d_model, num_heads)``: projections ``q_proj, k_proj, v_proj, out_proj``; H heads of
    Dh = D / H dimensions each attend with the scale 1/sqrt(Dh), are concatenated in order and
    mixed by ``out_proj``."""

    def probes() -> str:
        D, H, B, Tq, Tk = 16, 4, 2, 3, 5
        torch.manual_seed(0)
        mine = cls(D, H).double()
        reference = MultiHeadAttention(D, H).double()
        _with_weights_of(mine, reference, ("q_proj", "k_proj", "v_proj", "out_proj"))
        q, k, v = _random(B, Tq, D), _random(B, Tk, D, seed=1), _random(B, Tk, D, seed=2)
        mask = torch.ones(B, 1, 1, Tk, dtype=torch.bool)
        mask[1, ..., 3:] = False  # two padding keys in sequence 1
        with torch.no_grad():
            for m in (None, mask):
                result = mine(q, k, v, mask=m)
                out = _tensor(result[0] if isinstance(result, tuple) else result, "out", (B, Tq, D))
                expected, _ = reference(q, k, v, mask=m)
                if _close(out, expected):
                    continue
                mistakes = {
                    "the heads are concatenated in the wrong order: head h's output belongs in "
                    "columns h*Dh .. (h+1)*Dh - 1": {"reverse_heads": True},
                    "you split D into (Dh, H) instead of (H, Dh): view the projection as "
                    "(B, T, H, Dh), then move H forward": {"split_dh_first": True},
                    "the scores are divided by sqrt(D), not sqrt(Dh): each head works in Dh = "
                    "D / H dimensions": {"scale": 1 / math.sqrt(D)},
                    "you forgot to divide the scores by sqrt(Dh)": {"scale": 1.0},
                }
                for words, variant in mistakes.items():
                    if _close(out, _multihead_variant(mine, H, q, k, v, m, **variant)[0]):
                        raise Wrong(words + ".")
                if m is not None and _close(out, reference(q, k, v, mask=~m)[0]):
                    raise Wrong(f"mask polarity: {POLARITY}.")
                if m is not None and _close(out, reference(q, k, v)[0]):
                    raise Wrong("the mask is not used: padding keys must get weight 0.")
                raise Wrong(f"out differs from the reference (D = {D}, H = {H}, q {tuple(q.shape)},"
                            f" k and v {tuple(k.shape)}).")  # fmt: skip
        return "heads, scale, concatenation, output projection and the padding mask are right."

    return _run("multi-head attention", probes)


# --- additive attention ---------------------------------------------------------------------------


def check_additive_attention(cls: type) -> Verdict:
    """``cls(query_dim, key_dim, hidden_dim)``: score = ``w_v . tanh(W_q q + W_k k)``, then the
    masked softmax over the keys and the weighted sum of the values."""

    def probes() -> str:
        Dq, Dk, Hd, Dv, B, Tq, Tk = 3, 4, 6, 5, 2, 2, 4
        torch.manual_seed(0)
        mine = cls(Dq, Dk, Hd).double().eval()
        reference = AdditiveAttention(Dq, Dk, Hd).double().eval()
        _with_weights_of(mine, reference, ("W_q", "W_k", "w_v"))
        q, k, v = _random(B, Tq, Dq), _random(B, Tk, Dk, seed=1), _random(B, Tk, Dv, seed=2)
        mask = torch.ones(B, 1, Tk, dtype=torch.bool)
        mask[1, :, 2:] = False
        with torch.no_grad():
            for m in (None, mask):
                result = mine(q, k, v, mask=m)
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise Wrong("return a pair (out, weights), as the book's module does.")
                out = _tensor(result[0], "out", (B, Tq, Dv))
                weights = _tensor(result[1], "weights", (B, Tq, Tk))
                want_out, want_w = reference(q, k, v, mask=m)
                if _close(out, want_out) and _close(weights, want_w):
                    continue
                pre = mine.W_q(q).unsqueeze(-2) + mine.W_k(k).unsqueeze(-3)  # (B, Tq, Tk, Hd)
                if _close(weights, masked_softmax(mine.w_v(pre).squeeze(-1), m)):
                    raise Wrong("there is no tanh between the sum W_q q + W_k k and w_v: without "
                                "it the score is linear in q and k.")  # fmt: skip
                if _close(weights, want_w):
                    raise Wrong("the weights are right but out is not: out = weights @ values.")
                scores = mine.w_v(torch.tanh(pre)).squeeze(-1)
                raise Wrong(_softmax_diagnosis(weights, scores, m))
        return "scores, masked weights and the weighted sum of the values are right."

    return _run("additive attention", probes)
