"""Blind set B19, check_rnn_cell (chapter 2): one step of a simple RNN as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_rnn_cell"


class _Base(nn.Module):
    """The book's two layers; the mistakes below differ only in ``forward``."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class RNNCellNoTanh(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(s_prev)  # a linear recurrence


class RNNCellReLU(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))


class RNNCellSigmoid(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.sigmoid(self.in_proj(x) + self.state_proj(s_prev))  # squashed to (0, 1)


class RNNCellNoState(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x))  # s_prev only sets the shape


class RNNCellNoInput(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.state_proj(s_prev) + self.in_proj.bias)


class RNNCellTwoTanh(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x)) + torch.tanh(self.state_proj(s_prev))


class RNNCellStateBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # bias=True by default

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNCellStateWeightNotTransposed(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        # square matrix, so no shape error: s W_s instead of s W_s^T
        z = x @ self.in_proj.weight.T + self.in_proj.bias + s_prev @ self.state_proj.weight
        return torch.tanh(z)


class RNNCellSwappedLayers(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(hidden_size, hidden_size)
        self.state_proj = nn.Linear(input_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(s_prev) + self.state_proj(x))  # W_in for the state


class RNNCellReturnsPair(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> tuple[Tensor, Tensor]:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s, s  # (output, hidden), as nn.RNN returns


# ---------------------------------------------------------------- correct variants


class RNNCellFunctional(_Base):
    """F.linear with the layers' weights, spelled out."""

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = F.linear(x, self.in_proj.weight, self.in_proj.bias)
        z = z + F.linear(s_prev, self.state_proj.weight)
        return z.tanh()


class RNNCellOptionalState(nn.Module):
    """An optional s_prev (zeros), a nonlinearity argument and a custom init."""

    def __init__(self, input_size: int, hidden_size: int, nonlinearity: str = "tanh") -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.act = torch.tanh if nonlinearity == "tanh" else torch.relu
        self.in_proj = nn.Linear(input_size, hidden_size, bias=True)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        nn.init.orthogonal_(self.state_proj.weight)

    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = torch.zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device)
        return self.act(self.state_proj(s_prev) + self.in_proj(x))


class RNNCellAddmm(_Base):
    """torch.addmm for the input term, in-place tanh on its own temporary."""

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = torch.addmm(self.in_proj.bias, x, self.in_proj.weight.t())
        z += s_prev @ self.state_proj.weight.t()
        return z.tanh_()


CASES = [
    BlindCase(CHECK, "no_tanh", RNNCellNoTanh, "mistake", "I forgot the tanh."),
    BlindCase(CHECK, "relu", RNNCellReLU, "mistake", "I used ReLU instead of tanh."),
    BlindCase(CHECK, "sigmoid", RNNCellSigmoid, "mistake", "I used a sigmoid, as for a gate."),
    BlindCase(
        CHECK, "no_state", RNNCellNoState, "mistake", "I left the previous state out of the sum."
    ),
    BlindCase(
        CHECK,
        "no_input",
        RNNCellNoInput,
        "mistake",
        "I only used the state and the bias, leaving out W_in x.",
    ),
    BlindCase(
        CHECK,
        "two_tanh",
        RNNCellTwoTanh,
        "mistake",
        "I squashed each term with its own tanh and added the results.",
    ),
    BlindCase(
        CHECK,
        "state_proj_with_bias",
        RNNCellStateBias,
        "mistake",
        "I left state_proj with its default bias, so there are two biases.",
    ),
    BlindCase(
        CHECK,
        "state_weight_not_transposed",
        RNNCellStateWeightNotTransposed,
        "mistake",
        "I wrote the products with the weight matrices by hand and forgot the .T on the square "
        "state matrix.",
    ),
    BlindCase(
        CHECK,
        "swapped_layers",
        RNNCellSwappedLayers,
        "mistake",
        "I applied in_proj to the state and state_proj to the input.",
    ),
    BlindCase(
        CHECK,
        "returns_pair",
        RNNCellReturnsPair,
        "mistake",
        "I returned (output, hidden) like nn.RNN, both the new state.",
    ),
    BlindCase(
        CHECK,
        "functional_linear",
        RNNCellFunctional,
        "correct",
        "F.linear with the two layers' weights instead of calling the layers.",
    ),
    BlindCase(
        CHECK,
        "optional_state",
        RNNCellOptionalState,
        "correct",
        "s_prev optional (zeros), a nonlinearity argument defaulting to tanh, orthogonal init.",
    ),
    BlindCase(
        CHECK,
        "addmm_inplace_tanh",
        RNNCellAddmm,
        "correct",
        "torch.addmm for W_in x + b, += for the state term and tanh_ on the temporary.",
    ),
]
