"""Mistakes in the RNN cell and the LSTM cell (chapters 2 and 3)."""

from __future__ import annotations

import torch
from torch import nn

from transformer_tutorial import check
from transformer_tutorial.lstm import LSTMCell
from transformer_tutorial.rnn import RNNCell

from . import Correct, Mistake

sig, tanh = torch.sigmoid, torch.tanh

# --- the LSTM cell --------------------------------------------------------------------------------


def lstm_cell_with(update, order="ifgo"):
    """The book's cell whose step is ``update(i, f, g, o, c)``, the blocks of z read as
    ``order`` (the reader's unpacking of ``z.chunk(4)``)."""

    class Cell(LSTMCell):
        def forward(self, x, state):
            h, c = state
            z = self.in_proj(x) + self.state_proj(h)
            blocks = dict(zip(order, z.chunk(4, dim=-1), strict=True))
            return update(blocks["i"], blocks["f"], blocks["g"], blocks["o"], c)

    return Cell


def right(i, f, g, o, c):
    c_new = sig(f) * c + sig(i) * tanh(g)
    return sig(o) * tanh(c_new), c_new


def relu_candidate(i, f, g, o, c):
    c_new = sig(f) * c + sig(i) * torch.relu(g)
    return sig(o) * tanh(c_new), c_new


def returns_c_h(i, f, g, o, c):
    h, c_new = right(i, f, g, o, c)
    return c_new, h


def sigmoid_candidate(i, f, g, o, c):
    c_new = sig(f) * c + sig(i) * sig(g)
    return sig(o) * tanh(c_new), c_new


def no_forget(i, f, g, o, c):
    c_new = c + sig(i) * tanh(g)
    return sig(o) * tanh(c_new), c_new


def no_tanh_on_c(i, f, g, o, c):
    c_new = sig(f) * c + sig(i) * tanh(g)
    return sig(o) * c_new, c_new


def h_from_old_memory(i, f, g, o, c):
    c_new = sig(f) * c + sig(i) * tanh(g)
    return sig(o) * tanh(c), c_new


def no_output_gate(i, f, g, o, c):
    c_new = sig(f) * c + sig(i) * tanh(g)
    return tanh(c_new), c_new


def output_gate_tanh(i, f, g, o, c):
    c_new = sig(f) * c + sig(i) * tanh(g)
    return tanh(o) * tanh(c_new), c_new


def candidate_without_tanh(i, f, g, o, c):
    c_new = sig(f) * c + sig(i) * g
    return sig(o) * tanh(c_new), c_new


def returns_old_memory(i, f, g, o, c):
    h, _ = right(i, f, g, o, c)
    return h, c


def one_minus_forget(i, f, g, o, c):
    c_new = (1 - sig(f)) * c + sig(i) * tanh(g)
    return sig(o) * tanh(c_new), c_new


class LSTMWithoutState(LSTMCell):
    def forward(self, x, state):
        h, c = state
        i, f, g, o = self.in_proj(x).chunk(4, dim=-1)
        return right(i, f, g, o, c)


class LSTMUpdatesInPlace(LSTMCell):
    """Right values, but the caller's memory c is overwritten with mul_ and add_."""

    def forward(self, x, state):
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c.mul_(sig(f)).add_(sig(i) * tanh(g))
        return sig(o) * tanh(c), c


class LSTMReturnsH(LSTMCell):
    def forward(self, x, state):
        return super().forward(x, state)[0]


class LSTMDetachesState(LSTMCell):
    def forward(self, x, state):
        h, c = state
        return super().forward(x, (h.detach(), c))


class LSTMByGateSlices(nn.Module):
    """Correct, written differently: the gates sliced out of z one at a time."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.H = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)

    def forward(self, x, state):
        h, c = state
        z, H = self.in_proj(x) + self.state_proj(h), self.H
        i, f = torch.sigmoid(z[:, :H]), torch.sigmoid(z[:, H : 2 * H])
        g, o = torch.tanh(z[:, 2 * H : 3 * H]), torch.sigmoid(z[:, 3 * H :])
        c = f * c + i * g
        return o * torch.tanh(c), c


# --- the RNN cell ---------------------------------------------------------------------------------


def rnn_cell_with(update):
    class Cell(RNNCell):
        def forward(self, x, s_prev=None):
            return update(self.in_proj(x), self.state_proj(s_prev))

    return Cell


class RNNWithoutStateProj(RNNCell):
    def forward(self, x, s_prev=None):
        return torch.tanh(self.in_proj(x) + s_prev)


class RNNStateWeightAsStored(RNNCell):
    def forward(self, x, s_prev=None):
        return torch.tanh(self.in_proj(x) + s_prev @ self.state_proj.weight)


class RNNSquashesStateTwice(RNNCell):
    def forward(self, x, s_prev=None):
        return torch.tanh(self.in_proj(x) + self.state_proj(torch.tanh(s_prev)))


class RNNReturnsPair(RNNCell):
    def forward(self, x, s_prev=None):
        s = super().forward(x, s_prev)
        return s, s


class RNNByMatmul(nn.Module):
    """Correct, written differently: the weights applied by hand."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x, s_prev):
        z = x @ self.in_proj.weight.T + self.in_proj.bias + s_prev @ self.state_proj.weight.T
        return torch.tanh(z)


LSTM, RNN = check.check_lstm_cell, check.check_rnn_cell

MISTAKES = [
    Mistake(
        LSTM,
        "lstm-coupled-input-gate",
        lstm_cell_with(lambda i, f, g, o, c: right(-f, f, g, o, c)),
        "coupled",
    ),
    Mistake(LSTM, "lstm-relu-candidate", lstm_cell_with(relu_candidate), "takes ReLU"),
    Mistake(LSTM, "lstm-in-place", LSTMUpdatesInPlace, "changed the state (h, c) it was given"),
    Mistake(
        LSTM,
        "lstm-gates-i-f-swapped",
        lstm_cell_with(right, "figo"),
        "input and forget gates are swapped",
    ),  # fmt: skip
    Mistake(
        LSTM,
        "lstm-gate-order-ifog",
        lstm_cell_with(right, "ifog"),
        "reading the four blocks of z as i, f, o, g gives",
    ),  # fmt: skip
    Mistake(
        LSTM,
        "lstm-gate-order-fiog",
        lstm_cell_with(right, "fiog"),
        "reading the four blocks of z as f, i, o, g gives",
    ),  # fmt: skip
    Mistake(
        LSTM,
        "lstm-gate-order-gifo",
        lstm_cell_with(right, "gifo"),
        "reading the four blocks of z as g, i, f, o gives",
    ),  # fmt: skip
    Mistake(LSTM, "lstm-returns-c-h", lstm_cell_with(returns_c_h), "you return (c, h)"),
    Mistake(LSTM, "lstm-sigmoid-candidate", lstm_cell_with(sigmoid_candidate), "tanh, not sigmoid"),
    Mistake(LSTM, "lstm-no-forget", lstm_cell_with(no_forget), "the old memory is kept whole"),
    Mistake(LSTM, "lstm-no-tanh-on-c", lstm_cell_with(no_tanh_on_c), "left out the tanh"),
    Mistake(
        LSTM,
        "lstm-h-from-old-c",
        lstm_cell_with(h_from_old_memory),
        "h is computed from the old memory",
    ),  # fmt: skip
    Mistake(LSTM, "lstm-no-output-gate", lstm_cell_with(no_output_gate), "output gate is missing"),
    Mistake(
        LSTM, "lstm-output-gate-tanh", lstm_cell_with(output_gate_tanh), "takes sigmoid, not tanh"
    ),
    Mistake(
        LSTM,
        "lstm-candidate-no-tanh",
        lstm_cell_with(candidate_without_tanh),
        "the candidate g has no tanh",
    ),  # fmt: skip
    Mistake(
        LSTM,
        "lstm-returns-old-c",
        lstm_cell_with(returns_old_memory),
        "you return the old memory c",
    ),  # fmt: skip
    Mistake(LSTM, "lstm-one-minus-forget", lstm_cell_with(one_minus_forget), "1 - sigmoid(f)"),
    Mistake(LSTM, "lstm-no-state-proj", LSTMWithoutState, "the previous h is not used"),
    Mistake(LSTM, "lstm-returns-h-only", LSTMReturnsH, "not h alone"),
    Mistake(
        LSTM,
        "lstm-detaches-h",
        LSTMDetachesState,
        "no gradient reaches h",
        mistake="gradient-detached",
    ),
    Mistake(RNN, "rnn-no-tanh", rnn_cell_with(lambda a, b: a + b), "left out the tanh"),
    Mistake(
        RNN, "rnn-no-state", rnn_cell_with(lambda a, b: torch.tanh(a)), "previous state is not used"
    ),  # fmt: skip
    Mistake(RNN, "rnn-no-input", rnn_cell_with(lambda a, b: torch.tanh(b)), "input is not used"),
    Mistake(
        RNN, "rnn-sigmoid", rnn_cell_with(lambda a, b: torch.sigmoid(a + b)), "tanh, not sigmoid"
    ),  # fmt: skip
    Mistake(RNN, "rnn-relu", rnn_cell_with(lambda a, b: torch.relu(a + b)), "tanh, not ReLU"),
    Mistake(
        RNN,
        "rnn-tanh-on-input-only",
        rnn_cell_with(lambda a, b: torch.tanh(a) + b),
        "the tanh covers only in_proj(x)",
    ),  # fmt: skip
    Mistake(RNN, "rnn-no-state-proj", RNNWithoutStateProj, "s_prev is added as it is"),
    Mistake(RNN, "rnn-state-weight-untransposed", RNNStateWeightAsStored, "weight.T"),
    Mistake(RNN, "rnn-state-squashed-twice", RNNSquashesStateTwice, "tanh again"),
    Mistake(
        RNN, "rnn-terms-averaged", rnn_cell_with(lambda a, b: torch.tanh((a + b) / 2)), "halve"
    ),
    Mistake(RNN, "rnn-returns-pair", RNNReturnsPair, "not a tuple"),
    Mistake(
        RNN, "rnn-wrong-arity", rnn_cell_with(lambda a, b: a).__mro__[1].__init__, "expects a class"
    ),  # fmt: skip
]

CORRECT = [
    Correct(LSTM, "lstm-package", LSTMCell),
    Correct(LSTM, "lstm-by-hand", lstm_cell_with(right)),
    Correct(LSTM, "lstm-gate-slices", LSTMByGateSlices),
    Correct(RNN, "rnn-package", RNNCell),
    Correct(RNN, "rnn-by-hand", rnn_cell_with(lambda a, b: torch.tanh(b + a))),
    Correct(RNN, "rnn-matmul", RNNByMatmul),
]
