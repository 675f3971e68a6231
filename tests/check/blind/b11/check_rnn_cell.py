"""Blind set B11, check_rnn_cell (chapter 2): one step of a simple RNN as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_rnn_cell"


class _Base(nn.Module):
    """The book's two layers; the mistakes differ only in ``forward``."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class RNNNoTanh(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(s_prev)  # the activation comes later, in RNN


class RNNReLU(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))


class RNNSigmoid(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.sigmoid(self.in_proj(x) + self.state_proj(s_prev))


class RNNStateBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # default bias=True

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNStateFirst(_Base):
    def forward(self, s_prev: Tensor, x: Tensor) -> Tensor:  # the state, then the new input
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNForgetsState(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        s = torch.tanh(self.in_proj(x))
        return s


class RNNForgetsInput(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.state_proj(s_prev) + self.in_proj.bias)


class RNNStateWeightTransposed(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        # S_{t-1} W_s with row vectors
        return torch.tanh(self.in_proj(x) + s_prev @ self.state_proj.weight)


class RNNTanhEachTerm(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x)) + torch.tanh(self.state_proj(s_prev))


class RNNResidualState(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        # keep the old state and add what is new
        return s_prev + torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNReturnsPair(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> tuple[Tensor, Tensor]:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s, s  # (output, state), like nn.RNN


# ---------------------------------------------------------------- correct variants


class RNNFunctional(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = F.linear(x, self.in_proj.weight, self.in_proj.bias)
        z = z + F.linear(s_prev, self.state_proj.weight)
        return z.tanh()


class RNNMatmulAddmm(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = torch.addmm(self.in_proj.bias, x, self.in_proj.weight.T)  # b + x W_in^T
        z = z + s_prev @ self.state_proj.weight.t()
        return torch.tanh(z)


class RNNWithExtras(nn.Module):
    """Optional state (zeros), a nonlinearity argument, its own init and a helper."""

    def __init__(self, input_size: int, hidden_size: int, nonlinearity: str = "tanh") -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.act = torch.tanh if nonlinearity == "tanh" else torch.relu
        self.in_proj = nn.Linear(input_size, hidden_size, bias=True)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        bound = 1 / math.sqrt(hidden_size)
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)

    def init_state(self, x: Tensor) -> Tensor:
        return x.new_zeros(x.shape[0], self.hidden_size)

    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = self.init_state(x)
        pre = self.in_proj(x)
        pre += self.state_proj(s_prev)  # in place on my own temporary
        return self.act(pre)


CASES = [
    BlindCase(
        CHECK,
        "no_tanh",
        RNNNoTanh,
        "mistake",
        "I returned W_in x + W_s s + b without the tanh.",
    ),
    BlindCase(CHECK, "relu", RNNReLU, "mistake", "I used ReLU as the nonlinearity, not tanh."),
    BlindCase(
        CHECK,
        "sigmoid",
        RNNSigmoid,
        "mistake",
        "I squashed with a sigmoid, like the gates I had seen, instead of tanh.",
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
        "forward_state_first",
        RNNStateFirst,
        "mistake",
        "I wrote forward(self, s_prev, x), the state first, as in f(s_{t-1}, x_t).",
    ),
    BlindCase(
        CHECK,
        "state_left_out",
        RNNForgetsState,
        "mistake",
        "I only used the input: s = tanh(W_in x + b), the previous state never enters.",
    ),
    BlindCase(
        CHECK,
        "input_left_out",
        RNNForgetsInput,
        "mistake",
        "I wrote tanh(W_s s + b) and forgot the W_in x term.",
    ),
    BlindCase(
        CHECK,
        "state_weight_transposed",
        RNNStateWeightTransposed,
        "mistake",
        "I multiplied s_prev @ state_proj.weight (W_s, not W_s^T) for the row-vector state.",
    ),
    BlindCase(
        CHECK,
        "tanh_of_each_term",
        RNNTanhEachTerm,
        "mistake",
        "I took tanh of the input part and of the state part separately and added them.",
    ),
    BlindCase(
        CHECK,
        "residual_state",
        RNNResidualState,
        "mistake",
        "I added the previous state to the new one so that nothing is forgotten.",
    ),
    BlindCase(
        CHECK,
        "returns_output_and_state",
        RNNReturnsPair,
        "mistake",
        "I returned (s, s), an output and a state as nn.RNN does, not just the new state.",
    ),
    BlindCase(
        CHECK,
        "functional_linear",
        RNNFunctional,
        "correct",
        "F.linear with the layers' weights instead of calling the layers.",
    ),
    BlindCase(
        CHECK,
        "addmm_and_matmul",
        RNNMatmulAddmm,
        "correct",
        "torch.addmm for b + x W_in^T and an explicit matmul for the state.",
    ),
    BlindCase(
        CHECK,
        "optional_state_and_extras",
        RNNWithExtras,
        "correct",
        "s_prev defaults to zeros, a nonlinearity argument, its own init, an in-place += on a "
        "temporary.",
    ),
]
