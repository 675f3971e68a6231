"""Blind set B9, check_rnn_cell (chapter 2): one step of a simple recurrent network."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_rnn_cell"


class _Base(nn.Module):
    """The two layers as the book names them; each mistake only changes ``forward``."""

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


class RNNStateBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # forgot bias=False

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNNoState(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x))


class RNNTanhOnStateOnly(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + torch.tanh(self.state_proj(s_prev))


class RNNWeightNotTransposed(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + s_prev @ self.state_proj.weight)  # W_s s as s @ W


class RNNResidual(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return s_prev + torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNReturnsPair(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> tuple[Tensor, Tensor]:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s, s  # (output, state), like nn.RNN


class RNNInputOnlyInTanh(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x)) + self.state_proj(s_prev)


# ---------------------------------------------------------------- correct variants


class RNNManualMatmul(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = x @ self.in_proj.weight.T + self.in_proj.bias + s_prev @ self.state_proj.weight.T
        return torch.tanh(z)


class RNNFunctionalLinear(_Base):
    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = x.new_zeros(x.shape[0], self.state_proj.in_features)
        return (
            F.linear(x, self.in_proj.weight, self.in_proj.bias)
            .add(F.linear(s_prev, self.state_proj.weight))
            .tanh()
        )


class RNNAddmm(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = torch.addmm(self.in_proj.bias, x, self.in_proj.weight.t())
        z = torch.addmm(z, s_prev, self.state_proj.weight.t())
        return torch.tanh(z)


class RNNFloat64Inside(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = self.in_proj(x).double() + self.state_proj(s_prev).double()
        return torch.tanh(z).to(x.dtype)


CASES = [
    BlindCase(
        CHECK,
        "no_tanh",
        RNNNoTanh,
        "mistake",
        "I returned in_proj(x) + state_proj(s_prev) and forgot the tanh.",
    ),
    BlindCase(
        CHECK,
        "relu_instead_of_tanh",
        RNNRelu,
        "mistake",
        "I used ReLU as the nonlinearity instead of tanh.",
    ),
    BlindCase(
        CHECK,
        "sigmoid_instead_of_tanh",
        RNNSigmoid,
        "mistake",
        "I used a sigmoid as the nonlinearity instead of tanh.",
    ),
    BlindCase(
        CHECK,
        "state_proj_with_bias",
        RNNStateBias,
        "mistake",
        "I left nn.Linear's default bias on state_proj, so there are two biases.",
    ),
    BlindCase(
        CHECK,
        "previous_state_ignored",
        RNNNoState,
        "mistake",
        "I computed tanh(in_proj(x)) and never used s_prev.",
    ),
    BlindCase(
        CHECK,
        "tanh_on_state_term_only",
        RNNTanhOnStateOnly,
        "mistake",
        "I put the tanh around state_proj(s_prev) only and added in_proj(x) outside it.",
    ),
    BlindCase(
        CHECK,
        "state_weight_not_transposed",
        RNNWeightNotTransposed,
        "mistake",
        "I wrote s_prev @ state_proj.weight, forgetting that nn.Linear stores W "
        "transposed (it needs .T).",
    ),
    BlindCase(
        CHECK,
        "residual_added",
        RNNResidual,
        "mistake",
        "I added s_prev back to the new state (a skip connection) after the tanh.",
    ),
    BlindCase(
        CHECK,
        "returns_output_and_state",
        RNNReturnsPair,
        "mistake",
        "I returned the pair (output, state) like nn.RNN instead of the new state alone.",
    ),
    BlindCase(
        CHECK,
        "tanh_on_input_term_only",
        RNNInputOnlyInTanh,
        "mistake",
        "I applied tanh to in_proj(x) only and added state_proj(s_prev) after it.",
    ),
    BlindCase(
        CHECK,
        "manual_matmul",
        RNNManualMatmul,
        "correct",
        "I wrote the matrix products myself with .weight.T and .bias.",
    ),
    BlindCase(
        CHECK,
        "functional_linear_default_state",
        RNNFunctionalLinear,
        "correct",
        "I used F.linear and .tanh(), and s_prev defaults to zeros when None.",
    ),
    BlindCase(
        CHECK,
        "addmm",
        RNNAddmm,
        "correct",
        "I chained two torch.addmm calls to accumulate bias, W_in x and W_s s.",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        RNNFloat64Inside,
        "correct",
        "I added the two terms in float64 and cast the result back to x's dtype.",
    ),
]
