"""Blind set B10, check_rnn_cell (chapter 2): one step of a simple RNN as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_rnn_cell"


class _Base(nn.Module):
    """The two linear maps under the book's names; each mistake only changes ``forward``."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class RNNNoTanh(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(s_prev)  # the linear part of the formula


class RNNRelu(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))


class RNNSigmoid(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.sigmoid(self.in_proj(x) + self.state_proj(s_prev))  # keeps it bounded


class RNNForgetsState(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x))  # s_prev is only for the shape


class RNNForgetsInput(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.state_proj(s_prev) + self.in_proj.bias)


class RNNStateWeightNotTransposed(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        W_s = self.state_proj.weight  # (H, H)
        return torch.tanh(self.in_proj(x) + s_prev @ W_s)  # "W_s s" with row vectors


class RNNTanhOnStateOnly(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + torch.tanh(self.state_proj(s_prev))


class RNNAddsOldState(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return s_prev + torch.tanh(self.in_proj(x) + self.state_proj(s_prev))  # keep the memory


class RNNStateProjWithBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # bias left at its default

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNReturnsPair(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> tuple[Tensor, Tensor]:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s, s  # (output, new state), like nn.RNN


class RNNDetachedState(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        s_prev = s_prev.detach()  # truncated backprop: no gradient into the past
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


# ---------------------------------------------------------------- correct variants


class RNNConcatenated(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        """The "one shared MLP" view: one product with [W_in W_s] on [x; s_prev]."""
        W = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)  # (H, D_in + H)
        xs = torch.cat([x, s_prev], dim=-1)  # (B, D_in + H)
        return torch.tanh(xs @ W.T + self.in_proj.bias)


class RNNOptionalState(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, nonlinearity: str = "tanh") -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.nonlinearity = nonlinearity
        self.in_proj = nn.Linear(input_size, hidden_size, bias=True)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.init_weights()

    def init_weights(self) -> None:
        for p in self.parameters():
            nn.init.uniform_(p, -1 / math.sqrt(self.hidden_size), 1 / math.sqrt(self.hidden_size))

    def init_state(self, batch_size: int) -> Tensor:
        return torch.zeros(batch_size, self.hidden_size)

    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = self.init_state(x.shape[0]).to(x)
        f = torch.tanh if self.nonlinearity == "tanh" else torch.relu
        return f(self.in_proj(x) + self.state_proj(s_prev))


class RNNFunctional(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        pre = F.linear(x, self.in_proj.weight, self.in_proj.bias)
        pre = pre + F.linear(s_prev, self.state_proj.weight)
        return pre.tanh_()  # in place on my own temporary


class RNNAddmm(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        pre = torch.addmm(self.in_proj.bias, x, self.in_proj.weight.t())  # b + x W_in^T
        pre = torch.addmm(pre, s_prev, self.state_proj.weight.t())
        return 2 * torch.sigmoid(2 * pre) - 1  # tanh(z) = 2 sigmoid(2z) - 1


CASES = [
    BlindCase(CHECK, "no_tanh", RNNNoTanh, "mistake", "I forgot the tanh around the sum."),
    BlindCase(
        CHECK, "relu", RNNRelu, "mistake", "I used ReLU as the nonlinearity instead of tanh."
    ),
    BlindCase(
        CHECK,
        "sigmoid",
        RNNSigmoid,
        "mistake",
        "I used a sigmoid to keep the state bounded instead of tanh.",
    ),
    BlindCase(
        CHECK,
        "state_left_out",
        RNNForgetsState,
        "mistake",
        "I computed tanh(in_proj(x)) and never used the previous state.",
    ),
    BlindCase(
        CHECK,
        "input_left_out",
        RNNForgetsInput,
        "mistake",
        "I only used the previous state and the bias, not the input x.",
    ),
    BlindCase(
        CHECK,
        "state_weight_not_transposed",
        RNNStateWeightNotTransposed,
        "mistake",
        "I wrote s_prev @ state_proj.weight by hand, which multiplies by W_s transposed.",
    ),
    BlindCase(
        CHECK,
        "tanh_on_state_only",
        RNNTanhOnStateOnly,
        "mistake",
        "I put the tanh only around the state term and added in_proj(x) outside it.",
    ),
    BlindCase(
        CHECK,
        "adds_old_state",
        RNNAddsOldState,
        "mistake",
        "I added the old state to the new one (s_prev + tanh(...)) so that memory is kept.",
    ),
    BlindCase(
        CHECK,
        "state_proj_bias",
        RNNStateProjWithBias,
        "mistake",
        "I left state_proj with nn.Linear's default bias, so there are two biases.",
    ),
    BlindCase(
        CHECK,
        "returns_pair",
        RNNReturnsPair,
        "mistake",
        "I return (output, state) like nn.RNN, instead of the new state alone.",
    ),
    BlindCase(
        CHECK,
        "detached_state",
        RNNDetachedState,
        "mistake",
        "I detached s_prev inside the cell, so no gradient flows back to the previous state.",
    ),
    BlindCase(
        CHECK,
        "concatenated_weights",
        RNNConcatenated,
        "correct",
        "One product of [x; s_prev] with the concatenated weights [W_in W_s], plus the bias.",
    ),
    BlindCase(
        CHECK,
        "optional_state_and_helpers",
        RNNOptionalState,
        "correct",
        "s_prev defaults to zeros; an extra nonlinearity argument, an init method and an "
        "init_state helper.",
    ),
    BlindCase(
        CHECK,
        "functional_inplace_tanh",
        RNNFunctional,
        "correct",
        "F.linear with the layers' weights, and tanh_ in place on the pre-activation.",
    ),
    BlindCase(
        CHECK,
        "addmm_sigmoid_tanh",
        RNNAddmm,
        "correct",
        "torch.addmm for both products, and tanh written as 2 sigmoid(2z) - 1.",
    ),
]
