"""Blind cases for check_rnn_cell (chapter 2), written from the chapter's text only."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .. import BlindCase

CHECK = "check_rnn_cell"


class _Layers(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)


class NoTanh(_Layers):
    def forward(self, x, s_prev):
        return self.in_proj(x) + self.state_proj(s_prev)


class SigmoidSquash(_Layers):
    def forward(self, x, s_prev):
        return torch.sigmoid(self.in_proj(x) + self.state_proj(s_prev))


class TanhOnlyOnState(_Layers):
    def forward(self, x, s_prev):
        return self.in_proj(x) + torch.tanh(self.state_proj(s_prev))


class BiasOnBoth(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # bias left on, like nn.RNNCell

    def forward(self, x, s_prev):
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class StateTimesWeight(_Layers):
    def forward(self, x, s_prev):
        return torch.tanh(self.in_proj(x) + s_prev @ self.state_proj.weight)


class ReluCell(_Layers):
    def forward(self, x, s_prev):
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))


class InputOnly(_Layers):
    def forward(self, x, s_prev):
        return torch.tanh(self.in_proj(x))


class FunctionalLinear(_Layers):
    def forward(self, x, s_prev):
        z = F.linear(x, self.in_proj.weight, self.in_proj.bias)
        z = z + s_prev @ self.state_proj.weight.T
        return torch.tanh(z)


class OptionalState(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, nonlinearity: str = "tanh") -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.nonlinearity = nonlinearity
        self.in_proj = nn.Linear(input_size, hidden_size, bias=True)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x, s_prev=None):
        if s_prev is None:
            s_prev = x.new_zeros(x.shape[0], self.hidden_size)
        z = self.state_proj(s_prev) + self.in_proj(x)
        return torch.tanh(z) if self.nonlinearity == "tanh" else torch.relu(z)


class AddmmCell(_Layers):
    def forward(self, x, s_prev):
        z = torch.addmm(self.in_proj.bias, x, self.in_proj.weight.t())
        z.addmm_(s_prev, self.state_proj.weight.t())
        return z.tanh()


CASES = [
    BlindCase(CHECK, "no_tanh", NoTanh, "mistake", "I returned W_in x + W_s s + b, no tanh"),
    BlindCase(
        CHECK,
        "sigmoid_squash",
        SigmoidSquash,
        "mistake",
        "I squashed with a sigmoid instead of tanh",
    ),
    BlindCase(
        CHECK,
        "tanh_only_on_state",
        TanhOnlyOnState,
        "mistake",
        "I put the tanh around the state term only: W_in x + b + tanh(W_s s)",
    ),
    BlindCase(
        CHECK,
        "bias_on_both",
        BiasOnBoth,
        "mistake",
        "I left the default bias on state_proj too, so there are two biases",
    ),
    BlindCase(
        CHECK,
        "state_times_weight",
        StateTimesWeight,
        "mistake",
        "I wrote s_prev @ state_proj.weight, which multiplies by W_s transposed",
    ),
    BlindCase(CHECK, "relu_cell", ReluCell, "mistake", "I used ReLU as the nonlinearity"),
    BlindCase(
        CHECK,
        "input_only",
        InputOnly,
        "mistake",
        "I computed tanh(W_in x + b) and never added the previous state",
    ),
    BlindCase(
        CHECK,
        "functional_linear",
        FunctionalLinear,
        "correct",
        "I wrote the two products by hand with F.linear and s @ W_s.T",
    ),
    BlindCase(
        CHECK,
        "optional_state",
        OptionalState,
        "correct",
        "s_prev defaults to zeros, an extra nonlinearity argument, the terms added in the other order",
    ),
    BlindCase(
        CHECK,
        "addmm_cell",
        AddmmCell,
        "correct",
        "I used torch.addmm and an in-place addmm_ on the new tensor",
    ),
]
