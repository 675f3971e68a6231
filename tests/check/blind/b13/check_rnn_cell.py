"""Blind set B13, check_rnn_cell (chapter 2): one step of a simple RNN as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_rnn_cell"


class _Base(nn.Module):
    """The right layers; the mistakes below differ in forward only (unless they say otherwise)."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class RNNNoTanh(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(s_prev)  # a linear recurrence


class RNNRelu(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))


class RNNSigmoid(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.sigmoid(self.in_proj(x) + self.state_proj(s_prev))


class RNNNoState(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x))  # the state is added by the loop... I thought


class RNNTanhOnInputOnly(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x)) + self.state_proj(s_prev)  # bracket closed too early


class RNNStateBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # default bias=True

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNRowVectorWeights(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        # x W_in + s W_s with row vectors, straight from the weight matrices
        z = x @ self.in_proj.weight.T + self.in_proj.bias + s_prev @ self.state_proj.weight
        return torch.tanh(z)


class RNNReturnsPair(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> tuple[Tensor, Tensor]:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s, s  # (output, state), like nn.RNN


class RNNOwnBias(_Base):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__(input_size, hidden_size)
        self.b = nn.Parameter(torch.randn(hidden_size) * 0.1)  # the b of the formula

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev) + self.b)


class RNNSwappedLayers(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.state_proj(x) + self.in_proj(s_prev))  # names mixed up


# ---------------------------------------------------------------- correct variants


class RNNFunctional(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = F.linear(x, self.in_proj.weight, self.in_proj.bias)
        z = z + s_prev @ self.state_proj.weight.T
        return torch.tanh(z)


class RNNWithDefaults(nn.Module):
    """Optional zero state, a tanh module and a custom init."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, hidden_size, bias=bias)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.act = nn.Tanh()
        nn.init.orthogonal_(self.state_proj.weight)

    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = x.new_zeros(x.shape[0], self.hidden_size)
        return self.act(self.in_proj(x) + self.state_proj(s_prev))


class RNNInPlace(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = self.in_proj(x)
        z += self.state_proj(s_prev)  # in place on my own temporary
        return z.tanh_()


class RNNAddmm(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = torch.addmm(self.in_proj.bias, x, self.in_proj.weight.t())
        return torch.tanh(torch.addmm(z, s_prev, self.state_proj.weight.t()))


CASES = [
    BlindCase(CHECK, "no_tanh", RNNNoTanh, "mistake", "I forgot the tanh."),
    BlindCase(CHECK, "relu", RNNRelu, "mistake", "I used ReLU as the nonlinearity."),
    BlindCase(CHECK, "sigmoid", RNNSigmoid, "mistake", "I used a sigmoid instead of tanh."),
    BlindCase(
        CHECK,
        "no_previous_state",
        RNNNoState,
        "mistake",
        "I left the previous state out: s_t = tanh(W_in x_t + b).",
    ),
    BlindCase(
        CHECK,
        "tanh_on_input_only",
        RNNTanhOnInputOnly,
        "mistake",
        "I closed the bracket too early: tanh(W_in x + b) + W_s s.",
    ),
    BlindCase(
        CHECK,
        "state_proj_with_bias",
        RNNStateBias,
        "mistake",
        "I left state_proj with nn.Linear's default bias, so there are two biases.",
    ),
    BlindCase(
        CHECK,
        "row_vector_state_weight",
        RNNRowVectorWeights,
        "mistake",
        "I wrote s_prev @ state_proj.weight with row vectors, forgetting the transpose.",
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
        "own_bias_parameter",
        RNNOwnBias,
        "mistake",
        "I added my own parameter b for the formula's bias on top of in_proj's bias.",
    ),
    BlindCase(
        CHECK,
        "layers_swapped",
        RNNSwappedLayers,
        "mistake",
        "I applied state_proj to x and in_proj to the state.",
    ),
    BlindCase(
        CHECK,
        "functional_linear",
        RNNFunctional,
        "correct",
        "F.linear and an explicit matmul with the transposed weight.",
    ),
    BlindCase(
        CHECK,
        "defaults_and_init",
        RNNWithDefaults,
        "correct",
        "An optional bias argument, s_prev defaulting to zeros, nn.Tanh, orthogonal init.",
    ),
    BlindCase(
        CHECK,
        "in_place_temporaries",
        RNNInPlace,
        "correct",
        "+= and tanh_ in place on the pre-activation I computed.",
    ),
    BlindCase(CHECK, "addmm", RNNAddmm, "correct", "torch.addmm for both products."),
]
