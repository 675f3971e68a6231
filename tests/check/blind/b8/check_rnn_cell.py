"""Blind set B8, check_rnn_cell (chapter 2): one step of a simple RNN, s = tanh(W_in x + W_s s)."""

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


# ---------------------------------------------------------------- mistakes


class NoTanh(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(s_prev)


class SigmoidActivation(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.sigmoid(self.in_proj(x) + self.state_proj(s_prev))


class ReluActivation(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return F.relu(self.in_proj(x) + self.state_proj(s_prev))


class StateProjWithBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # default bias=True

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class PreviousStateIgnored(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x))


class InputIgnored(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.state_proj(s_prev))


class TanhOnEachTerm(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x)) + torch.tanh(self.state_proj(s_prev))


class StateWeightNotTransposed(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        # (B, H) @ (H, H): runs because W_s is square, but computes s W_s, i.e. W_s^T s
        return torch.tanh(self.in_proj(x) + s_prev @ self.state_proj.weight)


class ResidualState(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return s_prev + torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class SquashedPreviousState(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(torch.tanh(s_prev)))


# ---------------------------------------------------------------- correct variants


class ConcatOneMatrix(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        W = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)  # (H, D_in + H)
        xs = torch.cat([x, s_prev], dim=-1)  # (B, D_in + H)
        return torch.tanh(xs @ W.T + self.in_proj.bias)


class InPlaceTanh(_Base):
    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = x.new_zeros(x.shape[0], self.state_proj.in_features)
        z = self.in_proj(x)
        z += self.state_proj(s_prev)  # z is a fresh tensor, safe to update
        return z.tanh_()


class TanhModuleAndFLinear(_Base):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__(input_size, hidden_size)
        self.act = nn.Tanh()

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = F.linear(x, self.in_proj.weight, self.in_proj.bias)
        return self.act(z + F.linear(s_prev, self.state_proj.weight))


CASES = [
    BlindCase(
        CHECK,
        "no_tanh",
        NoTanh,
        "mistake",
        "I returned in_proj(x) + state_proj(s_prev) and forgot the tanh",
    ),
    BlindCase(
        CHECK,
        "sigmoid_activation",
        SigmoidActivation,
        "mistake",
        "I used torch.sigmoid as the nonlinearity instead of tanh",
    ),
    BlindCase(
        CHECK,
        "relu_activation",
        ReluActivation,
        "mistake",
        "I used ReLU instead of tanh (the chapter mentions relu as an option)",
    ),
    BlindCase(
        CHECK,
        "state_proj_with_bias",
        StateProjWithBias,
        "mistake",
        "I left state_proj with nn.Linear's default bias, so there are two biases",
    ),
    BlindCase(
        CHECK,
        "previous_state_ignored",
        PreviousStateIgnored,
        "mistake",
        "I only used tanh(in_proj(x)) and never added state_proj(s_prev)",
    ),
    BlindCase(
        CHECK,
        "input_ignored",
        InputIgnored,
        "mistake",
        "I only used tanh(state_proj(s_prev)) and left out the input x",
    ),
    BlindCase(
        CHECK,
        "tanh_on_each_term",
        TanhOnEachTerm,
        "mistake",
        "I applied tanh to each of the two terms separately and added the results",
    ),
    BlindCase(
        CHECK,
        "state_weight_not_transposed",
        StateWeightNotTransposed,
        "mistake",
        "I wrote s_prev @ state_proj.weight by hand and forgot the .T (it runs since "
        "W_s is square)",
    ),
    BlindCase(
        CHECK,
        "residual_state",
        ResidualState,
        "mistake",
        "I added the previous state back: s_prev + tanh(...), like a residual",
    ),
    BlindCase(
        CHECK,
        "squashed_previous_state",
        SquashedPreviousState,
        "mistake",
        "I passed the previous state through tanh again before state_proj",
    ),
    BlindCase(
        CHECK,
        "concat_one_matrix",
        ConcatOneMatrix,
        "correct",
        "the chapter's 'one MLP' view: [x; s] times the concatenated [W_in W_s], plus b",
    ),
    BlindCase(
        CHECK,
        "in_place_tanh",
        InPlaceTanh,
        "correct",
        "z += state_proj(s) and z.tanh_() in place on a fresh tensor; s_prev optional",
    ),
    BlindCase(
        CHECK,
        "tanh_module_and_f_linear",
        TanhModuleAndFLinear,
        "correct",
        "F.linear with the layers' weights and an nn.Tanh module",
    ),
]
