"""Blind set B22, check_rnn_cell (chapter 2): one step of a simple RNN as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_rnn_cell"


class _Base(nn.Module):
    """The right layers; each mistake changes only its forward (or one layer)."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class RNNNoTanh(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(s_prev)


class RNNNoState(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x))


class RNNNoInput(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.state_proj(s_prev) + self.in_proj.bias)


class RNNRelu(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))


class RNNSigmoid(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.sigmoid(self.in_proj(x) + self.state_proj(s_prev))


class RNNTwoTanh(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x)) + torch.tanh(self.state_proj(s_prev))


class RNNTanhOnInputOnly(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x)) + self.state_proj(s_prev)


class RNNStateWeightNotTransposed(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + s_prev @ self.state_proj.weight)  # W, not W^T


class RNNStateBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # left the default bias=True

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNInputNoBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size, bias=False)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNReturnsPair(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> tuple[Tensor, Tensor]:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s, s  # (output, state) like nn.RNN


class RNNOtherNames(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.W_in = nn.Linear(input_size, hidden_size)
        self.W_s = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.W_in(x) + self.W_s(s_prev))


# ---------------------------------------------------------------- correct variants


class RNNFunctional(_Base):
    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = x.new_zeros(x.shape[0], self.state_proj.in_features)
        z = F.linear(x, self.in_proj.weight, self.in_proj.bias)
        return torch.tanh(z + F.linear(s_prev, self.state_proj.weight))


class RNNConcatenated(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        W = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)  # (H, D_in + H)
        return torch.tanh(torch.cat([x, s_prev], dim=-1) @ W.T + self.in_proj.bias)


class RNNAddmm(_Base):
    def __init__(self, input_size: int, hidden_size: int, nonlinearity: str = "tanh") -> None:
        super().__init__(input_size, hidden_size)
        self.nonlinearity = nonlinearity

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = torch.addmm(self.in_proj.bias, x, self.in_proj.weight.t())
        z = torch.addmm(z, s_prev, self.state_proj.weight.t())
        return z.tanh() if self.nonlinearity == "tanh" else z.relu()


CASES = [
    BlindCase(CHECK, "no_tanh", RNNNoTanh, "mistake", "I forgot the tanh."),
    BlindCase(
        CHECK, "no_state", RNNNoState, "mistake", "I left the previous state out of the sum."
    ),
    BlindCase(
        CHECK, "no_input", RNNNoInput, "mistake", "I used only the bias of in_proj, not W_in x."
    ),
    BlindCase(CHECK, "relu", RNNRelu, "mistake", "I used ReLU instead of tanh."),
    BlindCase(CHECK, "sigmoid", RNNSigmoid, "mistake", "I used a sigmoid instead of tanh."),
    BlindCase(
        CHECK,
        "two_tanh",
        RNNTwoTanh,
        "mistake",
        "I squashed the two terms separately and added the two tanh.",
    ),
    BlindCase(
        CHECK,
        "tanh_input_only",
        RNNTanhOnInputOnly,
        "mistake",
        "My parentheses put tanh around the input term only.",
    ),
    BlindCase(
        CHECK,
        "state_weight_not_transposed",
        RNNStateWeightNotTransposed,
        "mistake",
        "I multiplied the state by state_proj.weight without transposing it.",
    ),
    BlindCase(
        CHECK,
        "state_bias",
        RNNStateBias,
        "mistake",
        "I left bias=True on state_proj, so there are two biases.",
    ),
    BlindCase(CHECK, "input_no_bias", RNNInputNoBias, "mistake", "I gave neither layer a bias."),
    BlindCase(
        CHECK,
        "returns_pair",
        RNNReturnsPair,
        "mistake",
        "I returned (output, state) like nn.RNN instead of the new state.",
    ),
    BlindCase(
        CHECK,
        "other_names",
        RNNOtherNames,
        "mistake",
        "I named the layers W_in and W_s instead of in_proj and state_proj.",
    ),
    BlindCase(
        CHECK,
        "functional",
        RNNFunctional,
        "correct",
        "F.linear with the layers' weights; s_prev may be None (zeros).",
    ),
    BlindCase(
        CHECK,
        "concatenated",
        RNNConcatenated,
        "correct",
        "One matmul of [x; s] with the two weights side by side.",
    ),
    BlindCase(
        CHECK,
        "addmm",
        RNNAddmm,
        "correct",
        "torch.addmm twice, with an extra nonlinearity argument defaulting to tanh.",
    ),
]
