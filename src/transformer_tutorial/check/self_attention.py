"""Self-attention checks: the single-head self-attention layer (chapter 8)."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from ..attention import attention
from .diagnoses import GRADIENTS, implied_divisor, masking_mistake, scale_named
from .engine import check
from .tensors import NAMES as TENSOR_NAMES
from .tensors import backward, close, expect_pair_order, expect_tensor, randn, unpacks_to
from .verdict import Verdict, Wrong, say

MISTAKES = {
    "self-attn-keeps-keys": "your layer keeps K and V from an earlier call: called again with "
    "another x of the same shape, it attends over the first x's keys and values. Compute K = x "
    "W_k and V = x W_v from the x of each call; a layer keeps only its weights.",
    "self-attn-returns-scores": "the weights you return are the scaled scores Q K^T / sqrt(d_k), "
    "before the softmax: return the softmax of the scores, the weights that make out.",
    "self-attn-relu-normalised": "your weights are ReLU(Q K^T / sqrt(d_k)), each row divided by "
    "its sum: the book's attention (the paper's) normalises the scores with a softmax over the "
    "keys.",
    "self-attn-not-parameter": "`{name}` is a plain tensor, not an nn.Parameter: the module does "
    "not register it, so .parameters() (and an optimizer) never see it, and .double() or .to() "
    "leave it as it was. Wrap it: self.{name} = nn.Parameter(torch.randn(...)).",
    "self-attn-scales-weights": "you divide the weights by sqrt(d_k) after the softmax, so rows "
    "no longer sum to 1: divide the scores, Q K^T / sqrt(d_k), before the softmax.",
    "self-attn-mask-ignored": "the mask is ignored: masked keys must get weight exactly 0.",
    "self-attn-mask-polarity": "mask polarity: you hide the keys where the mask is True -- in "
    "this book a mask is True where a query *may attend*.",
    "self-attn-weights-unmasked": "out is right, masked, but the weights you return are the "
    "softmax before the mask: masked keys show weight above 0 in them. Return the weights that "
    "made out, the ones computed from the masked scores.",
    "self-attn-unscaled": "the scores are not scaled: divide Q K^T by sqrt(d_k) = {root:.3f} "
    "before the softmax.",
    "self-attn-scaled-by-dk": "the scores are divided by d_k = {d_k}, by d_k itself or by "
    "sqrt(d_k) twice (q or k already scaled, then the scores again); divide once by its square "
    "root, sqrt(d_k) = {root:.3f}.",
    "self-attn-adds-input": "built with d_v = d_in, your out is the attention's output plus x: "
    "the layer adds its input back (a residual connection). Self-attention returns "
    "softmax(Q K^T / sqrt(d_k)) V alone; the residual belongs to the block around it (chapter "
    "11).",
    "self-attn-dv-default": "built as cls(d_in, d_k), without d_v: {said} d_v defaults to "
    "d_k = {d_k} (d_v = d_k if d_v is None else d_v).",
    "self-attn-softmax-batch": "the softmax runs over the batch (axis 0): each query's weights "
    "must sum to 1 over the keys of its own sequence, softmax(dim=-1).",
    "self-attn-mask-transposed": "the mask is read transposed: mask[..., i, j] says whether query "
    "i may attend to key j, and yours hides by mask[..., j, i] (a causal mask then hides the "
    "past instead of the future). Use the mask as given.",
    "self-attn-softmax-queries": "the softmax runs over the queries (axis -2); each query's "
    "weights are a distribution over the keys, the last axis.",
    "self-attn-one-matrix": "the keys are made with W_q, or q stands where k belongs in the "
    "scores (q @ q^T): keys use their own matrix W_k (with one matrix, every token would score "
    "itself highest).",
    "self-attn-sqrt-dv": "the scores are divided by sqrt(d_v) = sqrt({d_v}); the scale is "
    "sqrt(d_k) = sqrt({d_k}), the size of the query and key vectors whose dot product it tames.",
    "self-attn-k-times-q": "the scores are K Q^T, one row per key (k @ q^T, or q and k made with "
    "each other's matrices, q = x @ W_k and k = x @ W_q): they are Q K^T, row i query i's scores "
    "over the keys j.",
    "self-attn-transposed-weights": "the weights are transposed: row i holds query i's weights "
    "over the keys j, softmax(Q K^T), not (Q K^T)^T.",
    "self-attn-transposed-out": "out has shape (B, d_v, T) = {shape}: it is transposed; one row "
    "per position, (B, T, d_v) = ({B}, {T}, {d_v}).",
}

MESSAGES = {
    "self-attn-second-call": "right for one x, but a second call with another x of the same "
    "shape gives another result than softmax(Q K^T / sqrt(d_k)) V of that x: does the layer "
    "keep something from one call to the next?",
    "self-attn-square-differs": "built with d_v = d_in ({d_in}), your out differs from "
    "softmax(Q K^T / sqrt(d_k)) V, though it is right when d_v differs from d_in: something in "
    "your layer depends on the two widths being equal.",
    "self-attn-gradient-differs": "the values are right, but the gradient with respect to x "
    "differs from the book's: something on the way from x to out is cut from autograd (a "
    "detach(), .data, .item(), torch.no_grad(), or a tensor rebuilt from plain numbers).",
    "self-attn-not-a-parameter": "the values are right, but `{name}` is a plain tensor that "
    "does not ask for a gradient, so training never changes it: wrap it in nn.Parameter(...).",
    "d-in": "d_in, the input's width",
    "d-k": "d_k, the width of the queries and keys",
    "length": "T, the length",
    "self-attn-bias": "`{name}` has a bias; the book's W_q, W_k, W_v are plain matrices.",
    "self-attn-no-matrix": "the module needs a ({d_in}, {d_out}) nn.Parameter `{name}`, as in the "
    "book (q = x @ W_q).",
    "self-attn-matrix-shape": "`{name}` has shape {shape}; it maps d_in = {d_in} to {d_out}: shape "
    "({d_in}, {d_out}).",
    "self-attn-queries-with-wk": "the queries are made with W_k: queries use their own matrix W_q.",
    "self-attn-out-transposed-weights": "out is computed with the transposed weights: out = "
    "weights @ V, row i the mix of the values by query i's weights.",
    "self-attn-values": "the values are not x @ W_v.",
    "self-attn-out-differs": "the weights are right but out is not: out = weights @ (x @ W_v).",
    "self-attn-weights-differ": "the weights differ from softmax(Q K^T / sqrt(d_k)) with Q = "
    "x @ W_q, K = x @ W_k (x {shape}).",
    "self-attn-weights-differ-masked": "the weights differ from softmax(Q K^T / sqrt(d_k)) with "
    "Q = x @ W_q, K = x @ W_k (x {shape}, with a mask).",
    "self-attn-not-a-pair": "return the pair (out, weights), as the book's SelfAttention does.",
}


def _matrix(module: torch.nn.Module, name: str, d_in: int, d_out: int) -> Tensor:
    """The reader's ``name`` as a ``(d_in, d_out)`` matrix (``x @ W``): an ``nn.Parameter`` as
    the book stores it, or a linear layer without bias (whose weight is its transpose)."""
    theirs = getattr(module, name, None)
    registered = [*module.parameters(), *module.buffers()]
    if isinstance(theirs, Tensor) and not any(theirs is t for t in registered):
        raise Wrong.named(MISTAKES, "self-attn-not-parameter", name=name)
    if isinstance(theirs, torch.nn.Linear):
        if theirs.bias is not None:
            raise Wrong.differs(MESSAGES, "self-attn-bias", name=name)
        theirs = theirs.weight.T
    if not isinstance(theirs, Tensor):
        raise Wrong.differs(MESSAGES, "self-attn-no-matrix", d_in=d_in, d_out=d_out, name=name)
    if tuple(theirs.shape) != (d_in, d_out):
        raise Wrong.differs(MESSAGES, "self-attn-matrix-shape", name=name,
                            shape=tuple(theirs.shape), d_in=d_in, d_out=d_out)  # fmt: skip
    return theirs.detach().double()


def _relu_normalised(scores: Tensor) -> Tensor:
    """ReLU(scores), each row divided by its sum: a normalisation without the softmax."""
    kept = torch.relu(scores)
    return kept / kept.sum(-1, keepdim=True).clamp_min(1e-9)


def unmasked_weights(out: Tensor, weights: Tensor, want_out: Tensor, unmasked: Tensor,
                     mask: Tensor | None) -> Wrong | None:  # fmt: skip
    """The mistake when ``out`` is the book's masked output but ``weights`` are the softmax
    before the mask (``unmasked``): shared by every attention check that takes a mask."""
    if mask is not None and close(out, want_out) and close(weights, unmasked):
        return Wrong.named(MISTAKES, "self-attn-weights-unmasked")
    return None


@torch.no_grad()
def _expect_fresh_keys(mine: torch.nn.Module, x: Tensor, matrices: tuple) -> None:
    """A second call with another x of the same shape attends over that x's keys and values."""
    W_q, W_k, W_v = matrices
    x2 = randn(*x.shape, seed=7) * 2
    got = mine(x2)[0].double()
    if close(got, attention(x2 @ W_q, x2 @ W_k, x2 @ W_v)[0]):
        return
    if close(got, attention(x2 @ W_q, x @ W_k, x @ W_v)[0]):
        raise Wrong.named(MISTAKES, "self-attn-keeps-keys")
    raise Wrong.differs(MESSAGES, "self-attn-second-call")


def _expect_gradients(mine: torch.nn.Module, x: Tensor, mask: Tensor, matrices: tuple) -> None:
    """The gradient reaches x and every matrix, as through the book's attention."""
    r = randn(*x.shape[:-1], matrices[2].shape[1], seed=3)  # a loss that weighs each output
    theirs, ours = x.clone().requires_grad_(), x.clone().requires_grad_()
    backward((mine(theirs, mask)[0] * r).sum(), "out")
    W_q, W_k, W_v = matrices  # the reader's, detached: only x's gradient is compared
    (attention(ours @ W_q, ours @ W_k, ours @ W_v, mask)[0] * r).sum().backward()
    for name in ("W_q", "W_k", "W_v"):
        held = getattr(mine, name)
        param = held.weight if isinstance(held, torch.nn.Linear) else held
        if not param.requires_grad:  # a plain tensor: never trained
            raise Wrong.differs(MESSAGES, "self-attn-not-a-parameter", name=name)
        if param.grad is None:
            raise Wrong.named(GRADIENTS, "gradient-detached", name=name)
    if theirs.grad is None or not close(theirs.grad, ours.grad):
        raise Wrong.differs(MESSAGES, "self-attn-gradient-differs")


def _diagnose(out: Tensor, weights: Tensor, x: Tensor, matrices: tuple, probe_mask) -> None:
    """Raise the mistake (or the difference) that gives the reader's ``out`` and ``weights``."""
    W_q, W_k, W_v = matrices
    q, k, v = x @ W_q, x @ W_k, x @ W_v  # (B, T, d_k), (B, T, d_k), (B, T, d_v)
    d_k, d_v = W_k.shape[1], W_v.shape[1]
    want, want_w = attention(q, k, v, probe_mask)
    if probe_mask is not None:
        if wrong := unmasked_weights(out, weights, want, attention(q, k, v)[1], probe_mask):
            raise wrong
        if close(weights, attention(q, k, v)[1]):
            raise Wrong.named(MISTAKES, "self-attn-mask-ignored")
        if close(weights, attention(q, k, v, ~probe_mask)[1]):
            raise Wrong.named(MISTAKES, "self-attn-mask-polarity")
        if close(weights, attention(q, k, v, probe_mask.transpose(-2, -1))[1]):
            raise Wrong.named(MISTAKES, "self-attn-mask-transposed")
        wrong = masking_mistake(weights, q @ k.transpose(-2, -1) / math.sqrt(d_k), probe_mask)
        if wrong.mistake is not None:  # a masking mistake shared with the other attentions
            raise wrong
    scores = q @ k.transpose(-2, -1)  # (B, T, T)
    if probe_mask is not None:
        scores = scores.masked_fill(~probe_mask, float("-inf"))
    root = math.sqrt(d_k)
    looks_like = {  # the mistake, the weights it gives, its fields
        "self-attn-unscaled": (scores.softmax(-1), {"root": root}),
        "self-attn-scaled-by-dk": ((scores / d_k).softmax(-1), {"d_k": d_k, "root": root}),
        "self-attn-softmax-queries": ((scores / root).softmax(-2), {}),
        "self-attn-softmax-batch": ((scores / root).softmax(0).nan_to_num(), {}),
        "self-attn-one-matrix": (attention(q, q, v, probe_mask)[1], {}),
        "self-attn-queries-with-wk": (attention(k, k, v, probe_mask)[1], {}),
        "self-attn-sqrt-dv": ((scores / math.sqrt(d_v)).softmax(-1), {"d_v": d_v, "d_k": d_k}),
        "self-attn-k-times-q": (attention(k, q, v, probe_mask)[1], {}),
        "self-attn-returns-scores": (scores / math.sqrt(d_k), {}),
        "self-attn-relu-normalised": (_relu_normalised(scores / math.sqrt(d_k)), {}),
        "self-attn-scales-weights": (
            attention(q, k, v, probe_mask, scale=1.0)[1] / math.sqrt(d_k),
            {},
        ),
    }
    for key, (got_w, fields) in looks_like.items():
        if close(weights, got_w):
            raise Wrong.named_or_differs(MISTAKES, MESSAGES, key, **fields)
    if close(weights, want_w.transpose(-2, -1)):
        raise Wrong.named(MISTAKES, "self-attn-transposed-weights")
    divisor = implied_divisor(weights, q @ k.transpose(-2, -1))
    if divisor is not None and close(
        weights, attention(q, k, v, mask=probe_mask, scale=1 / divisor)[1]
    ):
        d_in, T = x.shape[-1], x.shape[-2]
        quantities = {say(MESSAGES, "d-in"): d_in, say(MESSAGES, "length"): T}
        named = scale_named(divisor, quantities, d_k)
        if named is not None:
            raise named
    if close(weights, want_w):
        if close(out, want_w.transpose(-2, -1) @ v):
            raise Wrong.differs(MESSAGES, "self-attn-out-transposed-weights")
        if close(out, want_w @ (x @ W_k)[..., :d_v]) or close(out, want_w @ x[..., :d_v]):
            raise Wrong.differs(MESSAGES, "self-attn-values")
        raise Wrong.differs(MESSAGES, "self-attn-out-differs")
    key = "self-attn-weights-differ" if probe_mask is None else "self-attn-weights-differ-masked"
    raise Wrong.differs(MESSAGES, key, shape=tuple(x.shape))


def _expect_same_when_square(cls: type, d_in: int, d_k: int, x: Tensor) -> None:
    """Built with d_v = d_in, out has x's shape: still softmax(Q K^T / sqrt(d_k)) V, not more."""
    torch.manual_seed(0)
    mine = cls(d_in, d_k, d_in).double()
    W_q, W_k = _matrix(mine, "W_q", d_in, d_k), _matrix(mine, "W_k", d_in, d_k)
    want, _ = attention(x @ W_q, x @ W_k, x @ _matrix(mine, "W_v", d_in, d_in))
    with torch.no_grad():
        result = mine(x.clone())
    out = result[0] if unpacks_to(result, 2) else result
    if isinstance(out, Tensor) and out.shape == want.shape and not close(out.double(), want):
        if close(out.double(), want + x):
            raise Wrong.named(MISTAKES, "self-attn-adds-input")
        raise Wrong.differs(MESSAGES, "self-attn-square-differs", d_in=d_in)


@check("self-attention", build="cls(d_in, d_k, d_v)", call="layer(x, mask)")
def check_self_attention(cls: type) -> Verdict:
    """``cls(d_in, d_k, d_v=None)`` with the matrices ``W_q``, ``W_k`` ``(d_in, d_k)`` and
    ``W_v`` ``(d_in, d_v)``, called as ``layer(x, mask=None) -> (out, weights)``: x ``(B, T,
    d_in)``; out ``softmax(Q K^T / sqrt(d_k)) V`` ``(B, T, d_v)``, weights ``(B, T, T)`` (rows =
    queries); mask boolean, True = may attend, broadcastable to ``(B, T, T)``."""
    d_in, d_k, d_v, B, T = 6, 8, 3, 2, 5  # no size equals another, d_k / 2 or sqrt(d_k)
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
        if not unpacks_to(result, 2):
            raise Wrong.differs(MESSAGES, "self-attn-not-a-pair")
        expect_pair_order(result, ("out", "weights"), ((B, T, d_v), (B, T, T)))
        out = result[0]
        if isinstance(out, Tensor) and tuple(out.shape) == (B, d_v, T):
            raise Wrong.named(MISTAKES, "self-attn-transposed-out", shape=tuple(out.shape),
                              B=B, T=T, d_v=d_v)  # fmt: skip
        sizes = {say(MESSAGES, "d-k"): d_k, say(MESSAGES, "d-in"): d_in}  # other widths
        out = expect_tensor(out, "out", (B, T, d_v), sizes).double()
        weights = expect_tensor(result[1], TENSOR_NAMES["weights"], (B, T, T)).double()
        if close(out, want) and close(weights, want_w):
            continue
        _diagnose(out, weights, x, (W_q, W_k, W_v), probe_mask)
    _expect_fresh_keys(mine, x, (W_q, W_k, W_v))
    _expect_gradients(mine, x, mask, (W_q, W_k, W_v))
    _expect_same_when_square(cls, d_in, d_k, x)
    try:  # built without d_v: V is d_k wide
        _matrix(cls(d_in, d_k), "W_v", d_in, d_k)
    except Wrong as wrong:
        raise Wrong.named(MISTAKES, "self-attn-dv-default", said=str(wrong), d_k=d_k) from None
    return ("Q, K, V from their own matrices, the sqrt(d_k) scale, the softmax over the keys "
            "and the mask (True = may attend) are right.")  # fmt: skip
