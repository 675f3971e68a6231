"""Recurrent checks: the RNN cell and the LSTM cell (chapters 2 and 3)."""

from __future__ import annotations

import torch

from ..lstm import LSTMCell
from ..rnn import RNNCell
from .verdict import (
    Verdict,
    Wrong,
    _close,
    _random,
    _run,
    _tensor,
    _with_weights_of,
)

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
