"""Blind set B17, check_rnn_cell (chapter 2): one step of a simple RNN as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_rnn_cell"


class _Base(nn.Module):
    """The right layers; each mistake below changes only ``forward``."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class RNNCellNoTanh(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(s_prev)  # the nonlinearity comes later, I thought


class RNNCellSigmoid(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.sigmoid(self.in_proj(x) + self.state_proj(s_prev))


class RNNCellRelu(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return F.relu(self.in_proj(x) + self.state_proj(s_prev))


class RNNCellNoState(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x))  # s_prev only sets the shape at the first step


class RNNCellTanhOnInputOnly(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x)) + self.state_proj(s_prev)


class RNNCellStateWeightNotTransposed(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + s_prev @ self.state_proj.weight)  # W_s s, as written


class RNNCellResidual(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return s_prev + torch.tanh(self.in_proj(x) + self.state_proj(s_prev))  # keep the old memory


class RNNCellReturnsPair(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> tuple[Tensor, Tensor]:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s, s  # (output, state), like nn.RNN


class RNNCellTwoBiases(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # b_ih and b_hh, as in PyTorch

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNCellNoBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size, bias=False)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNCellDetachedState(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        s_prev = s_prev.detach()  # so backprop does not go back through every step
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


# ---------------------------------------------------------------- correct variants


class RNNCellFunctional(_Base):
    """F.linear on the layers' own weights; a default zero state."""

    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = torch.zeros(x.shape[0], self.state_proj.out_features, dtype=x.dtype)
        pre = F.linear(x, self.in_proj.weight, self.in_proj.bias)
        pre = pre + F.linear(s_prev, self.state_proj.weight)
        return pre.tanh()


class RNNCellConcat(_Base):
    """One matrix product on [x; s] with the two weight matrices side by side."""

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        W = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)  # (H, D_in + H)
        xs = torch.cat([x, s_prev], dim=-1)  # (B, D_in + H)
        return torch.tanh(torch.addmm(self.in_proj.bias, xs, W.t()))


class RNNCellOptions(nn.Module):
    """Extra constructor options with defaults, a helper method, and an in-place tanh on a
    temporary of its own."""

    def __init__(
        self, input_size: int, hidden_size: int, nonlinearity: str = "tanh", bias: bool = True
    ) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.nonlinearity = nonlinearity
        self.in_proj = nn.Linear(input_size, hidden_size, bias=bias)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def init_state(self, batch_size: int, like: Tensor) -> Tensor:
        return like.new_zeros(batch_size, self.hidden_size)

    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = self.init_state(x.shape[0], x)
        pre = self.in_proj(x)
        pre += self.state_proj(s_prev)
        return pre.tanh_() if self.nonlinearity == "tanh" else pre.relu_()


class RNNCellEinsum(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        a = torch.einsum("hd,bd->bh", self.in_proj.weight, x) + self.in_proj.bias
        b = torch.einsum("hk,bk->bh", self.state_proj.weight, s_prev)
        return torch.tanh(a + b)


CASES = [
    BlindCase(CHECK, "no_tanh", RNNCellNoTanh, "mistake", "I left out the tanh."),
    BlindCase(
        CHECK, "sigmoid", RNNCellSigmoid, "mistake", "I squashed with a sigmoid instead of tanh."
    ),
    BlindCase(CHECK, "relu", RNNCellRelu, "mistake", "I used a ReLU instead of tanh."),
    BlindCase(
        CHECK,
        "previous_state_left_out",
        RNNCellNoState,
        "mistake",
        "My step reads only the input; the previous state is never used.",
    ),
    BlindCase(
        CHECK,
        "tanh_on_input_only",
        RNNCellTanhOnInputOnly,
        "mistake",
        "I put the tanh around the input term only and added W_s s afterwards.",
    ),
    BlindCase(
        CHECK,
        "state_weight_not_transposed",
        RNNCellStateWeightNotTransposed,
        "mistake",
        "I multiplied s_prev by state_proj.weight directly, which uses W_s transposed.",
    ),
    BlindCase(
        CHECK,
        "adds_previous_state",
        RNNCellResidual,
        "mistake",
        "I added the previous state to the new one, to keep the memory.",
    ),
    BlindCase(
        CHECK,
        "returns_output_and_state",
        RNNCellReturnsPair,
        "mistake",
        "I return (output, state) like nn.RNN instead of the new state alone.",
    ),
    BlindCase(
        CHECK,
        "two_biases",
        RNNCellTwoBiases,
        "mistake",
        "I gave state_proj a bias too, like PyTorch's b_hh.",
    ),
    BlindCase(
        CHECK,
        "no_bias",
        RNNCellNoBias,
        "mistake",
        "I made both linear layers without a bias.",
    ),
    BlindCase(
        CHECK,
        "previous_state_detached",
        RNNCellDetachedState,
        "mistake",
        "I detached s_prev inside the cell, so no gradient flows back to earlier steps.",
    ),
    BlindCase(
        CHECK,
        "functional_linear",
        RNNCellFunctional,
        "correct",
        "F.linear with the layers' weights, and s_prev defaulting to zeros.",
    ),
    BlindCase(
        CHECK,
        "concat_addmm",
        RNNCellConcat,
        "correct",
        "One addmm on [x; s_prev] with the two weight matrices concatenated.",
    ),
    BlindCase(
        CHECK,
        "options_and_helper",
        RNNCellOptions,
        "correct",
        "Extra nonlinearity and bias arguments with defaults, an init_state helper, in-place += "
        "and tanh_ on its own temporary.",
    ),
    BlindCase(
        CHECK,
        "einsum",
        RNNCellEinsum,
        "correct",
        "einsum with the weights and the bias added by hand.",
    ),
]
