"""Blind set B21, check_rnn_cell (chapter 2): one step of a simple RNN as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_rnn_cell"


class _Base(nn.Module):
    """The two layers under the book's names; subclasses write forward."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class RNNNoTanh(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(s_prev)


class RNNRelu(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))


class RNNSigmoid(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.sigmoid(self.in_proj(x) + self.state_proj(s_prev))


class RNNNoState(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x))


class RNNNoInput(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj.bias + self.state_proj(s_prev))


class RNNTanhEachTerm(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x)) + torch.tanh(self.state_proj(s_prev))


class RNNStateBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # left the default bias on

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNExtraBias(_Base):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__(input_size, hidden_size)
        bound = 1 / math.sqrt(hidden_size)
        self.b = nn.Parameter(torch.empty(hidden_size).uniform_(-bound, bound))  # the b of S_t

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev) + self.b)


class RNNStateWeightTransposed(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + s_prev @ self.state_proj.weight)  # s W_s


class RNNReturnsPair(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> tuple[Tensor, Tensor]:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s, s  # (output, state) like nn.RNN


class RNNResidualState(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return s_prev + torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


# ---------------------------------------------------------------- correct variants


class RNNFunctionalLinear(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = F.linear(x, self.in_proj.weight, self.in_proj.bias)
        z = z + F.linear(s_prev, self.state_proj.weight)
        return F.tanh(z)


class RNNAddmm(_Base):
    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = x.new_zeros(x.shape[0], self.state_proj.in_features)
        z = torch.addmm(self.in_proj.bias, x, self.in_proj.weight.t())
        z = torch.addmm(z, s_prev, self.state_proj.weight.t())
        return z.tanh()


class RNNTanhModule(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size, bias=bias)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.act = nn.Tanh()

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.act(self.state_proj(s_prev) + self.in_proj(x))


class RNNEinsum(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = torch.einsum("bi,hi->bh", x, self.in_proj.weight) + self.in_proj.bias
        z = z + torch.einsum("bj,hj->bh", s_prev, self.state_proj.weight)
        return torch.tanh(z)


CASES = [
    BlindCase(CHECK, "no_tanh", RNNNoTanh, "mistake", "I forgot the tanh around the sum."),
    BlindCase(
        CHECK, "relu", RNNRelu, "mistake", "I used relu as the nonlinearity instead of tanh."
    ),
    BlindCase(CHECK, "sigmoid", RNNSigmoid, "mistake", "I used a sigmoid instead of tanh."),
    BlindCase(
        CHECK,
        "state_left_out",
        RNNNoState,
        "mistake",
        "I computed tanh(in_proj(x)) and never used s_prev.",
    ),
    BlindCase(
        CHECK,
        "input_left_out",
        RNNNoInput,
        "mistake",
        "I only kept the bias of in_proj and forgot to apply it to x.",
    ),
    BlindCase(
        CHECK,
        "tanh_each_term",
        RNNTanhEachTerm,
        "mistake",
        "I applied tanh to each term separately and added the two results.",
    ),
    BlindCase(
        CHECK,
        "state_proj_bias",
        RNNStateBias,
        "mistake",
        "I left nn.Linear's default bias on state_proj, so there is a second bias.",
    ),
    BlindCase(
        CHECK,
        "extra_bias_parameter",
        RNNExtraBias,
        "mistake",
        "I added my own parameter b for the formula's bias while in_proj kept its own bias.",
    ),
    BlindCase(
        CHECK,
        "state_weight_transposed",
        RNNStateWeightTransposed,
        "mistake",
        "I wrote s_prev @ state_proj.weight, i.e. multiplied by W_s transposed.",
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
        "residual_state",
        RNNResidualState,
        "mistake",
        "I added s_prev to the new state, as if the cell only computed an update.",
    ),
    BlindCase(
        CHECK,
        "functional_linear",
        RNNFunctionalLinear,
        "correct",
        "F.linear with the layers' weights and F.tanh.",
    ),
    BlindCase(
        CHECK,
        "addmm_optional_state",
        RNNAddmm,
        "correct",
        "torch.addmm for both products; s_prev optional (zeros).",
    ),
    BlindCase(
        CHECK,
        "tanh_module_bias_arg",
        RNNTanhModule,
        "correct",
        "nn.Tanh as a submodule, the state term added first, an optional bias argument.",
    ),
    BlindCase(CHECK, "einsum", RNNEinsum, "correct", "Both products written with einsum."),
]
