"""Recurrent checks: the RNN cell and the LSTM cell (chapters 2 and 3)."""

from __future__ import annotations

from itertools import permutations

import torch

from ..lstm import LSTMCell
from ..rnn import RNNCell
from .diagnoses import GRADIENTS
from .engine import check
from .tensors import NAMES as TENSOR_NAMES
from .tensors import (
    backward,
    build,
    close,
    expect_dtype_kept,
    expect_tensor,
    randn,
    tolerance,
    unpacks_to,
    with_weights_of,
)
from .verdict import Verdict, Wrong

MISTAKES = {
    "rnn-no-tanh": "you left out the tanh: without it the state grows without bound.",
    "rnn-no-state": "the previous state is not used: add state_proj(s_prev) before the tanh.",
    "rnn-no-input": "the input is not used: add in_proj(x) before the tanh.",
    "rnn-input-bias-only": "x does not enter the step, only in_proj's bias: in_proj(x) = x "
    "W^T + b adds the input's own term, s = tanh(in_proj(x) + state_proj(s_prev)).",
    "rnn-no-bias": "in_proj's bias b is left out (x @ in_proj.weight.T without + "
    "in_proj.bias): s = tanh(x W^T + b + state_proj(s_prev)); call the layer, in_proj(x), and it "
    "adds b.",
    "rnn-input-squashed": "x goes through a tanh before in_proj: in_proj takes x as it is, s = "
    "tanh(in_proj(x) + state_proj(s_prev)), one tanh around the sum.",
    "rnn-sigmoid": "the RNN cell squashes with tanh, not sigmoid: a sigmoid state is always "
    "positive.",
    "rnn-relu": "the RNN cell squashes with tanh, not ReLU: a ReLU state can grow without bound.",
    "rnn-tanh-on-input-only": "the tanh covers only in_proj(x): s = tanh(in_proj(x) + "
    "state_proj(s_prev)).",
    "rnn-tanh-on-state-only": "the tanh covers only state_proj(s_prev): s = tanh(in_proj(x) + "
    "state_proj(s_prev)), the sum of both terms squashed.",
    "rnn-no-state-proj": "s_prev is added as it is: it goes through state_proj first, s = "
    "tanh(in_proj(x) + state_proj(s_prev)).",
    "rnn-state-weight-untransposed": "you multiply s_prev by state_proj.weight as it is stored, "
    "(out, in); a linear layer computes s_prev @ W^T: call state_proj(s_prev), or use "
    "state_proj.weight.T.",
    "rnn-terms-multiplied": "you multiply the two terms, tanh(in_proj(x) * state_proj(s_prev)): "
    "the input's and the state's contributions add up, s = tanh(in_proj(x) + "
    "state_proj(s_prev)).",
    "rnn-tanh-moved-to-state": "the tanh squashes s_prev before state_proj, and nothing squashes "
    "the sum: s = tanh(in_proj(x) + state_proj(s_prev)), one tanh around the whole sum.",
    "rnn-state-squashed-twice": "s_prev goes through a tanh again before state_proj: it is "
    "already the previous output of a tanh; s = tanh(in_proj(x) + state_proj(s_prev)).",
    "rnn-tanh-each-term": "you squash each term by itself, tanh(in_proj(x)) + "
    "tanh(state_proj(s_prev)): the tanh covers their sum, s = tanh(in_proj(x) + "
    "state_proj(s_prev)), so that the state stays in (-1, 1).",
    "rnn-terms-averaged": "you halve (average) in_proj(x) + state_proj(s_prev) before the tanh: "
    "the two terms are added, s = tanh(in_proj(x) + state_proj(s_prev)).",
    "rnn-tanh-each-then-sum": "you squash each term and then their sum again, "
    "tanh(tanh(in_proj(x)) + tanh(state_proj(s_prev))): one tanh goes around the sum, s = "
    "tanh(in_proj(x) + state_proj(s_prev)).",
    "rnn-keeps-state": "your cell's first call is right, but a second call with another s_prev "
    "gives the state computed from the first call's result: the cell keeps its state between "
    "calls (self.state) and ignores the s_prev it is given. A cell keeps nothing: the state "
    "comes in as s_prev and goes out as the return value, and the loop carries it.",
    "rnn-returns-pair": "return the new state s alone, a tensor (B, hidden_size), not a tuple: "
    "the RNN cell's output is its state.",
    "lstm-in-place": "your cell changed the state (h, c) it was given, in place (mul_, add_, "
    "+=): the caller's tensors are overwritten, and autograd needs the old memory for the "
    "backward pass. Compute new tensors: c' = sigmoid(f) * c + sigmoid(i) * tanh(g).",
}

_ORDER = (
    "your cell computes what reading the four blocks of z as {read} gives (the chunks taken in "
    "that order, or the gates in each other's place in the formulas); PyTorch's order (and the "
    "book's) is i, f, g, o: input, forget, candidate, output."
)
MISTAKES |= {
    "lstm-gates-i-f-swapped": "input and forget gates are swapped: the blocks are in the order i, "
    "f, g, o, and c' = sigmoid(f) c + sigmoid(i) tanh(g); look for the chunks taken in another "
    "order, or i and f in each other's place in that formula.",
    "lstm-gate-order-ifog": _ORDER,
    "lstm-gate-order-fiog": _ORDER,
    "lstm-gate-order-gifo": _ORDER,
    "lstm-sigmoid-candidate": "the candidate g takes tanh, not sigmoid: it proposes values in "
    "(-1, 1).",
    "lstm-candidate-no-tanh": "the candidate g has no tanh: c' = sigmoid(f) c + sigmoid(i) "
    "tanh(g).",
    "lstm-forget-on-h": "the forget gate multiplies h, the previous output, where it "
    "multiplies the memory c: c' = sigmoid(f) * c + sigmoid(i) * tanh(g).",
    "lstm-no-forget": "the old memory is kept whole: multiply c by the forget gate sigmoid(f).",
    "lstm-one-minus-forget": "you multiply c by 1 - sigmoid(f): the forget gate keeps the memory "
    "where it is 1, so c' = sigmoid(f) c + sigmoid(i) tanh(g).",
    "lstm-no-tanh-on-c": "h = sigmoid(o) * tanh(c'): you left out the tanh of the new memory.",
    "lstm-h-from-old-c": "h is computed from the old memory c: h = sigmoid(o) * tanh(c') uses "
    "the new one.",
    "lstm-no-output-gate": "the output gate is missing: h = sigmoid(o) * tanh(c'), not tanh(c').",
    "lstm-output-gate-raw": "the output gate o is used without its sigmoid: h = sigmoid(o) * "
    "tanh(c'), so that the gate lies between 0 and 1.",
    "lstm-tanh-forget": "the forget gate takes tanh, not sigmoid: a gate lies between 0 and 1, "
    "c' = sigmoid(f) * c + sigmoid(i) * tanh(g).",
    "lstm-output-gate-tanh": "the output gate takes sigmoid, not tanh: h = sigmoid(o) * tanh(c').",
    "lstm-coupled-input-gate": "the input gate is 1 - sigmoid(f), coupled to the forget gate as "
    "in a GRU; the LSTM has its own input gate: c' = sigmoid(f) c + sigmoid(i) tanh(g).",
    "lstm-coupled-forget-gate": "the forget gate is 1 - sigmoid(i), coupled to the input gate "
    "(what is written is what is erased); the LSTM's forget gate is its own, sigmoid(f), from "
    "its own block of z.",
    "lstm-stores-tanh-c": "h is right, but the memory you return is tanh(c'): store c' itself, "
    "c' = sigmoid(f) c + sigmoid(i) tanh(g); the tanh belongs only in h = sigmoid(o) tanh(c').",
    "lstm-candidate-from-x": "the candidate g comes from in_proj(x) alone: like the three gates, "
    "it is a block of z = in_proj(x) + state_proj(h).",
    "lstm-output-gate-on-c": "the output gate multiplies the memory itself, c' = sigmoid(o) * "
    "c', and h = tanh of that: the memory is c' = sigmoid(f) c + sigmoid(i) tanh(g), ungated, "
    "and the gate multiplies its tanh, h = sigmoid(o) * tanh(c').",
    "lstm-relu-candidate": "the candidate g takes ReLU; it takes tanh, proposing values in "
    "(-1, 1).",
    "lstm-returns-h-only": "return the new state as a pair (h, c), not h alone: the next step "
    "needs the memory c too.",
    "lstm-returns-c-h": "you return (c, h): the cell returns its new state as (h, c), h first.",
    "lstm-returns-old-c": "you return the old memory c: return the new one, c' = sigmoid(f) c + "
    "sigmoid(i) tanh(g).",
    "lstm-no-state-proj": "the previous h is not used: z = in_proj(x) + state_proj(h).",
    "lstm-tanh-outside-gate": "h = tanh(sigmoid(o) * c'): the output gate goes outside the tanh, "
    "h = sigmoid(o) * tanh(c').",
    "lstm-state-order-c-h": "you take the state as (c, h) and return (c', h'): the cell is "
    "called as cell(x, (h, c)) and returns (h', c'), the hidden state first both ways, as "
    "nn.LSTMCell does.",
    "lstm-gates-from-batch": "your four gates are cut along the batch axis, not the features: "
    "z is (B, 4H), and with B = 4 z.view(-1, 4, H).unbind(0) hands each gate one sentence's "
    "row. The gates are the four blocks of z's last axis: z.chunk(4, dim=-1).",
    "lstm-state-unpacked-c-h": "you unpack the state as c, h = state: the cell is called as "
    "cell(x, (h, c)), h first, so h, c = state.",
    "lstm-forget-bias-one": "you add 1 to the forget gate's pre-activation, sigmoid(f + 1) (a "
    "bias initialisation trick): the book's cell computes sigmoid(f) from z as it is.",
    "lstm-no-input-gate": "the candidate is not multiplied by the input gate: c' = sigmoid(f) c + "
    "sigmoid(i) tanh(g).",
    "rnn-residual": "you add s_prev to the new state, s_prev + tanh(...): the RNN cell replaces "
    "its state, s = tanh(in_proj(x) + state_proj(s_prev)).",
}

MESSAGES = {
    "rnn-differs": "the new state differs from the reference (x {x}, s_prev {s}).",
    "lstm-gate-order": _ORDER,
    "lstm-interleaved": "the four gates are read as interleaved columns (z viewed as (B, H, 4)); "
    "they are four consecutive blocks of H columns: i, f, g, o = z.chunk(4, dim=-1).",
    "lstm-not-a-pair": "return the new state as a pair (h, c).",
    "lstm-gradients-differ": "the values are right but the gradients differ from the reference.",
    "lstm-h-differs": "c is right but h is not: h = sigmoid(o) * tanh(c').",
    "lstm-c-differs": "the new memory c differs from the reference (x {x}, h and c {h}).",
}

# --- the LSTM cell --------------------------------------------------------------------------------

_GATES = "ifgo"


def _lstm_step(i, f, g, o, c, sig=torch.sigmoid, tanh=torch.tanh):
    new_c = sig(f) * c + sig(i) * tanh(g)
    return sig(o) * tanh(new_c), new_c


def _lstm_mistakes(blocks, c, want_c, x_blocks):
    """``(wrong, (h, c))`` for each typical mistake of an LSTM cell, given the four blocks of
    ``z`` in the book's order (and of ``in_proj(x)`` alone) and the old memory ``c``."""
    i, f, g, o = blocks
    sig, tanh = torch.sigmoid, torch.tanh

    def named(key: str) -> Wrong:
        return Wrong.named(MISTAKES, key)

    for order in permutations(range(4)):  # the reader takes block j to be gate _GATES[...]
        if order == (0, 1, 2, 3):
            continue
        step = _lstm_step(*(blocks[order[n]] for n in range(4)), c)
        read = ", ".join(_GATES[order.index(j)] for j in range(4))
        key = "lstm-gate-order-" + read.replace(", ", "")
        if order == (1, 0, 2, 3):
            yield named("lstm-gates-i-f-swapped"), step
        elif key in MISTAKES:
            yield Wrong.named(MISTAKES, key, read=read), step
        else:
            yield Wrong.differs(MESSAGES, "lstm-gate-order", read=read), step
    yield (
        named("lstm-sigmoid-candidate"),
        _lstm_step(i, f, g, o, c, tanh=lambda t: sig(t) if t is g else tanh(t)),
    )
    new_c = sig(f) * c + sig(i) * g
    yield named("lstm-candidate-no-tanh"), (sig(o) * tanh(new_c), new_c)
    new_c = c + sig(i) * tanh(g)
    yield named("lstm-no-forget"), (sig(o) * tanh(new_c), new_c)
    new_c = (1 - sig(f)) * c + sig(i) * tanh(g)
    yield named("lstm-one-minus-forget"), (sig(o) * tanh(new_c), new_c)
    yield named("lstm-no-tanh-on-c"), (sig(o) * want_c, want_c)
    yield named("lstm-h-from-old-c"), (sig(o) * tanh(c), want_c)
    yield named("lstm-no-output-gate"), (tanh(want_c), want_c)
    yield named("lstm-output-gate-tanh"), (tanh(o) * tanh(want_c), want_c)
    yield named("lstm-output-gate-raw"), (o * tanh(want_c), want_c)
    yield (named("lstm-tanh-forget"),
           _lstm_step(i, f, g, o, c, sig=lambda t: tanh(t) if t is f else sig(t)))  # fmt: skip
    yield (named("lstm-coupled-input-gate"),
           _lstm_step(i, f, g, o, c, sig=lambda t: 1 - sig(f) if t is i else sig(t)))  # fmt: skip
    yield named("lstm-tanh-outside-gate"), (tanh(sig(o) * want_c), want_c)
    yield named("lstm-forget-bias-one"), _lstm_step(i, f + 1, g, o, c)
    new_c = (1 - sig(i)) * c + sig(i) * tanh(g)
    yield named("lstm-coupled-forget-gate"), (sig(o) * tanh(new_c), new_c)
    yield named("lstm-stores-tanh-c"), (sig(o) * tanh(want_c), tanh(want_c))
    yield named("lstm-candidate-from-x"), _lstm_step(i, f, x_blocks[2], o, c)
    gated = sig(o) * want_c  # the output gate applied to the memory, which is then stored
    yield named("lstm-output-gate-on-c"), (tanh(gated), gated)
    new_c = sig(f) * c + tanh(g)
    yield named("lstm-no-input-gate"), (sig(o) * tanh(new_c), new_c)
    z = torch.cat(blocks, dim=-1)  # (B, 4H)
    if z.shape[0] == 4:  # a batch of 4 read as the four gates: z.view(-1, 4, H).unbind(0)
        yield named("lstm-gates-from-batch"), _lstm_step(*z.view(4, 4, -1).unbind(0), c)
    yield (named("lstm-relu-candidate"),
           _lstm_step(i, f, g, o, c, tanh=lambda t: torch.relu(t) if t is g else tanh(t)))  # fmt: skip
    z = torch.cat(blocks, dim=-1)  # (B, 4H)
    yield (Wrong.differs(MESSAGES, "lstm-interleaved"),
           _lstm_step(*z.view(*z.shape[:-1], -1, 4).unbind(-1), c))  # fmt: skip


@check("LSTM cell", build="cls(input_size, hidden_size)", call="cell(x, (h, c))")
def check_lstm_cell(cls: type) -> Verdict:
    """``cls(input_size, hidden_size)``: ``z = in_proj(x) + state_proj(h)`` in four blocks
    i, f, g, o (PyTorch's order); ``c' = sigmoid(f) c + sigmoid(i) tanh(g)``,
    ``h' = sigmoid(o) tanh(c')``; called as ``cell(x, (h, c))``, it returns ``(h', c')``;
    values and gradients."""
    D, H, B = 3, 5, 4
    torch.manual_seed(0)
    mine = build(cls, (D, H), LSTMCell, ("in_proj", "state_proj"))
    mine = mine.double()
    reference = LSTMCell(D, H).double()
    with_weights_of(mine, reference, ("in_proj", "state_proj"))
    x, h, c = randn(B, D), randn(B, H, seed=1), randn(B, H, seed=2)
    given = (h.clone(), c.clone())
    got = mine(x, given)
    if not (torch.equal(given[0], h) and torch.equal(given[1], c)):
        raise Wrong.named(MISTAKES, "lstm-in-place")
    want_h, want_c = reference(x, (h, c))
    if isinstance(got, torch.Tensor) and close(got, want_h):  # h alone, without c
        raise Wrong.named(MISTAKES, "lstm-returns-h-only")
    if not unpacks_to(got, 2):
        raise Wrong.differs(MESSAGES, "lstm-not-a-pair")
    got_h, got_c = expect_tensor(got[0], "h", (B, H)), expect_tensor(got[1], "c", (B, H))
    if close(got_h, want_h) and close(got_c, want_c):
        x_, h_ = x.clone().requires_grad_(), h.clone().requires_grad_()
        mine_h, mine_c = mine(x_, (h_, c))
        backward(mine_h.sum() + mine_c.sum(), "h and c")
        x2, h2 = x.clone().requires_grad_(), h.clone().requires_grad_()
        sum(t.sum() for t in reference(x2, (h2, c))).backward()
        tol = tolerance(mine_h)
        for name, grad in (("x", x_.grad), ("h", h_.grad)):
            if grad is None:
                raise Wrong.named(GRADIENTS, "gradient-detached", name=name)
        if not (close(x_.grad, x2.grad, tol) and close(h_.grad, h2.grad, tol)):
            raise Wrong.differs(MESSAGES, "lstm-gradients-differ")
        expect_dtype_kept(got_h, x, "h")
        expect_dtype_kept(got_c, x, "c")
        return "gates, memory update, output and gradients are right (PyTorch's gate order)."
    if close(got_h, want_c) and close(got_c, want_h):
        raise Wrong.named(MISTAKES, "lstm-returns-c-h")
    if all(close(a, b) for a, b in zip(got, reference(x, (c, h)), strict=True)):
        raise Wrong.named(MISTAKES, "lstm-state-unpacked-c-h")
    if all(close(a, b) for a, b in zip(got, reference(x, (c, h))[::-1], strict=True)):
        raise Wrong.named(MISTAKES, "lstm-state-order-c-h")
    if close(got_c, c):
        raise Wrong.named(MISTAKES, "lstm-returns-old-c")
    blocks = (mine.in_proj(x) + mine.state_proj(h)).chunk(4, dim=-1)
    x_blocks = mine.in_proj(x).chunk(4, dim=-1)
    for wrong, (h_, c_) in _lstm_mistakes(blocks, c, want_c, x_blocks):
        if close(got_c, c_) and close(got_h, h_):
            raise wrong
    if all(close(a, b) for a, b in zip((got_h, got_c), _lstm_step(*blocks, h), strict=True)):
        raise Wrong.named(MISTAKES, "lstm-forget-on-h")
    only_x = _lstm_step(*x_blocks, c)
    if close(got_h, only_x[0]) and close(got_c, only_x[1]):
        raise Wrong.named(MISTAKES, "lstm-no-state-proj")
    if close(got_c, want_c):
        raise Wrong.differs(MESSAGES, "lstm-h-differs")
    raise Wrong.differs(MESSAGES, "lstm-c-differs", x=tuple(x.shape), h=tuple(h.shape))


# --- the RNN cell ---------------------------------------------------------------------------------


@check("RNN cell", build="cls(input_size, hidden_size)", call="cell(x, s_prev)")
def check_rnn_cell(cls: type) -> Verdict:
    """``cls(input_size, hidden_size)``: ``s = tanh(in_proj(x) + state_proj(s_prev))``, called as
    ``cell(x, s_prev)``; it returns the new state, a tensor."""
    D, H, B = 3, 5, 4
    torch.manual_seed(0)
    mine = build(cls, (D, H), RNNCell, ("in_proj", "state_proj"))
    mine = mine.double()
    reference = RNNCell(D, H).double()
    with_weights_of(mine, reference, ("in_proj", "state_proj"))
    x, s = randn(B, D), randn(B, H, seed=1)
    got = mine(x, s)
    if isinstance(got, (tuple, list)):
        raise Wrong.named(MISTAKES, "rnn-returns-pair")
    got = expect_tensor(got, TENSOR_NAMES["new-state"], (B, H))
    if close(got, reference(x, s)):
        _expect_stateless(mine, reference, x, got)
        expect_tensor(mine(x[:1], s[:1]), TENSOR_NAMES["new-state"], (1, H))  # a batch of one
        s_ = s.clone().requires_grad_()
        backward(mine(x, s_).sum(), TENSOR_NAMES["new-state"])
        if s_.grad is None or not s_.grad.any():
            raise Wrong.named(GRADIENTS, "gradient-detached", name="s_prev")
        expect_dtype_kept(got, x, TENSOR_NAMES["new-state"])
        return "the state update s = tanh(in_proj(x) + state_proj(s_prev)) is right."
    found = [key for key, wrong in _rnn_mistakes(mine, x, s).items() if close(got, wrong)]
    if len(found) == 1:
        raise Wrong.named(MISTAKES, found[0])
    raise Wrong.differs(MESSAGES, "rnn-differs", x=tuple(x.shape), s=tuple(s.shape))


def _expect_stateless(mine: torch.nn.Module, reference: torch.nn.Module, x, first) -> None:
    """A second call, with another s_prev of the same shape, depends on that s_prev only."""
    s2 = randn(*first.shape, seed=2)
    got = expect_tensor(mine(x, s2), TENSOR_NAMES["new-state"], tuple(first.shape))
    if close(got, reference(x, s2)):
        return
    if close(got, torch.tanh(mine.in_proj(x) + mine.state_proj(first))):
        raise Wrong.named(MISTAKES, "rnn-keeps-state")
    raise Wrong.differs(MESSAGES, "rnn-differs", x=tuple(x.shape), s=tuple(s2.shape))


def _rnn_mistakes(mine: torch.nn.Module, x: torch.Tensor, s: torch.Tensor) -> dict:
    """What each RNN-cell mistake of ``MISTAKES`` makes of ``x`` and ``s_prev``, with the
    reader's own layers."""
    a, b = mine.in_proj(x), mine.state_proj(s)
    tanh = torch.tanh
    return {
        "rnn-no-tanh": a + b,
        "rnn-no-state": tanh(a),
        "rnn-no-input": tanh(b),
        "rnn-input-squashed": tanh(mine.in_proj(tanh(x)) + b),
        "rnn-input-bias-only": tanh(b + mine.in_proj.bias),
        "rnn-no-bias": tanh(a - mine.in_proj.bias + b),
        "rnn-sigmoid": torch.sigmoid(a + b),
        "rnn-relu": torch.relu(a + b),
        "rnn-tanh-on-input-only": tanh(a) + b,
        "rnn-tanh-on-state-only": a + tanh(b),
        "rnn-no-state-proj": tanh(a + s),
        "rnn-state-weight-untransposed": tanh(a + s @ mine.state_proj.weight),
        "rnn-state-squashed-twice": tanh(a + mine.state_proj(tanh(s))),
        "rnn-terms-averaged": tanh((a + b) / 2),
        "rnn-tanh-each-then-sum": tanh(tanh(a) + tanh(b)),
        "rnn-tanh-each-term": tanh(a) + tanh(b),
        "rnn-residual": s + tanh(a + b),
        "rnn-tanh-moved-to-state": a + mine.state_proj(tanh(s)),
        "rnn-terms-multiplied": tanh(a * b),
    }
