"""Blind set B15, check_rnn_cell (chapter 2): one step of a simple RNN, as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_rnn_cell"


class _Base(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class RNNNoTanh(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(s_prev)


class RNNForgetsState(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x))


class RNNForgetsInput(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.state_proj(s_prev))


class RNNSigmoid(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.sigmoid(self.in_proj(x) + self.state_proj(s_prev))


class RNNRelu(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))


class RNNTanhEach(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x)) + torch.tanh(self.state_proj(s_prev))


class RNNStateWeightTransposed(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + s_prev @ self.state_proj.weight)  # W_s, not W_s^T


class RNNNoInputBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size, bias=False)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # the bias put here instead

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNReturnsPair(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> tuple[Tensor, Tensor]:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s, s  # (output, state) like nn.RNN


class RNNHalfStep(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s + s_prev  # keep the old state too


# ---------------------------------------------------------------- correct variants


class RNNFunctional(_Base):
    """F.linear with the layers' weights, and a default zero state."""

    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = x.new_zeros(x.shape[0], self.state_proj.out_features)
        z = F.linear(x, self.in_proj.weight, self.in_proj.bias)
        return (z + F.linear(s_prev, self.state_proj.weight)).tanh()


class RNNAddmm(_Base):
    """torch.addmm with the bias as the added term; an extra helper method."""

    def pre_activation(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = torch.addmm(self.in_proj.bias, x, self.in_proj.weight.T)
        return z + s_prev @ self.state_proj.weight.T

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.pre_activation(x, s_prev))


class RNNColumns(nn.Module):
    """Column vectors as in the maths (W x), transposed back; own init of the weights."""

    def __init__(self, input_size: int, hidden_size: int, nonlinearity: str = "tanh") -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size, bias=True)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        nn.init.orthogonal_(self.state_proj.weight)
        self.act = torch.tanh if nonlinearity == "tanh" else torch.relu

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        cols = self.in_proj.weight @ x.T + self.in_proj.bias[:, None]
        cols = cols + self.state_proj.weight @ s_prev.T
        return self.act(cols).T


CASES = [
    BlindCase(CHECK, "no_tanh", RNNNoTanh, "mistake", "I forgot the tanh."),
    BlindCase(
        CHECK,
        "state_left_out",
        RNNForgetsState,
        "mistake",
        "I only used the input: tanh(in_proj(x)).",
    ),
    BlindCase(
        CHECK,
        "input_left_out",
        RNNForgetsInput,
        "mistake",
        "I only used the previous state: tanh(state_proj(s_prev)).",
    ),
    BlindCase(CHECK, "sigmoid", RNNSigmoid, "mistake", "I used a sigmoid instead of tanh."),
    BlindCase(CHECK, "relu", RNNRelu, "mistake", "I used ReLU instead of tanh."),
    BlindCase(
        CHECK,
        "tanh_of_each_term",
        RNNTanhEach,
        "mistake",
        "I took the tanh of each term separately and added them.",
    ),
    BlindCase(
        CHECK,
        "state_weight_transposed",
        RNNStateWeightTransposed,
        "mistake",
        "I multiplied the state by state_proj.weight directly, i.e. by W_s transposed.",
    ),
    BlindCase(
        CHECK,
        "bias_on_state_proj",
        RNNNoInputBias,
        "mistake",
        "I put the bias on state_proj and none on in_proj.",
    ),
    BlindCase(
        CHECK,
        "returns_pair",
        RNNReturnsPair,
        "mistake",
        "I return (output, state) like nn.RNN instead of the new state alone.",
    ),
    BlindCase(
        CHECK,
        "adds_old_state",
        RNNHalfStep,
        "mistake",
        "I added the previous state to the new one (a residual that isn't in the formula).",
    ),
    BlindCase(
        CHECK,
        "functional_default_state",
        RNNFunctional,
        "correct",
        "F.linear with the layers' weights; s_prev defaults to zeros.",
    ),
    BlindCase(
        CHECK,
        "addmm_with_helper",
        RNNAddmm,
        "correct",
        "torch.addmm and an explicit W^T; an extra helper method.",
    ),
    BlindCase(
        CHECK,
        "column_vectors",
        RNNColumns,
        "correct",
        "Column-vector maths W x then transposed back; orthogonal init; extra "
        "nonlinearity argument with default tanh.",
    ),
]
