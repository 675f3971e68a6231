"""Blind cases for check_rnn_cell (chapter 2)."""

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


class RNNReLU(_Base):
    def forward(self, x, s_prev):
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))


class RNNSigmoid(_Base):
    def forward(self, x, s_prev):
        return torch.sigmoid(self.in_proj(x) + self.state_proj(s_prev))


class RNNTanhOnInputOnly(_Base):
    def forward(self, x, s_prev):
        return torch.tanh(self.in_proj(x)) + self.state_proj(s_prev)


class RNNNoBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size, bias=False)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x, s_prev):
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNTransposedStateWeight(_Base):
    def forward(self, x, s_prev):
        return torch.tanh(self.in_proj(x) + s_prev @ self.state_proj.weight)  # W_s^T instead of W_s


class RNNStateTanhedTwice(_Base):
    def forward(self, x, s_prev):
        return torch.tanh(self.in_proj(x) + self.state_proj(torch.tanh(s_prev)))


class RNNAveraged(_Base):
    def forward(self, x, s_prev):
        return torch.tanh((self.in_proj(x) + self.state_proj(s_prev)) / 2)


class RNNBiasOnState(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # a second bias b_s

    def forward(self, x, s_prev):
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNReturnsPair(_Base):
    def forward(self, x, s_prev):
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s, s  # (output, state) like nn.RNN


class RNNFunctional(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = F.linear(x, self.in_proj.weight, self.in_proj.bias)
        z = z + F.linear(s_prev, self.state_proj.weight)
        return torch.tanh(z)


class RNNExplicitMatmul(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, nonlinearity: str = "tanh") -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, hidden_size, bias=True)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.nonlinearity = nonlinearity

    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = torch.zeros(x.shape[0], self.hidden_size, dtype=x.dtype)
        z = x @ self.in_proj.weight.T + self.in_proj.bias + s_prev @ self.state_proj.weight.T
        return torch.tanh(z) if self.nonlinearity == "tanh" else torch.relu(z)


class RNNTanhByExp(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = self.in_proj(x) + self.state_proj(s_prev)
        return 2 * torch.sigmoid(2 * z) - 1  # tanh(z) = 2 sigma(2z) - 1


CASES = [
    BlindCase(
        CHECK, "relu_instead_of_tanh", RNNReLU, "mistake", "applies ReLU to the sum instead of tanh"
    ),
    BlindCase(
        CHECK,
        "sigmoid_instead_of_tanh",
        RNNSigmoid,
        "mistake",
        "applies a sigmoid to the sum instead of tanh",
    ),
    BlindCase(
        CHECK,
        "tanh_only_on_input",
        RNNTanhOnInputOnly,
        "mistake",
        "puts the tanh around in_proj(x) only and adds state_proj(s_prev) outside it",
    ),
    BlindCase(
        CHECK,
        "no_bias",
        RNNNoBias,
        "mistake",
        "builds in_proj with bias=False, so the cell has no bias b",
    ),
    BlindCase(
        CHECK,
        "state_weight_transposed",
        RNNTransposedStateWeight,
        "mistake",
        "multiplies s_prev by state_proj.weight without transposing it (uses W_s^T)",
    ),
    BlindCase(
        CHECK,
        "tanh_of_previous_state",
        RNNStateTanhedTwice,
        "mistake",
        "squashes the previous state with tanh again before projecting it",
    ),
    BlindCase(
        CHECK,
        "averages_the_two_terms",
        RNNAveraged,
        "mistake",
        "divides the sum of the two projections by 2 before the tanh",
    ),
    BlindCase(
        CHECK,
        "bias_on_state_proj",
        RNNBiasOnState,
        "mistake",
        "leaves the default bias on state_proj too, so there are two biases",
    ),
    BlindCase(
        CHECK,
        "slip_returns_output_and_state",
        RNNReturnsPair,
        "mistake",
        "returns the pair (output, state) like nn.RNN instead of just the new state",
    ),
    BlindCase(
        CHECK,
        "functional_linear",
        RNNFunctional,
        "correct",
        "calls F.linear with the layers' weights instead of calling the layers",
    ),
    BlindCase(
        CHECK,
        "explicit_matmul_optional_state",
        RNNExplicitMatmul,
        "correct",
        "writes the matrix products with .T by hand and takes optional s_prev and nonlinearity arguments",
    ),
    BlindCase(
        CHECK, "tanh_from_sigmoid", RNNTanhByExp, "correct", "computes tanh as 2*sigmoid(2z) - 1"
    ),
]
