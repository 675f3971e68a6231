"""Blind set B12, check_rnn_cell (chapter 2): one step s_t = tanh(W_in x + W_s s + b)."""

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
        return self.in_proj(x) + self.state_proj(s_prev)  # linear is enough


class RNNNoState(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x))  # s_prev is already in the weights


class RNNNoInput(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.state_proj(s_prev))


class RNNRelu(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))


class RNNSigmoid(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.sigmoid(self.in_proj(x) + self.state_proj(s_prev))


class RNNTwoBiases(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # a bias here too, like nn.RNN

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNTanhEachTerm(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x)) + torch.tanh(self.state_proj(s_prev))


class RNNWeightNotTransposed(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + s_prev @ self.state_proj.weight)  # W_s s


class RNNReturnsPair(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> tuple[Tensor, Tensor]:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s, s  # output and state, as nn.RNN returns


# ---------------------------------------------------------------- correct variants


class RNNFunctional(_Base):
    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = x.new_zeros(x.shape[0], self.state_proj.in_features)
        z = F.linear(x, self.in_proj.weight, self.in_proj.bias)
        return torch.tanh(z + F.linear(s_prev, self.state_proj.weight))


class RNNConcat(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        W = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)  # (H, D_in + H)
        return torch.tanh(torch.cat([x, s_prev], dim=-1) @ W.T + self.in_proj.bias)


class RNNSigmoidTanh(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = torch.addmm(self.in_proj(x), s_prev, self.state_proj.weight.t())
        return 2 * torch.sigmoid(2 * z) - 1  # tanh(z) = 2 sigmoid(2z) - 1


CASES = [
    BlindCase(CHECK, "no_tanh", RNNNoTanh, "mistake", "I left out the tanh."),
    BlindCase(
        CHECK,
        "no_previous_state",
        RNNNoState,
        "mistake",
        "I only used the input; the previous state is never added.",
    ),
    BlindCase(
        CHECK,
        "no_input",
        RNNNoInput,
        "mistake",
        "I only used the previous state and forgot the input term.",
    ),
    BlindCase(CHECK, "relu", RNNRelu, "mistake", "I used ReLU instead of tanh."),
    BlindCase(CHECK, "sigmoid", RNNSigmoid, "mistake", "I used a sigmoid instead of tanh."),
    BlindCase(
        CHECK,
        "two_biases",
        RNNTwoBiases,
        "mistake",
        "I gave state_proj a bias too, as nn.RNN has b_ih and b_hh.",
    ),
    BlindCase(
        CHECK,
        "tanh_each_term",
        RNNTanhEachTerm,
        "mistake",
        "I applied tanh to each term separately and added the results.",
    ),
    BlindCase(
        CHECK,
        "weight_not_transposed",
        RNNWeightNotTransposed,
        "mistake",
        "I multiplied s_prev by state_proj.weight directly, without the transpose.",
    ),
    BlindCase(
        CHECK,
        "returns_pair",
        RNNReturnsPair,
        "mistake",
        "I returned (output, state) like nn.RNN instead of the new state alone.",
    ),
    BlindCase(
        CHECK,
        "functional_default_state",
        RNNFunctional,
        "correct",
        "F.linear with the layers' weights; s_prev optional, zeros when None.",
    ),
    BlindCase(
        CHECK,
        "concatenated_weights",
        RNNConcat,
        "correct",
        "One matrix product of [x; s_prev] with the two weights concatenated.",
    ),
    BlindCase(
        CHECK,
        "addmm_sigmoid_tanh",
        RNNSigmoidTanh,
        "correct",
        "torch.addmm for the state term and tanh written as 2 sigmoid(2z) - 1.",
    ),
]
