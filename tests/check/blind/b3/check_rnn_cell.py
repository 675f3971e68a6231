"""Blind cases for check_rnn_cell (chapter 2), written from the chapter's text only."""

from __future__ import annotations

import torch
from torch import nn

from .. import BlindCase

CHECK = "check_rnn_cell"


class _Layers(nn.Module):
    """The two linear maps under the book's names (what every reader writes first)."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)


class NoTanh(_Layers):
    def forward(self, x, s_prev):
        return self.in_proj(x) + self.state_proj(s_prev)


class ReluCell(_Layers):
    def forward(self, x, s_prev):
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))


class ForgotPreviousState(_Layers):
    def forward(self, x, s_prev):
        return torch.tanh(self.in_proj(x))


class TanhOnlyOnInput(_Layers):
    def forward(self, x, s_prev):
        return torch.tanh(self.in_proj(x)) + self.state_proj(s_prev)


class TanhOfEachTerm(_Layers):
    def forward(self, x, s_prev):
        return torch.tanh(self.in_proj(x)) + torch.tanh(self.state_proj(s_prev))


class StateWeightNotTransposed(_Layers):
    def forward(self, x, s_prev):
        W_s = self.state_proj.weight
        return torch.tanh(self.in_proj(x) + s_prev @ W_s)


class InputWithoutBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size, bias=False)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x, s_prev):
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class StateBeforeInput(_Layers):
    def forward(self, s_prev, x):
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class ByHandWithTranspose(_Layers):
    def forward(self, x, s_prev):
        W_in, b, W_s = self.in_proj.weight, self.in_proj.bias, self.state_proj.weight
        return torch.tanh(x @ W_in.T + s_prev @ W_s.T + b)


class ConcatenatedWeights(_Layers):
    def forward(self, x, s_prev=None):
        if s_prev is None:
            s_prev = x.new_zeros(x.shape[0], self.hidden_size)
        W = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)  # (H, D_in + H)
        return torch.tanh(torch.cat([x, s_prev], dim=1) @ W.T + self.in_proj.bias)


class AddmmWithNonlinearityArgument(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, nonlinearity: str = "tanh") -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size, bias=True)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.f = torch.tanh if nonlinearity == "tanh" else torch.relu

    def forward(self, x, s_prev):
        a = torch.addmm(self.in_proj(x), s_prev, self.state_proj.weight.t())
        return self.f(a)


CASES = [
    BlindCase(
        CHECK,
        "no_tanh",
        NoTanh,
        "mistake",
        "I forgot the tanh: the new state is W_in x + W_s s + b",
    ),
    BlindCase(
        CHECK,
        "relu_cell",
        ReluCell,
        "mistake",
        "I used ReLU as the nonlinearity instead of tanh",
    ),
    BlindCase(
        CHECK,
        "forgot_previous_state",
        ForgotPreviousState,
        "mistake",
        "I left out the previous state: s_t = tanh(W_in x_t + b)",
    ),
    BlindCase(
        CHECK,
        "tanh_only_on_input",
        TanhOnlyOnInput,
        "mistake",
        "I put the tanh only around the input term and added W_s s_{t-1} after it",
    ),
    BlindCase(
        CHECK,
        "tanh_of_each_term",
        TanhOfEachTerm,
        "mistake",
        "I took tanh of the input term and tanh of the state term separately and added them",
    ),
    BlindCase(
        CHECK,
        "state_weight_not_transposed",
        StateWeightNotTransposed,
        "mistake",
        "I multiplied s_prev @ state_proj.weight without the .T, so W_s is used transposed",
    ),
    BlindCase(
        CHECK,
        "input_without_bias",
        InputWithoutBias,
        "mistake",
        "I built in_proj with bias=False, so the bias b is missing",
    ),
    BlindCase(
        CHECK,
        "state_before_input",
        StateBeforeInput,
        "mistake",
        "my forward takes (s_prev, x) instead of (x, s_prev): the arguments in the wrong order",
    ),
    BlindCase(
        CHECK,
        "by_hand_with_transpose",
        ByHandWithTranspose,
        "correct",
        "I wrote the products by hand with the layers' weights: x @ W_in.T + s @ W_s.T + b",
    ),
    BlindCase(
        CHECK,
        "concatenated_weights",
        ConcatenatedWeights,
        "correct",
        "one matrix product of [x; s] with [W_in W_s], and s_prev optional (zeros when None)",
    ),
    BlindCase(
        CHECK,
        "addmm_with_nonlinearity_argument",
        AddmmWithNonlinearityArgument,
        "correct",
        "torch.addmm for the state term, and an extra nonlinearity argument defaulting to tanh",
    ),
]
