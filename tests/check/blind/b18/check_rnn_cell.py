"""Blind set B18, check_rnn_cell (chapter 2): one step of a simple RNN as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_rnn_cell"


class _Layers(nn.Module):
    """The two layers of the skeleton, shared by the mistakes that are in ``forward``."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class RNNCellNoTanh(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(s_prev)  # linear recurrence, no squashing


class RNNCellReLU(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))  # the usual activation


class RNNCellSigmoid(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.sigmoid(self.in_proj(x) + self.state_proj(s_prev))


class RNNCellTanhEachTerm(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x)) + torch.tanh(self.state_proj(s_prev))


class RNNCellIgnoresState(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x))  # s_prev is used by the layer that loops, not here


class RNNCellStateBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # a bias here too

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNCellStateWeightTransposed(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        recurrent = s_prev @ self.state_proj.weight  # W_s s, with rows as vectors
        return torch.tanh(self.in_proj(x) + recurrent)


class RNNCellReturnsPair(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> tuple[Tensor, Tensor]:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s, s  # (output, new state), as nn.RNN returns two things


class RNNCellDetachedState(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        s_prev = s_prev.detach()  # no backprop into earlier steps, keeps the graph small
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNCellInnerTorchCell(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)  # the names the check asks for
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.cell = nn.RNNCell(input_size, hidden_size)  # does the actual step

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.cell(x, s_prev)


# ---------------------------------------------------------------- correct variants


class RNNCellDefaultState(nn.Module):
    """s_prev optional (zeros), with a helper that makes the first state."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, hidden_size, bias=True)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def initial_state(self, x: Tensor) -> Tensor:
        return torch.zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device)

    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = self.initial_state(x)
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNCellConcatenated(nn.Module):
    """One linear map on [x; s]: the two weight matrices side by side."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        bound = 1 / math.sqrt(hidden_size)
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        W = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)  # (H, D_in + H)
        return F.linear(torch.cat([x, s_prev], dim=-1), W, self.in_proj.bias).tanh()


class RNNCellInPlaceTemporaries(_Layers):
    """addmm for the input term, then in-place add and tanh on the new tensor."""

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = torch.addmm(self.in_proj.bias, x, self.in_proj.weight.t())  # (B, H)
        z.add_(s_prev @ self.state_proj.weight.T)
        return z.tanh_()


CASES = [
    BlindCase(
        CHECK,
        "no_tanh",
        RNNCellNoTanh,
        "mistake",
        "I returned in_proj(x) + state_proj(s_prev) and forgot the tanh.",
    ),
    BlindCase(
        CHECK,
        "relu",
        RNNCellReLU,
        "mistake",
        "I used ReLU as the nonlinearity instead of tanh.",
    ),
    BlindCase(
        CHECK,
        "sigmoid",
        RNNCellSigmoid,
        "mistake",
        "I squashed with a sigmoid instead of tanh.",
    ),
    BlindCase(
        CHECK,
        "tanh_each_term",
        RNNCellTanhEachTerm,
        "mistake",
        "I applied tanh to the input term and to the state term separately and added them.",
    ),
    BlindCase(
        CHECK,
        "ignores_state",
        RNNCellIgnoresState,
        "mistake",
        "I computed tanh(in_proj(x)) and left the previous state out of the step.",
    ),
    BlindCase(
        CHECK,
        "state_proj_with_bias",
        RNNCellStateBias,
        "mistake",
        "I gave state_proj a bias too, so the step adds two biases.",
    ),
    BlindCase(
        CHECK,
        "state_weight_transposed",
        RNNCellStateWeightTransposed,
        "mistake",
        "I multiplied s_prev @ state_proj.weight directly, which applies W_s transposed.",
    ),
    BlindCase(
        CHECK,
        "returns_pair",
        RNNCellReturnsPair,
        "mistake",
        "I return (output, state) like nn.RNN, both the new state, instead of the state alone.",
    ),
    BlindCase(
        CHECK,
        "detached_state",
        RNNCellDetachedState,
        "mistake",
        "I detached s_prev inside the step, so no gradient flows back to earlier steps.",
    ),
    BlindCase(
        CHECK,
        "inner_torch_cell",
        RNNCellInnerTorchCell,
        "mistake",
        "I defined in_proj and state_proj as asked but did the step with an nn.RNNCell, whose "
        "own weights are used instead.",
    ),
    BlindCase(
        CHECK,
        "optional_state_helper",
        RNNCellDefaultState,
        "correct",
        "s_prev defaults to None (zeros) through an extra initial_state method.",
    ),
    BlindCase(
        CHECK,
        "concatenated_weights",
        RNNCellConcatenated,
        "correct",
        "One F.linear on torch.cat([x, s_prev]) with the two weights side by side; own init.",
    ),
    BlindCase(
        CHECK,
        "addmm_in_place",
        RNNCellInPlaceTemporaries,
        "correct",
        "torch.addmm for W_in x + b, then add_ and tanh_ in place on that new tensor.",
    ),
]
