"""Blind set B20, check_rnn_cell (chapter 2): one step of a simple RNN as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_rnn_cell"


class _Base(nn.Module):
    """The two layers under the book's names, as every reader builds them."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class RNNNoTanh(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(s_prev)  # the linear part is the new state


class RNNRelu(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))


class RNNSigmoid(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.sigmoid(self.in_proj(x) + self.state_proj(s_prev))


class RNNNoState(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x))  # the state comes in through the loop


class RNNNoInput(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.state_proj(s_prev) + self.in_proj.bias)


class RNNTanhOnInputOnly(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x)) + self.state_proj(s_prev)


class RNNStateBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # both linear maps with a bias

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNResidual(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return s_prev + torch.tanh(self.in_proj(x) + self.state_proj(s_prev))  # update the state


class RNNMultiply(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) * self.state_proj(s_prev))


class RNNTanhTwice(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(torch.tanh(x)) + self.state_proj(s_prev))  # squash x too


class RNNReturnsPair(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> tuple[Tensor, Tensor]:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s, s  # output and state, like nn.RNN


class RNNWeightNotTransposed(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = F.linear(x, self.in_proj.weight, self.in_proj.bias)
        return torch.tanh(z + s_prev @ self.state_proj.weight)  # W_s s as a row vector


# ---------------------------------------------------------------- correct variants


class RNNFunctional(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = F.linear(x, self.in_proj.weight, self.in_proj.bias)
        z = z + F.linear(s_prev, self.state_proj.weight)
        return z.tanh_()  # in place on my own temporary


class RNNAddmm(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, hidden_size, bias=True)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.act = nn.Tanh()

    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = torch.zeros(x.shape[0], self.hidden_size, dtype=x.dtype)
        z = torch.addmm(self.in_proj.bias, x, self.in_proj.weight.t())
        z = torch.addmm(z, s_prev, self.state_proj.weight.t())
        return self.act(z)


class RNNEinsum(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        a = torch.einsum("bi,hi->bh", x, self.in_proj.weight) + self.in_proj.bias
        b = torch.einsum("bj,hj->bh", s_prev, self.state_proj.weight)
        return torch.tanh(b + a)


class RNNCatWeights(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        W = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)  # (H, D_in + H)
        xs = torch.cat([x, s_prev], dim=1)  # (B, D_in + H)
        return torch.tanh(xs @ W.T + self.in_proj.bias)


CASES = [
    BlindCase(CHECK, "no_tanh", RNNNoTanh, "mistake", "I forgot the tanh."),
    BlindCase(CHECK, "relu", RNNRelu, "mistake", "I used ReLU as the nonlinearity."),
    BlindCase(CHECK, "sigmoid", RNNSigmoid, "mistake", "I used a sigmoid instead of tanh."),
    BlindCase(
        CHECK, "no_state", RNNNoState, "mistake", "I left the previous state out of the step."
    ),
    BlindCase(
        CHECK,
        "no_input",
        RNNNoInput,
        "mistake",
        "I only kept the bias of in_proj and forgot W_in x.",
    ),
    BlindCase(
        CHECK,
        "tanh_on_input_only",
        RNNTanhOnInputOnly,
        "mistake",
        "My tanh closes too early: tanh(W_in x + b) + W_s s.",
    ),
    BlindCase(
        CHECK,
        "state_proj_bias",
        RNNStateBias,
        "mistake",
        "I gave state_proj a bias as well.",
    ),
    BlindCase(
        CHECK,
        "residual_state",
        RNNResidual,
        "mistake",
        "I added the new value to the previous state.",
    ),
    BlindCase(
        CHECK,
        "multiply",
        RNNMultiply,
        "mistake",
        "I multiplied the two projections instead of adding them.",
    ),
    BlindCase(
        CHECK,
        "tanh_on_x",
        RNNTanhTwice,
        "mistake",
        "I also squashed the input with tanh before in_proj.",
    ),
    BlindCase(
        CHECK,
        "returns_pair",
        RNNReturnsPair,
        "mistake",
        "I returned (output, state) like nn.RNN instead of the state alone.",
    ),
    BlindCase(
        CHECK,
        "state_weight_not_transposed",
        RNNWeightNotTransposed,
        "mistake",
        "I wrote s_prev @ state_proj.weight, without the transpose.",
    ),
    BlindCase(
        CHECK,
        "functional_inplace_tanh",
        RNNFunctional,
        "correct",
        "F.linear with the layers' weights and an in-place tanh_ on my own sum.",
    ),
    BlindCase(
        CHECK,
        "addmm_optional_state",
        RNNAddmm,
        "correct",
        "torch.addmm twice, an nn.Tanh module, and s_prev optional (zeros).",
    ),
    BlindCase(CHECK, "einsum", RNNEinsum, "correct", "The two products written with einsum."),
    BlindCase(
        CHECK,
        "concatenated_weights",
        RNNCatWeights,
        "correct",
        "I concatenated [W_in W_s] and [x; s] and did one product.",
    ),
]
