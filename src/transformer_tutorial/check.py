"""Check your own implementation of a building block against the book's reference.

Write the block yourself, then call its check with your function::

    from transformer_tutorial.check import check_attention
    check_attention(my_attention)

The check calls your code (it never reads or runs its text) on random inputs and on inputs
built to expose the usual mistakes, compares values and gradients with the reference the book
itself is tested against, and prints a short verdict. When something is wrong it names the
first problem in the book's terms, with the shapes and a small input that shows it.

Blocks covered so far, each with the signature the book uses:

* ``check_masked_softmax(fn)`` -- ``fn(scores, mask) -> weights`` (chapter 6);
* ``check_attention(fn)`` -- ``fn(q, k, v, mask=None) -> (out, weights)`` (chapter 6);
* ``check_causal_mask(fn)`` -- ``fn(T) -> (T, T)`` bool, True = may attend (chapter 12);
* ``check_sinusoidal_encoding(fn)`` -- ``fn(max_len, d_model) -> (max_len, d_model)`` (chapter 10);
* ``check_layer_norm(fn)`` -- ``fn(x) -> y``, normalising each position of ``(B, T, D)`` over
  its ``D`` features, no learned gain or bias (chapter 11);
* ``check_multihead(cls)`` -- ``cls(d_model, num_heads)`` with the linear layers ``q_proj``,
  ``k_proj``, ``v_proj``, ``out_proj``, called as ``m(query, key, value, mask=None)`` and
  returning ``out`` or ``(out, weights)`` (chapter 9);
* ``check_lstm_cell(cls)`` -- ``cls(input_size, hidden_size)`` with ``in_proj`` (input to the
  four gate blocks i, f, g, o, with the bias) and ``state_proj`` (no bias), called as
  ``cell(x, (h, c)) -> (h, c)`` (chapter 3);
* ``check_rnn_cell(cls)`` -- ``cls(input_size, hidden_size)`` with ``in_proj`` (with the bias)
  and ``state_proj`` (no bias), called as ``cell(x, s_prev) -> s`` (chapter 2);
* ``check_feed_forward(cls)`` -- ``cls(d_model, d_ff)`` with ``linear1`` (D -> d_ff) and
  ``linear2`` (d_ff -> D), called on ``(B, T, D)`` (chapter 11);
* ``check_additive_attention(cls)`` -- ``cls(query_dim, key_dim, hidden_dim)`` with ``W_q``,
  ``W_k`` (no bias) and ``w_v`` (hidden -> 1), called as ``m(queries, keys, values, mask=None)
  -> (out, weights)`` (chapter 6);
* ``check_label_smoothing(cls)`` -- ``cls(smoothing)``, called as ``loss(logits, target)`` with
  logits ``(B, T, V)`` and targets ``(B, T)`` padded with ``PAD_ID``: the mean over the real
  target tokens of the cross-entropy against ``(1 - ε)`` on the right token plus ``ε / V`` on
  every token, as ``nn.CrossEntropyLoss(label_smoothing=ε)`` computes it (chapter 14);
* ``check_encoder_layer(cls)`` -- ``cls(d_model, num_heads, d_ff, dropout=0.0,
  norm_first=False)`` with ``self_attn`` (a multi-head attention with ``q_proj``, ``k_proj``,
  ``v_proj``, ``out_proj``), ``feed_forward`` (``linear1``, ``linear2``), ``norm1`` and
  ``norm2``, called as ``layer(x, src_mask) -> (B, S, D)``, ``src_mask`` ``(B, 1, 1, S)``
  True = a real token; checked post-norm and pre-norm (chapter 13);
* ``check_decoder_layer(cls)`` -- the same arguments, with ``self_attn``, ``cross_attn``,
  ``feed_forward``, ``norm1``, ``norm2``, ``norm3``, called as ``layer(x, memory, tgt_mask,
  src_mask) -> (B, T, D)``, ``tgt_mask`` ``(B, 1, T, T)`` causal and target padding (chapter 13);
* ``check_greedy_decode(fn)`` -- ``fn(model, src, max_len, bos_id, eos_id) -> (B, T')``: the
  generated tokens of each sentence, without BOS, EOS kept, PAD after a sentence's end; the
  check passes a small random ``Transformer`` (chapter 15);
* ``check_beam_search(fn)`` -- ``fn(model, src, beam_size, max_len, bos_id=..., eos_id=...,
  length_penalty=0.6) -> (B, T')``, the best hypothesis of each sentence in the same form
  (chapter 15);
* ``check_kv_cache(cls)`` -- ``cls()`` an empty key/value cache of one decoder block, as the
  book's ``LayerCache``: ``cache.append_self(k, v)`` takes the keys and values of the new
  positions, ``(B, H, T_new, Dh)`` each, and returns those of every position so far,
  ``(B, H, T_past + T_new, Dh)`` each; ``cache.reorder(index)`` keeps the batch rows ``index``
  (a 1-D long tensor, rows may repeat: beam search continues one hypothesis in several rows).
  The check calls the two methods on their own, then puts one cache in each block of the
  book's decoder and compares every step's logits with recomputing the whole prefix
  (chapters 13 and 15).

Every check returns a ``Verdict`` (``ok``, ``block``, ``message``) as well as printing it.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from itertools import permutations

import torch
from torch import Tensor

from .attention import AdditiveAttention, attention, masked_softmax
from .decoding import beam_search, greedy_decode
from .feedforward import PositionwiseFeedForward
from .lstm import LSTMCell
from .masks import causal_mask
from .multihead import MultiHeadAttention
from .positional import sinusoidal_encoding
from .rnn import RNNCell
from .sequences import BOS_ID, PAD_ID
from .training import LabelSmoothingLoss
from .transformer import (
    DecoderLayer,
    EncoderLayer,
    KVCache,
    Transformer,
    TransformerConfig,
    residual,
)

POLARITY = "in this book a mask is True where a query *may attend*"


def wrap_verdict(text: str, width: int = 100) -> str:
    """Fold each line longer than ``width`` at spaces, so a verdict fits the book's text column."""
    lines = []
    for line in text.split("\n"):
        if len(line) <= width:
            lines.append(line)
        else:
            lines += textwrap.wrap(line, width, subsequent_indent="  ", break_long_words=False)
    return "\n".join(lines)


@dataclass
class Verdict:
    """The outcome of one check: ``ok``, the block's name, and what to say to the reader."""

    ok: bool
    block: str
    message: str

    def __str__(self) -> str:
        return wrap_verdict(f"{'✓' if self.ok else '✗'} {self.block}: {self.message}")

    def __bool__(self) -> bool:
        return self.ok


class Wrong(Exception):
    """Raised inside a check with the message for the reader."""


def _run(block: str, probes: Callable[[], str]) -> Verdict:
    try:
        verdict = Verdict(True, block, probes())
    except Wrong as wrong:
        verdict = Verdict(False, block, str(wrong))
    except NotImplementedError:  # the skeleton of a "Your turn" cell, not yet filled in
        verdict = Verdict(
            False,
            block,
            "not written yet -- replace `raise NotImplementedError` with your code and run the "
            "cell again.",
        )
    except Exception as err:  # the reader's code raised: say where, in their terms
        verdict = Verdict(False, block, f"your code raised {type(err).__name__}: {err}")
    print(verdict)
    return verdict


def _close(a: Tensor, b: Tensor, tol: float = 1e-5) -> bool:
    return a.shape == b.shape and bool(torch.allclose(a, b, atol=tol, rtol=tol, equal_nan=False))


def _tensor(result: object, what: str, shape: tuple) -> Tensor:
    if not isinstance(result, Tensor):
        raise Wrong(f"{what} should be a tensor of shape {shape}, got {type(result).__name__}.")
    if tuple(result.shape) != tuple(shape):
        raise Wrong(f"{what} has shape {tuple(result.shape)}, expected {tuple(shape)}.")
    return result


def _random(*shape: int, seed: int = 0) -> Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


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


# --- multi-head attention ---------------------------------------------------------------------


def _with_weights_of(mine: torch.nn.Module, reference: torch.nn.Module, names: tuple) -> None:
    """Copy the reader's weights into the reference, once each named layer is there, of the
    book's kind and size; a dotted name reaches into a submodule (``self_attn.q_proj``)."""
    for name in names:
        ours = reference.get_submodule(name)
        try:
            theirs = mine.get_submodule(name)
        except AttributeError:
            theirs = None
        kind = type(ours).__name__
        kind = "a linear layer" if kind == "Linear" else f"an nn.{kind}"
        if not isinstance(theirs, type(ours)):
            raise Wrong(f"the module needs {kind} `{name}`, as in the book.")
        sizes = [{k: tuple(t.shape) for k, t in m.state_dict().items()} for m in (theirs, ours)]
        if sizes[0] != sizes[1]:
            raise Wrong(f"`{name}` holds {sizes[0]}; the book's holds {sizes[1]}.")
    reference.load_state_dict(mine.state_dict(), strict=False)


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


# --- the LSTM cell --------------------------------------------------------------------------------


def check_lstm_cell(cls: type) -> Verdict:
    """``cls(input_size, hidden_size)``: ``z = in_proj(x) + state_proj(h)`` in four blocks
    i, f, g, o (PyTorch's order); ``c' = sigmoid(f) c + sigmoid(i) tanh(g)``,
    ``h' = sigmoid(o) tanh(c')``."""

    def probes() -> str:
        D, H, B = 3, 5, 4
        torch.manual_seed(0)
        mine = cls(D, H).double()
        reference = LSTMCell(D, H).double()
        _with_weights_of(mine, reference, ("in_proj", "state_proj"))
        x, h, c = _random(B, D), _random(B, H, seed=1), _random(B, H, seed=2)
        got = mine(x, (h, c))
        if not (isinstance(got, tuple) and len(got) == 2):
            raise Wrong("return the new state as a pair (h, c).")
        got_h, got_c = _tensor(got[0], "h", (B, H)), _tensor(got[1], "c", (B, H))
        want_h, want_c = reference(x, (h, c))
        if _close(got_h, want_h) and _close(got_c, want_c):
            x_, h_ = x.clone().requires_grad_(), h.clone().requires_grad_()
            sum(t.sum() for t in mine(x_, (h_, c))).backward()
            x2, h2 = x.clone().requires_grad_(), h.clone().requires_grad_()
            sum(t.sum() for t in reference(x2, (h2, c))).backward()
            if not (_close(x_.grad, x2.grad) and _close(h_.grad, h2.grad)):
                raise Wrong("the values are right but the gradients differ from the reference.")
            return "gates, memory update, output and gradients are right (PyTorch's gate order)."
        i, f, g, o = (mine.in_proj(x) + mine.state_proj(h)).chunk(4, dim=-1)
        sig = torch.sigmoid
        if _close(got_c, sig(i) * c + sig(f) * torch.tanh(g)):
            raise Wrong(
                "input and forget gates are swapped: the blocks are in the order i, f, g, o."
            )
        if _close(got_c, sig(f) * c + sig(i) * sig(g)):
            raise Wrong("the candidate g takes tanh, not sigmoid: it proposes values in (-1, 1).")
        if _close(got_c, c + sig(i) * torch.tanh(g)):
            raise Wrong("the old memory is kept whole: multiply c by the forget gate sigmoid(f).")
        if _close(got_c, want_c) and _close(got_h, sig(o) * want_c):
            raise Wrong("h = sigmoid(o) * tanh(c'): you left out the tanh of the new memory.")
        if _close(got_c, want_c):
            raise Wrong("c is right but h is not: h = sigmoid(o) * tanh(c').")
        raise Wrong(f"the new memory c differs from the reference (x {tuple(x.shape)}, "
                    f"h and c {tuple(h.shape)}).")  # fmt: skip

    return _run("LSTM cell", probes)


# --- the RNN cell and the position-wise feed-forward network ----------------------------------


def check_rnn_cell(cls: type) -> Verdict:
    """``cls(input_size, hidden_size)``: ``s = tanh(in_proj(x) + state_proj(s_prev))``."""

    def probes() -> str:
        D, H, B = 3, 5, 4
        torch.manual_seed(0)
        mine = cls(D, H).double()
        reference = RNNCell(D, H).double()
        _with_weights_of(mine, reference, ("in_proj", "state_proj"))
        x, s = _random(B, D), _random(B, H, seed=1)
        got = _tensor(mine(x, s), "the new state", (B, H))
        if _close(got, reference(x, s)):
            return "the state update s = tanh(in_proj(x) + state_proj(s_prev)) is right."
        z = mine.in_proj(x) + mine.state_proj(s)
        if _close(got, z):
            raise Wrong("you left out the tanh: without it the state grows without bound.")
        if _close(got, torch.tanh(mine.in_proj(x))):
            raise Wrong("the previous state is not used: add state_proj(s_prev) before the tanh.")
        if _close(got, torch.tanh(mine.state_proj(s))):
            raise Wrong("the input is not used: add in_proj(x) before the tanh.")
        raise Wrong(f"the new state differs from the reference (x {tuple(x.shape)}, "
                    f"s_prev {tuple(s.shape)}).")  # fmt: skip

    return _run("RNN cell", probes)


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


# --- encoder and decoder blocks ----------------------------------------------------------------

_NORM = {
    False: "post-norm LayerNorm(x + Sublayer(x)) (the paper)",
    True: "pre-norm x + Sublayer(LayerNorm(x))",
}
_NO_RESIDUAL = {False: "LayerNorm(Sublayer(x))", True: "Sublayer(LayerNorm(x))"}

# one sub-layer of a block: its name for the reader, the function, its LayerNorm
_Step = tuple[str, Callable[[Tensor], Tensor], torch.nn.Module]


def _layers_of_block(attention_names: tuple[str, ...], norms: int) -> tuple[str, ...]:
    """The dotted names of the linear layers and LayerNorms a block must have."""
    projections = ("q_proj", "k_proj", "v_proj", "out_proj")
    return (
        *(f"{a}.{p}" for a in attention_names for p in projections),
        "feed_forward.linear1",
        "feed_forward.linear2",
        *(f"norm{i}" for i in range(1, norms + 1)),
    )


def _jitter(module: torch.nn.Module, seed: int = 5) -> None:
    """Move every parameter a little: LayerNorms start all ones and zeros, which would hide
    one LayerNorm used in the place of another."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.add_(0.2 * torch.randn(p.shape, generator=g, dtype=p.dtype))


def _padding(length: int, real: tuple[int, ...]) -> Tensor:
    """A padding mask ``(B, 1, 1, length)``, B = len(real): sentence b has ``real[b]`` real
    tokens, then padding."""
    return (torch.arange(length) < torch.tensor(real)[:, None])[:, None, None, :]


def _through(x: Tensor, steps: list[_Step], norm_first: bool, add: bool = True) -> Tensor:
    """Run ``x`` through the sub-layers in order, with (``add``) or without the residual."""
    for _, sublayer, norm in steps:
        if add:
            x = residual(x, sublayer, norm, torch.nn.Identity(), norm_first)
        else:
            x = sublayer(norm(x)) if norm_first else norm(sublayer(x))
    return x


def _block_mistakes(steps: list[_Step], x: Tensor, norm_first: bool):
    """``(diagnosis, output)`` for each way of assembling the right sub-layers wrongly."""
    want, other = _NORM[norm_first], _NORM[not norm_first]
    no_residual = _NO_RESIDUAL[norm_first]
    words = f"the residual connection is missing: each sub-layer is {want}, but yours computes "
    yield (
        words + f"{no_residual} (the input x is not added back).",
        partial(_through, x, steps, norm_first, add=False),
    )
    words = f"the LayerNorm is in the wrong place: norm_first={norm_first} asks for {want}, "
    yield words + f"but yours computes {other}.", partial(_through, x, steps, not norm_first)
    book = ", then ".join(name for name, _, _ in steps)
    for order in list(permutations(range(len(steps))))[1:]:
        for norms_move in (True, False):  # each LayerNorm with its sub-layer, or left in place
            wrong = [(*steps[i][:2], steps[i if norms_move else j][2]) for j, i in enumerate(order)]
            yours = ", then ".join(name for name, _, _ in wrong)
            words = f"the sub-layers run in the wrong order: yours runs {yours}; the book's "
            yield words + f"block runs {book}.", partial(_through, x, wrong, norm_first)


def _moves(block, args: tuple, i: int, where: tuple, watch: tuple) -> float:
    """How far ``block(*args)[watch]`` moves when argument ``i`` changes at ``where``."""
    changed = list(args)
    changed[i] = args[i].clone()
    changed[i][where] += 1.0 + _random(*changed[i][where].shape, seed=7)
    with torch.no_grad():
        return float((block(*changed)[watch] - block(*args)[watch]).abs().max())


@dataclass
class _Dependence:
    """A property of a right block: changing argument ``i`` at ``where`` moves the output at
    ``watch`` (``should_move``) or leaves it exactly as it was; ``words`` tell the reader
    what it means when the property fails ("{:.2f}" gets the distance moved)."""

    words: str
    i: int
    where: tuple
    watch: tuple
    should_move: bool = False

    def broken_by(self, block, args: tuple) -> str | None:
        moved = _moves(block, args, self.i, self.where, self.watch)
        return None if (moved > 1e-9) == self.should_move else self.words.format(moved)


def _gradient_mismatch(mine, reference, args: tuple, names: tuple) -> str | None:
    """The first input or parameter whose gradient differs between the two blocks."""
    grads = []
    for block in (mine, reference):
        inputs = [a.clone().requires_grad_() if a.is_floating_point() else a for a in args]
        block.zero_grad()
        (block(*inputs) * _random(*args[0].shape, seed=3)).sum().backward()
        found = {n: a.grad for n, a in zip(names, inputs, strict=True) if a.is_floating_point()}
        grads.append(found | {n: p.grad for n, p in block.named_parameters()})
    for name, want in grads[1].items():
        got = grads[0].get(name)
        if want is not None and (got is None or not _close(got, want)):
            return name
    return None


@dataclass
class _Block:
    """What the checker knows about one kind of block."""

    reference: type  # the book's class
    arg_names: tuple[str, ...]  # the arguments of its forward, for the messages
    layers: tuple[str, ...]  # the linear layers and LayerNorms it must have
    steps: Callable[[torch.nn.Module, tuple], list[_Step]]  # its sub-layers, given the arguments
    dependences: list[_Dependence]  # what a right block's output depends on, and what not
    hint: str = ""  # said when the reader's code raises


def _block_diagnosis(block: _Block, got: Tensor, mine, reference, args, norm_first) -> str:
    """The likeliest mistake that turns the reference block's output into ``got``."""
    flipped = tuple(~a if a.dtype == torch.bool else a for a in args)
    expected = _through(args[0], block.steps(reference, flipped), norm_first)
    finite = torch.isfinite(got)  # a flipped mask can leave a query no key: NaN in naive code
    if finite.any() and _close(got[finite], expected[finite]):
        return f"mask polarity: you masked the keys that may be seen -- {POLARITY}."
    for words, variant in _block_mistakes(block.steps(reference, args), args[0], norm_first):
        if _close(got, variant()):
            return words
    for dependence in block.dependences:
        words = dependence.broken_by(mine, args)
        if words:
            return words
    worst = (got - reference(*args)).abs().amax(-1).nan_to_num(math.inf)  # (B, T)
    b, t = divmod(int(worst.argmax()), worst.shape[1])
    shapes = ", ".join(f"{n} {tuple(a.shape)}" for n, a in zip(block.arg_names, args, strict=True))
    return (
        f"the output differs from the book's block with norm_first={norm_first}, most at "
        f"sentence {b}, position {t} ({shapes})."
    )


def _check_block(cls: type, block: _Block, args: tuple) -> None:
    """Build the reader's block and the book's with the same weights, post-norm then pre-norm,
    and compare values and gradients; raise ``Wrong`` with a diagnosis at the first miss."""
    D, H, F = args[0].shape[-1], 4, 32
    for norm_first in (False, True):
        torch.manual_seed(0)
        mine = cls(D, H, F, dropout=0.0, norm_first=norm_first).double().eval()
        reference = block.reference(D, H, F, dropout=0.0, norm_first=norm_first).double().eval()
        _jitter(mine)
        _with_weights_of(mine, reference, block.layers)
        with torch.no_grad():
            try:
                result = mine(*args)
            except Exception as err:  # a shape mistake often shows as an error: say more
                raise Wrong(f"your code raised {type(err).__name__}: {err}{block.hint}") from err
            got = _tensor(result, "the output", args[0].shape)
            if not _close(got, reference(*args)):
                raise Wrong(_block_diagnosis(block, got, mine, reference, args, norm_first))
        name = _gradient_mismatch(mine, reference, args, block.arg_names)
        if name is not None:
            raise Wrong(f"the values are right but the gradient with respect to {name} differs "
                        f"from the reference (norm_first={norm_first}).")  # fmt: skip


def _attend(mha: torch.nn.Module, key: Tensor | None, mask: Tensor | None):
    """A sub-layer that attends from its input to ``key`` (``None``: to itself)."""
    return lambda h: mha(h, h if key is None else key, h if key is None else key, mask=mask)[0]


def _encoder_steps(m: torch.nn.Module, args: tuple) -> list[_Step]:
    _, src_mask = args
    return [
        ("self-attention", _attend(m.self_attn, None, src_mask), m.norm1),
        ("the feed-forward network", m.feed_forward, m.norm2),
    ]


def _decoder_steps(m: torch.nn.Module, args: tuple) -> list[_Step]:
    _, memory, tgt_mask, src_mask = args
    return [
        ("self-attention", _attend(m.self_attn, None, tgt_mask), m.norm1),
        ("cross-attention", _attend(m.cross_attn, memory, src_mask), m.norm2),
        ("the feed-forward network", m.feed_forward, m.norm3),
    ]


def check_encoder_layer(cls: type) -> Verdict:
    """``cls(d_model, num_heads, d_ff, dropout=0.0, norm_first=False)`` with ``self_attn``
    (``q_proj``, ``k_proj``, ``v_proj``, ``out_proj``), ``feed_forward`` (``linear1``,
    ``linear2``), ``norm1``, ``norm2``; ``layer(x, src_mask)``: self-attention, then the
    feed-forward network, each with its residual connection and LayerNorm."""

    def probes() -> str:
        B, S, D = 2, 5, 16
        real = (4, 3)  # sentence 1 ends in two padding positions, 3 and 4
        block = _Block(
            reference=EncoderLayer,
            arg_names=("x", "src_mask"),
            layers=_layers_of_block(("self_attn",), norms=2),
            steps=_encoder_steps,
            dependences=[
                _Dependence(
                    "the padding mask is not used: changing sentence 1 at its padding "
                    "positions 3..4 moves the outputs at its real positions 0..2 (by up to "
                    "{:.2f}). Pass src_mask (B, 1, 1, S), True = a real token, to "
                    "self-attention.",
                    i=0,
                    where=(1, slice(3, None)),
                    watch=(1, slice(0, 3)),
                ),
            ],
        )
        _check_block(cls, block, (_random(B, S, D), _padding(S, real)))
        return (
            "self-attention, feed-forward, residuals, post-norm and pre-norm, the padding "
            "mask and the gradients are right."
        )

    return _run("encoder layer", probes)


def check_decoder_layer(cls: type) -> Verdict:
    """``cls(d_model, num_heads, d_ff, dropout=0.0, norm_first=False)`` with ``self_attn``,
    ``cross_attn`` (each with ``q_proj``, ``k_proj``, ``v_proj``, ``out_proj``),
    ``feed_forward`` (``linear1``, ``linear2``), ``norm1``, ``norm2``, ``norm3``;
    ``layer(x, memory, tgt_mask, src_mask)``: masked self-attention, cross-attention to the
    memory, then the feed-forward network, each with its residual connection and LayerNorm."""

    def probes() -> str:
        B, T, S, D = 2, 4, 5, 16
        tgt_mask = _padding(T, (4, 3)) & causal_mask(T)  # (B, 1, T, T)
        block = _Block(
            reference=DecoderLayer,
            arg_names=("x", "memory", "tgt_mask", "src_mask"),
            layers=_layers_of_block(("self_attn", "cross_attn"), norms=3),
            steps=_decoder_steps,
            dependences=[
                _Dependence(
                    "the decoder sees the future: changing the target at positions 2..3 moves "
                    "the outputs at positions 0..1 (by up to {:.2f}). Pass tgt_mask (causal: "
                    "True on and below the diagonal) to self-attention.",
                    i=0,
                    where=(0, slice(2, None)),
                    watch=(0, slice(0, 2)),
                ),
                _Dependence(
                    "the output does not depend on memory: cross-attention takes its queries "
                    "from the decoder and its keys and values from memory, the encoder's "
                    "output (B, S, D).",
                    i=1,
                    where=(0,),
                    watch=(0,),
                    should_move=True,
                ),
                _Dependence(
                    "the source padding mask is not used: changing the memory at sentence 1's "
                    "padding positions 3..4 moves its outputs (by up to {:.2f}). Pass src_mask "
                    "(B, 1, 1, S) to cross-attention.",
                    i=1,
                    where=(1, slice(3, None)),
                    watch=(1,),
                ),
            ],
            hint=(
                f" -- here the target has T = {T} positions and the source S = {S}: "
                "cross-attention takes its queries from x (B, T, D) and its keys and values "
                "from memory (B, S, D), masked with src_mask (B, 1, 1, S)."
            ),
        )
        args = (_random(B, T, D), _random(B, S, D, seed=1), tgt_mask, _padding(S, (5, 3)))
        _check_block(cls, block, args)
        return (
            "masked self-attention, cross-attention to the memory, feed-forward, residuals, "
            "post-norm and pre-norm, both masks and the gradients are right."
        )

    return _run("decoder layer", probes)


# --- greedy search and beam search ------------------------------------------------------------


@dataclass
class _Case:
    """A small random translator and sources on which decoding shows the usual mistakes."""

    model: Transformer
    src: Tensor  # (B, S) source ids, four of the six sentences padded
    max_len: int  # tokens to generate at most
    eos: int  # a token the model produces: sentences end at different steps, two never

    @property
    def pad(self) -> int:
        return self.model.config.pad_id


def _decoding_case() -> _Case:
    """Made afresh for each check, so that nothing a reader's code does to it carries over."""
    torch.manual_seed(3)
    config = TransformerConfig(
        src_vocab_size=17,
        tgt_vocab_size=19,
        d_model=16,
        num_heads=4,
        num_encoder_layers=1,
        num_decoder_layers=1,
        d_ff=32,
        dropout=0.0,
        max_len=20,
        tie_output=False,
    )
    model = Transformer(config).eval()
    pad, max_len = config.pad_id, 10
    src = torch.randint(3, 17, (6, 7), generator=torch.Generator().manual_seed(1))  # (B, S)
    for b, real in ((1, 3), (3, 5), (4, 2), (5, 6)):
        src[b, real:] = pad
    with torch.no_grad():
        model.output.weight.mul_(4.0)  # wide margins between the best and the second token
        free = greedy_decode(model, src, max_len, BOS_ID, None)  # (B, max_len): no EOS yet
        eos = int(free[0, 3])  # sentence 0 ends by step 3, the others later or never
        ended = greedy_decode(model, src, max_len, BOS_ID, eos)  # (B, T')
        word = int(ended[(ended != pad) & (ended != eos)].mode().values)
        # PAD scores 1.5 times the commonest word: where that word wins, PAD would beat it if
        # it were allowed, which shows a search that forgets to exclude padding
        model.output.weight[pad] = 1.5 * model.output.weight[word]
    return _Case(model, src, max_len, eos)


def _sentences(result: object, rows: int, pad: int) -> list[list[int]]:
    """Token ids ``(rows, T')`` as one list per sentence, trailing padding dropped."""
    if not (isinstance(result, Tensor) and result.dim() == 2 and result.shape[0] == rows):
        got = tuple(result.shape) if isinstance(result, Tensor) else type(result).__name__
        raise Wrong(f"return token ids of shape (B, T') = ({rows}, T'), not {got}.")
    if result.is_floating_point():
        raise Wrong(f"return token ids as integers (torch.long), not {result.dtype}.")
    sentences = result.tolist()
    for tokens in sentences:
        while tokens and tokens[-1] == pad:
            tokens.pop()
    return sentences


def _common_mistake(got: list, want: list, case: _Case) -> str | None:
    """A mistake of greedy and beam search alike, seen in the sentences ``got``."""
    pad, eos, L = case.pad, case.eos, case.max_len
    if all(s[:1] == [BOS_ID] for s in got) and [s[1:] for s in got] == want:
        return (f"your output starts with BOS (id {BOS_ID}): return only the generated tokens, "
                "(B, T') without BOS.")  # fmt: skip
    for i, s in enumerate(got):
        if pad in s:
            return (f"sentence {i} has PAD (id {pad}) at step {s.index(pad)}, inside the "
                    "sentence: padding is not a word. Give it the score -inf before choosing "
                    "a token; PAD only fills a row after its EOS.")  # fmt: skip
    for i, s in enumerate(got):
        if eos in s[:-1]:
            t = s.index(eos)
            return (f"sentence {i} goes on after its EOS at step {t} (then {s[t + 1 : t + 4]}"
                    f"...): a sentence (a hypothesis) that has produced EOS (id {eos}) is "
                    "finished; only PAD may follow.")  # fmt: skip
    for i, (s, right) in enumerate(zip(got, want, strict=True)):
        if eos not in right + s and abs(len(s) - L) == 1 and s[: L - 1] == right[: L - 1]:
            return (f"off by one: sentence {i} never produces EOS, so it stops after "
                    f"max_len = {L} tokens; yours has {len(s)}.")  # fmt: skip
    return None


def _first_difference(got: list, want: list, what: str, case: _Case) -> str:
    for i, (s, right) in enumerate(zip(got, want, strict=True)):
        if s != right:
            pairs = enumerate(zip(s, right, strict=False))
            t = next((t for t, (a, b) in pairs if a != b), min(len(s), len(right)))
            return (f"sentence {i} differs from {what} from step {t} on: {right} expected, "
                    f"yours {s} (src {tuple(case.src.shape)}, max_len = {case.max_len}, "
                    f"EOS = {case.eos}).")  # fmt: skip
    return f"the output differs from {what}."


def check_greedy_decode(fn: Callable[..., Tensor]) -> Verdict:
    """``fn(model, src, max_len, bos_id, eos_id) -> (B, T')``: at each step the most probable
    token that is not PAD; a sentence ends with its EOS (kept) or after ``max_len`` tokens, and
    its row is padded with PAD after its end; BOS is not returned."""

    def probes() -> str:
        case = _decoding_case()
        model, src, L, eos, pad = case.model, case.src, case.max_len, case.eos, case.pad
        want = _sentences(greedy_decode(model, src, L, BOS_ID, eos), len(src), pad)
        got = _sentences(fn(model, src, L, BOS_ID, eos), len(src), pad)
        words = _common_mistake(got, want, case) if got != want else None
        if words:
            raise Wrong(words)
        for i, n in enumerate((src != pad).sum(dim=1).tolist()):
            alone = _sentences(fn(model, src[i : i + 1, :n], L, BOS_ID, eos), 1, pad)[0]
            if alone != got[i]:
                early = len(got[i]) < len(alone) and eos not in got[i]
                raise Wrong(
                    f"sentence {i} comes out differently in the batch ({got[i]}) than alone "
                    f"({alone}): each sentence must be decoded as if it were alone."
                    + (" Does your loop stop when the first sentence ends, instead of when "
                       "every sentence has?" if early else "")
                )  # fmt: skip
        if got != want:
            raise Wrong(_first_difference(got, want, "the book's greedy search", case))
        return "tokens, the stop at EOS, max_len, padding, and each sentence alone are right."

    return _run("greedy decoding", probes)


def _beam_mistake(got: list, want: list, K: int, case: _Case, greedy: list, no_penalty) -> str:
    """The likeliest mistake of a beam search with ``K`` beams that gave ``got``."""
    words = _common_mistake(got, want, case)
    if words:
        return words
    if K > 1 and got == greedy:
        return (f"with beam_size = {K} your output is exactly greedy search's: the beams are "
                f"{K} copies of one hypothesis. At the first step there is only BOS: let one "
                f"hypothesis grow from it (the other {K - 1} start at log-probability -inf), "
                f"so that the first step keeps {K} different tokens.")  # fmt: skip
    if K > 1 and got == no_penalty():
        return ("the length penalty is not applied: your output is what ranking by log P alone "
                "gives (length_penalty = 0). Rank each hypothesis by log P(Y) / lp(Y), lp(Y) = "
                "((5 + |Y|) / 6) ** length_penalty, |Y| its length with EOS.")  # fmt: skip
    ended = [i for i, right in enumerate(want) if case.eos in right]
    if ended and not any(case.eos in s for s in got):
        i = ended[0]
        return (f"no sentence of yours ends with EOS, but the best hypothesis of sentence {i} "
                f"is {want[i]} (yours {got[i]}): a finished hypothesis must stay in the beam "
                "and compete by its score, not be dropped (or EOS be forbidden).")  # fmt: skip
    if K == 1:
        return "with beam_size = 1 beam search is greedy search, but " + _first_difference(
            got, want, "greedy search", case
        )
    return _first_difference(got, want, f"the book's beam search with beam_size = {K}", case)


def check_beam_search(fn: Callable[..., Tensor]) -> Verdict:
    """``fn(model, src, beam_size, max_len, bos_id=..., eos_id=..., length_penalty=0.6) ->
    (B, T')``: the ``beam_size`` best hypotheses of each sentence, ranked by
    ``log P(Y) / ((5 + |Y|) / 6) ** length_penalty``; a hypothesis that has produced EOS is
    finished and keeps competing; the best one, without BOS, padded after its EOS."""

    def probes() -> str:
        case = _decoding_case()
        model, src, L, eos, B = case.model, case.src, case.max_len, case.eos, len(case.src)
        K, alpha = 3, 0.6

        def ours(K: int, alpha: float) -> list:
            out = beam_search(model, src, K, L, bos_id=BOS_ID, eos_id=eos, length_penalty=alpha)
            return _sentences(out, B, case.pad)

        greedy = _sentences(greedy_decode(model, src, L, BOS_ID, eos), B, case.pad)
        for k, want in ((1, greedy), (K, ours(K, alpha))):
            out = fn(model, src, k, L, bos_id=BOS_ID, eos_id=eos, length_penalty=alpha)
            got = _sentences(out, B, case.pad)
            if got != want:
                raise Wrong(_beam_mistake(got, want, k, case, greedy, partial(ours, K, 0.0)))
        return (
            f"beam_size = 1 is greedy search; beam_size = {K} with the length penalty, "
            "finished hypotheses and padding is right."
        )

    return _run("beam search", probes)


# --- the key/value cache ------------------------------------------------------------------------

_AXES = {0: "batch", 1: "heads", 2: "positions", 3: "feature"}


def _history_mistake(name: str, got: object, parts: list[Tensor]) -> str:
    """Why ``got`` is not ``parts`` joined along the positions axis (dim 2)."""
    want = torch.cat(parts, dim=2)
    shapes = " then ".join(str(tuple(p.shape)) for p in parts)
    if not isinstance(got, Tensor):
        return f"append_self should return tensors, got {type(got).__name__} for the {name}."
    if len(parts) > 1 and _close(got, parts[-1]):
        return (f"append_self returns only the new {name}, not the history: after appending "
                f"{shapes} it must return all of them, {tuple(want.shape)} -- attention at "
                "step t reads the keys and values of every position 0..t.")  # fmt: skip
    for d in (0, 1, 3):
        if _close(got, torch.cat(parts, dim=d)):
            return (f"the {name} are appended along the {_AXES[d]} axis (dim {d}): after "
                    f"appending {shapes} yours are {tuple(got.shape)}; new positions go on "
                    f"dim 2 of (B, H, T, Dh), giving {tuple(want.shape)}.")  # fmt: skip
    return (f"after appending {shapes} the {name} returned should be all of them in order "
            f"along dim 2, {tuple(want.shape)}; yours differ.")  # fmt: skip


_NAMES = ("keys", "values")


def _append(cache, new: tuple, pieces: tuple, explain=_history_mistake) -> None:
    """Call the reader's ``append_self(k, v)``: each of its two results must be the pieces so
    far and the new one joined along the positions; otherwise ``explain`` says why not."""
    result = cache.append_self(*new)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise Wrong("append_self should return a pair (all keys, all values) so far.")
    for name, got, parts, latest in zip(_NAMES, result, pieces, new, strict=True):
        parts.append(latest)
        if not (isinstance(got, Tensor) and _close(got, torch.cat(parts, dim=2))):
            raise Wrong(explain(name, got, parts))


def _reorder_mistake(name: str, got: object, parts: list, before: dict, index: Tensor) -> str:
    """Why the {name} returned by the first ``append_self`` after ``reorder(index)`` are
    ``got``; ``before[name]`` are all of them before the reorder, ``parts[-1]`` the new ones."""
    order, old, new = index.tolist(), before[name], parts[-1]
    if not isinstance(got, Tensor):
        return f"append_self should return tensors, got {type(got).__name__} for the {name}."
    if _close(got, torch.cat([old, new], dim=2)):
        return (f"reorder({order}) left the cached {name} as they were: row 0 must now hold "
                f"what row {order[0]} held. In beam search a hypothesis that continues another "
                "one would attend to the wrong history, and its next step would differ from "
                "recomputing its prefix.")  # fmt: skip
    for d in (1, 2):
        if _close(got, torch.cat([old.index_select(d, index), new], dim=2)):
            return (f"reorder picks the {name} along the {_AXES[d]} axis (dim {d}), but it "
                    f"must keep batch rows, dim 0 of (B, H, T, Dh): after reorder({order}) row "
                    f"0 holds what row {order[0]} held.")  # fmt: skip
    return f"after reorder({order}) and one more append_self the {name} are not the right rows."


class _InDecoder:
    """The reader's cache as one decoder block's ``LayerCache``; the projected memory of
    cross-attention, which the reader does not write, is kept here."""

    def __init__(self, theirs) -> None:
        self.theirs = theirs
        self.cross_k: Tensor | None = None
        self.cross_v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        return self.theirs.append_self(k, v)

    def reorder(self, index: Tensor, cross: bool = True) -> None:
        self.theirs.reorder(index)
        if cross and self.cross_k is not None:
            self.cross_k = self.cross_k.index_select(0, index)
            self.cross_v = self.cross_v.index_select(0, index)


def _decoder_mistake(cls: type) -> str | None:
    """Decode with the reader's cache in the book's decoder, one token a step, then reorder
    the rows; compare every step's logits with recomputing the whole prefix."""
    case = _decoding_case()
    model, src = case.model, case.src
    B, V = src.shape[0], model.config.tgt_vocab_size
    g = torch.Generator().manual_seed(4)
    tokens = torch.randint(3, V, (B, 8), generator=g)  # (B, T): what the decoder is fed
    tokens[:, 0] = BOS_ID
    index, when = torch.arange(B).flip(0) // 2 * 2, 4  # (B,): rows repeat, as in beam search
    with torch.no_grad():
        memory = model.encode(src)  # (B, S, D)
        cache = KVCache(layers=[_InDecoder(cls()) for _ in model.decoder.layers])
        for t in range(tokens.shape[1]):
            if t == when:  # reorder, as beam search does: rows take another row's history
                cache.reorder(index)
                tokens, memory, src = tokens[index], memory[index], src[index]
            step = model.decode(tokens[:, t : t + 1], memory, src, cache)[:, -1]  # (B, V)
            again = model.decode(tokens[:, : t + 1], memory, src)[:, -1]  # (B, V)
            if not _close(step, again, 1e-4):
                moved = f", after cache.reorder({index.tolist()}) at step {when}" * (t >= when)
                return (f"in the book's decoder with your cache, the logits of step {t} (the "
                        f"token at position {t}) differ from recomputing the whole prefix by up "
                        f"to {float((step - again).abs().max()):.3g}{moved}: the cache must keep "
                        "the keys and values of every position for the whole output.")  # fmt: skip
    return None


def check_kv_cache(cls: type) -> Verdict:
    """``cls()``: an empty cache of one decoder block's self-attention keys and values.
    ``cache.append_self(k, v)`` takes the new positions' keys and values ``(B, H, T_new, Dh)``
    and returns all of them so far, ``(B, H, T_past + T_new, Dh)`` each; ``cache.reorder(index)``
    keeps batch rows ``index`` (a 1-D long tensor, rows may repeat), as beam search needs."""

    def probes() -> str:
        B, H, Dh = 3, 3, 4  # B = H: a reorder along the wrong axis still runs

        def new(T_new: int, seed: int) -> tuple[Tensor, Tensor]:
            """New keys and values ``(B, H, T_new, Dh)`` each, float32 as in the model."""
            k, v = _random(2, B, H, T_new, Dh, seed=seed).float()
            return k, v

        cache, pieces = cls(), ([], [])
        for step, T_new in enumerate((1, 1, 2)):  # 4 positions: (B, H, 4, Dh)
            _append(cache, new(T_new, step), pieces)
        index = torch.tensor([2, 0, 0])  # beam 2 goes on in row 0, beam 0 in rows 1 and 2
        cache.reorder(index)
        before = {name: torch.cat(parts, dim=2) for name, parts in zip(_NAMES, pieces, strict=True)}
        pieces = tuple([old.index_select(0, index)] for old in before.values())
        _append(cache, new(1, 30), pieces, partial(_reorder_mistake, before=before, index=index))
        words = _decoder_mistake(cls)
        if words:
            raise Wrong(words)
        return (
            "append_self keeps every position's keys and values, reorder follows the batch "
            "rows, and the book's decoder with your cache gives the logits of recomputing."
        )

    return _run("key/value cache", probes)
