"""Self-attention checks: the single-head self-attention layer (chapter 8)."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from ..attention import attention
from .engine import check
from .tensors import close, expect_tensor, randn
from .verdict import POLARITY, Verdict, Wrong


def _matrix(module: torch.nn.Module, name: str, d_in: int, d_out: int) -> Tensor:
    """The reader's ``name`` as a ``(d_in, d_out)`` matrix (``x @ W``): an ``nn.Parameter`` as
    the book stores it, or a linear layer without bias (whose weight is its transpose)."""
    theirs = getattr(module, name, None)
    if isinstance(theirs, torch.nn.Linear):
        if theirs.bias is not None:
            raise Wrong(f"`{name}` has a bias; the book's W_q, W_k, W_v are plain matrices.")
        theirs = theirs.weight.T
    if not isinstance(theirs, Tensor):
        raise Wrong(f"the module needs a ({d_in}, {d_out}) nn.Parameter `{name}`, as in the "
                    "book (q = x @ W_q).")  # fmt: skip
    if tuple(theirs.shape) != (d_in, d_out):
        raise Wrong(f"`{name}` has shape {tuple(theirs.shape)}; it maps d_in = {d_in} to "
                    f"{d_out}: shape ({d_in}, {d_out}).")  # fmt: skip
    return theirs.detach().double()


def _diagnose(out: Tensor, weights: Tensor, x: Tensor, matrices: tuple, probe_mask) -> None:
    """Raise the mistake (or the difference) that gives the reader's ``out`` and ``weights``."""
    W_q, W_k, W_v = matrices
    q, k, v = x @ W_q, x @ W_k, x @ W_v  # (B, T, d_k), (B, T, d_k), (B, T, d_v)
    d_k, d_v = W_k.shape[1], W_v.shape[1]
    want, want_w = attention(q, k, v, probe_mask)
    if probe_mask is not None:
        if close(weights, attention(q, k, v)[1]):
            raise Wrong("the mask is ignored: masked keys must get weight exactly 0.")
        if close(weights, attention(q, k, v, ~probe_mask)[1]):
            raise Wrong(f"mask polarity: you hide the keys where the mask is True -- "
                        f"{POLARITY}.")  # fmt: skip
    scores = q @ k.transpose(-2, -1)  # (B, T, T)
    if probe_mask is not None:
        scores = scores.masked_fill(~probe_mask, float("-inf"))
    looks_like = {
        "no scale": (scores.softmax(-1), "the scores are not scaled: divide Q K^T by "
                     f"sqrt(d_k) = {math.sqrt(d_k):.3f} before the softmax."),
        "by d_k": ((scores / d_k).softmax(-1), f"the scores are divided by d_k = {d_k}; "
                   f"divide by its square root, sqrt(d_k) = {math.sqrt(d_k):.3f}."),
        "over queries": ((scores / math.sqrt(d_k)).softmax(-2), "the softmax runs over "
                         "the queries (axis -2); each query's weights are a "
                         "distribution over the keys, the last axis."),
        "q for k": (attention(q, q, v, probe_mask)[1], "the keys are made with W_q: "
                    "keys use their own matrix W_k (with one matrix, every token would "
                    "score itself highest)."),
        "k for q": (attention(k, k, v, probe_mask)[1], "the queries are made with W_k: "
                    "queries use their own matrix W_q."),
        "by sqrt d_v": ((scores / math.sqrt(d_v)).softmax(-1), f"the scores are divided by "
                        f"sqrt(d_v) = sqrt({d_v}); the scale is sqrt(d_k) = sqrt({d_k}), the "
                        "size of the query and key vectors whose dot product it tames."),
        "k q^T": (attention(k, q, v, probe_mask)[1], "the scores are K Q^T, one row per "
                  "key: they are Q K^T, row i query i's scores over the keys j."),
    }  # fmt: skip
    for got_w, message in looks_like.values():
        if close(weights, got_w):
            raise Wrong(message)
    if close(weights, want_w.transpose(-2, -1)):
        raise Wrong("the weights are transposed: row i holds query i's weights over the "
                    "keys j, softmax(Q K^T), not (Q K^T)^T.")  # fmt: skip
    if close(weights, want_w):
        if close(out, want_w.transpose(-2, -1) @ v):
            raise Wrong("out is computed with the transposed weights: out = weights @ V, "
                        "row i the mix of the values by query i's weights.")  # fmt: skip
        if close(out, want_w @ (x @ W_k)[..., :d_v]) or close(out, want_w @ x[..., :d_v]):
            raise Wrong("the values are not x @ W_v.")
        raise Wrong("the weights are right but out is not: out = weights @ (x @ W_v).")
    raise Wrong(
        "the weights differ from softmax(Q K^T / sqrt(d_k)) with Q = x @ W_q, "
        f"K = x @ W_k (x {tuple(x.shape)}" + (")." if probe_mask is None else ", with a mask).")
    )


@check("self-attention", build="cls(d_in, d_k, d_v)", call="layer(x, mask)")
def check_self_attention(cls: type) -> Verdict:
    """``cls(d_in, d_k, d_v=None)`` with the matrices ``W_q``, ``W_k`` ``(d_in, d_k)`` and
    ``W_v`` ``(d_in, d_v)``, called as ``layer(x, mask=None) -> (out, weights)``: x ``(B, T,
    d_in)``; out ``softmax(Q K^T / sqrt(d_k)) V`` ``(B, T, d_v)``, weights ``(B, T, T)`` (rows =
    queries); mask boolean, True = may attend, broadcastable to ``(B, T, T)``."""
    d_in, d_k, d_v, B, T = 6, 4, 3, 2, 5  # d_v != d_k != T, so a transposition shows
    torch.manual_seed(0)
    mine = cls(d_in, d_k, d_v).double()
    W_q, W_k = _matrix(mine, "W_q", d_in, d_k), _matrix(mine, "W_k", d_in, d_k)
    W_v = _matrix(mine, "W_v", d_in, d_v)
    x = randn(B, T, d_in) * 2
    q, k, v = x @ W_q, x @ W_k, x @ W_v  # (B, T, d_k), (B, T, d_k), (B, T, d_v)
    # every row keeps itself and loses at least one key, so an inverted mask leaves each
    # row a key to attend to (the comparison stays finite)
    mask = torch.ones(B, T, T, dtype=torch.bool)  # (B, T, T)
    for b in range(B):
        for t in range(T):
            mask[b, t, (t + 1 + b) % T] = False
            mask[b, t, (t + 3) % T] = False
    for probe_mask in (None, mask):
        want, want_w = attention(q, k, v, probe_mask)
        with torch.no_grad():
            result = mine(x.clone()) if probe_mask is None else mine(x.clone(), probe_mask)
        if not (isinstance(result, tuple) and len(result) == 2):
            raise Wrong("return the pair (out, weights), as the book's SelfAttention does.")
        out = result[0]
        if isinstance(out, Tensor) and tuple(out.shape) == (B, d_v, T):
            raise Wrong(f"out has shape (B, d_v, T) = {tuple(out.shape)}: it is transposed; "
                        f"one row per position, (B, T, d_v) = ({B}, {T}, {d_v}).")  # fmt: skip
        out = expect_tensor(out, "out", (B, T, d_v)).double()
        weights = expect_tensor(result[1], "the weights", (B, T, T)).double()
        if close(out, want) and close(weights, want_w):
            continue
        _diagnose(out, weights, x, (W_q, W_k, W_v), probe_mask)
    return ("Q, K, V from their own matrices, the sqrt(d_k) scale, the softmax over the keys "
            "and the mask (True = may attend) are right.")  # fmt: skip
