"""Recurrent checks: the RNN cell and the LSTM cell (chapters 2 and 3)."""

from __future__ import annotations

from itertools import permutations

import torch

from ..lstm import LSTMCell
from ..rnn import RNNCell
from .engine import check
from .tensors import backward, close, expect_tensor, randn, tolerance, with_weights_of
from .verdict import Verdict, Wrong

MISTAKES = {
    "rnn-no-tanh": "you left out the tanh: without it the state grows without bound.",
    "rnn-no-state": "the previous state is not used: add state_proj(s_prev) before the tanh.",
    "rnn-no-input": "the input is not used: add in_proj(x) before the tanh.",
    "rnn-sigmoid": "the RNN cell squashes with tanh, not sigmoid: a sigmoid state is always "
    "positive.",
    "rnn-relu": "the RNN cell squashes with tanh, not ReLU: a ReLU state can grow without bound.",
    "rnn-tanh-on-input-only": "the tanh covers only in_proj(x): s = tanh(in_proj(x) + "
    "state_proj(s_prev)).",
    "rnn-no-state-proj": "s_prev is added as it is: it goes through state_proj first, s = "
    "tanh(in_proj(x) + state_proj(s_prev)).",
    "rnn-state-weight-untransposed": "you multiply s_prev by state_proj.weight as it is stored, "
    "(out, in); a linear layer computes s_prev @ W^T: call state_proj(s_prev), or use "
    "state_proj.weight.T.",
    "rnn-state-squashed-twice": "s_prev goes through a tanh again before state_proj: it is "
    "already the previous output of a tanh; s = tanh(in_proj(x) + state_proj(s_prev)).",
    "rnn-terms-averaged": "you halve (average) in_proj(x) + state_proj(s_prev) before the tanh: "
    "the two terms are added, s = tanh(in_proj(x) + state_proj(s_prev)).",
    "lstm-in-place": "your cell changed the state (h, c) it was given, in place (mul_, add_, "
    "+=): the caller's tensors are overwritten, and autograd needs the old memory for the "
    "backward pass. Compute new tensors: c' = sigmoid(f) * c + sigmoid(i) * tanh(g).",
}

MESSAGES = {
    "rnn-differs": "the new state differs from the reference (x {x}, s_prev {s}).",
}

# --- the LSTM cell --------------------------------------------------------------------------------

_GATES = "ifgo"


def _lstm_step(i, f, g, o, c, sig=torch.sigmoid, tanh=torch.tanh):
    new_c = sig(f) * c + sig(i) * tanh(g)
    return sig(o) * tanh(new_c), new_c


def _lstm_mistakes(blocks, c, want_c):
    """``(words, (h, c))`` for each typical mistake of an LSTM cell, given the four blocks of
    ``z`` in the book's order and the old memory ``c``."""
    i, f, g, o = blocks
    sig, tanh = torch.sigmoid, torch.tanh
    for order in permutations(range(4)):  # the reader takes block j to be gate _GATES[...]
        if order == (0, 1, 2, 3):
            continue
        step = _lstm_step(*(blocks[order[n]] for n in range(4)), c)
        read = ", ".join(_GATES[order.index(j)] for j in range(4))
        if order == (1, 0, 2, 3):
            words = "input and forget gates are swapped: the blocks are in the order i, f, g, o."
        else:
            words = (f"you read the four blocks of z as {read}; PyTorch's order (and the "
                     "book's) is i, f, g, o: input, forget, candidate, output.")  # fmt: skip
        yield words, step
    yield (
        "the candidate g takes tanh, not sigmoid: it proposes values in (-1, 1).",
        _lstm_step(i, f, g, o, c, tanh=lambda t: sig(t) if t is g else tanh(t)),
    )
    new_c = sig(f) * c + sig(i) * g
    yield ("the candidate g has no tanh: c' = sigmoid(f) c + sigmoid(i) tanh(g).",
           (sig(o) * tanh(new_c), new_c))  # fmt: skip
    new_c = c + sig(i) * tanh(g)
    yield ("the old memory is kept whole: multiply c by the forget gate sigmoid(f).",
           (sig(o) * tanh(new_c), new_c))  # fmt: skip
    new_c = (1 - sig(f)) * c + sig(i) * tanh(g)
    yield ("you multiply c by 1 - sigmoid(f): the forget gate keeps the memory where it is 1, "
           "so c' = sigmoid(f) c + sigmoid(i) tanh(g).", (sig(o) * tanh(new_c), new_c))  # fmt: skip
    yield ("h = sigmoid(o) * tanh(c'): you left out the tanh of the new memory.",
           (sig(o) * want_c, want_c))  # fmt: skip
    yield ("h is computed from the old memory c: h = sigmoid(o) * tanh(c') uses the new one.",
           (sig(o) * tanh(c), want_c))  # fmt: skip
    yield ("the output gate is missing: h = sigmoid(o) * tanh(c'), not tanh(c').",
           (tanh(want_c), want_c))  # fmt: skip
    yield ("the output gate takes sigmoid, not tanh: h = sigmoid(o) * tanh(c').",
           (tanh(o) * tanh(want_c), want_c))  # fmt: skip
    yield ("the input gate is 1 - sigmoid(f), coupled to the forget gate as in a GRU; the LSTM "
           "has its own input gate: c' = sigmoid(f) c + sigmoid(i) tanh(g).",
           _lstm_step(i, f, g, o, c, sig=lambda t: 1 - sig(f) if t is i else sig(t)))  # fmt: skip
    yield ("the candidate g takes ReLU; it takes tanh, proposing values in (-1, 1).",
           _lstm_step(i, f, g, o, c, tanh=lambda t: torch.relu(t) if t is g else tanh(t)))  # fmt: skip
    z = torch.cat(blocks, dim=-1)  # (B, 4H)
    yield ("the four gates are read as interleaved columns (z viewed as (B, H, 4)); they are "
           "four consecutive blocks of H columns: i, f, g, o = z.chunk(4, dim=-1).",
           _lstm_step(*z.view(*z.shape[:-1], -1, 4).unbind(-1), c))  # fmt: skip


@check("LSTM cell", build="cls(input_size, hidden_size)", call="cell(x, (h, c))")
def check_lstm_cell(cls: type) -> Verdict:
    """``cls(input_size, hidden_size)``: ``z = in_proj(x) + state_proj(h)`` in four blocks
    i, f, g, o (PyTorch's order); ``c' = sigmoid(f) c + sigmoid(i) tanh(g)``,
    ``h' = sigmoid(o) tanh(c')``; called as ``cell(x, (h, c))``, it returns ``(h', c')``;
    values and gradients."""
    D, H, B = 3, 5, 4
    torch.manual_seed(0)
    mine = cls(D, H)
    with_weights_of(mine, LSTMCell(D, H), ("in_proj", "state_proj"))
    mine = mine.double()
    reference = LSTMCell(D, H).double()
    with_weights_of(mine, reference, ("in_proj", "state_proj"))
    x, h, c = randn(B, D), randn(B, H, seed=1), randn(B, H, seed=2)
    given = (h.clone(), c.clone())
    got = mine(x, given)
    if not (torch.equal(given[0], h) and torch.equal(given[1], c)):
        raise Wrong.named(MISTAKES, "lstm-in-place")
    if isinstance(got, torch.Tensor):
        raise Wrong("return the new state as a pair (h, c), not h alone: the next step "
                    "needs the memory c too.")  # fmt: skip
    if not (isinstance(got, tuple) and len(got) == 2):
        raise Wrong("return the new state as a pair (h, c).")
    got_h, got_c = expect_tensor(got[0], "h", (B, H)), expect_tensor(got[1], "c", (B, H))
    want_h, want_c = reference(x, (h, c))
    if close(got_h, want_h) and close(got_c, want_c):
        x_, h_ = x.clone().requires_grad_(), h.clone().requires_grad_()
        mine_h, mine_c = mine(x_, (h_, c))
        backward(mine_h.sum() + mine_c.sum(), "h and c")
        x2, h2 = x.clone().requires_grad_(), h.clone().requires_grad_()
        sum(t.sum() for t in reference(x2, (h2, c))).backward()
        tol = tolerance(mine_h)
        for name, grad in (("x", x_.grad), ("h", h_.grad)):
            if grad is None:
                raise Wrong(f"no gradient reaches {name}: did you detach() something?")
        if not (close(x_.grad, x2.grad, tol) and close(h_.grad, h2.grad, tol)):
            raise Wrong("the values are right but the gradients differ from the reference.")
        return "gates, memory update, output and gradients are right (PyTorch's gate order)."
    if close(got_h, want_c) and close(got_c, want_h):
        raise Wrong("you return (c, h): the cell returns its new state as (h, c), h first.")
    if close(got_c, c):
        raise Wrong("you return the old memory c: return the new one, c' = sigmoid(f) c + "
                    "sigmoid(i) tanh(g).")  # fmt: skip
    blocks = (mine.in_proj(x) + mine.state_proj(h)).chunk(4, dim=-1)
    for words, (h_, c_) in _lstm_mistakes(blocks, c, want_c):
        if close(got_c, c_) and close(got_h, h_):
            raise Wrong(words)
    only_x = _lstm_step(*mine.in_proj(x).chunk(4, dim=-1), c)
    if close(got_h, only_x[0]) and close(got_c, only_x[1]):
        raise Wrong("the previous h is not used: z = in_proj(x) + state_proj(h).")
    if close(got_c, want_c):
        raise Wrong("c is right but h is not: h = sigmoid(o) * tanh(c').")
    raise Wrong(f"the new memory c differs from the reference (x {tuple(x.shape)}, "
                f"h and c {tuple(h.shape)}).")  # fmt: skip


# --- the RNN cell ---------------------------------------------------------------------------------


@check("RNN cell", build="cls(input_size, hidden_size)", call="cell(x, s_prev)")
def check_rnn_cell(cls: type) -> Verdict:
    """``cls(input_size, hidden_size)``: ``s = tanh(in_proj(x) + state_proj(s_prev))``, called as
    ``cell(x, s_prev)``; it returns the new state, a tensor."""
    D, H, B = 3, 5, 4
    torch.manual_seed(0)
    mine = cls(D, H)
    with_weights_of(mine, RNNCell(D, H), ("in_proj", "state_proj"))
    mine = mine.double()
    reference = RNNCell(D, H).double()
    with_weights_of(mine, reference, ("in_proj", "state_proj"))
    x, s = randn(B, D), randn(B, H, seed=1)
    got = mine(x, s)
    if isinstance(got, tuple):
        raise Wrong("return the new state s alone, a tensor (B, hidden_size), not a tuple: "
                    "the RNN cell's output is its state.")  # fmt: skip
    got = expect_tensor(got, "the new state", (B, H))
    if close(got, reference(x, s)):
        return "the state update s = tanh(in_proj(x) + state_proj(s_prev)) is right."
    found = [key for key, wrong in _rnn_mistakes(mine, x, s).items() if close(got, wrong)]
    if len(found) == 1:
        raise Wrong.named(MISTAKES, found[0])
    raise Wrong.differs(MESSAGES, "rnn-differs", x=tuple(x.shape), s=tuple(s.shape))


def _rnn_mistakes(mine: torch.nn.Module, x: torch.Tensor, s: torch.Tensor) -> dict:
    """What each RNN-cell mistake of ``MISTAKES`` makes of ``x`` and ``s_prev``, with the
    reader's own layers."""
    a, b = mine.in_proj(x), mine.state_proj(s)
    tanh = torch.tanh
    return {
        "rnn-no-tanh": a + b,
        "rnn-no-state": tanh(a),
        "rnn-no-input": tanh(b),
        "rnn-sigmoid": torch.sigmoid(a + b),
        "rnn-relu": torch.relu(a + b),
        "rnn-tanh-on-input-only": tanh(a) + b,
        "rnn-no-state-proj": tanh(a + s),
        "rnn-state-weight-untransposed": tanh(a + s @ mine.state_proj.weight),
        "rnn-state-squashed-twice": tanh(a + mine.state_proj(tanh(s))),
        "rnn-terms-averaged": tanh((a + b) / 2),
    }
