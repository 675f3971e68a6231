"""Blind cases for check_rnn_cell (chapter 2), written from the chapter's text only."""

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


# ---- mistakes -------------------------------------------------------------------------------


class NoTanh(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(s_prev)


class StateLeftOut(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x))


class InputLeftOut(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.state_proj(s_prev))


class StateProjWithBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # forgot bias=False

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class SigmoidInstead(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.sigmoid(self.in_proj(x) + self.state_proj(s_prev))


class TanhOnlyOnInput(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x)) + self.state_proj(s_prev)


class ReluInstead(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))


# ---- reader's slip ------------------------------------------------------------------------------


class _RightCell(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


_my_cell_instance = _RightCell(4, 8)


# ---- correct variants ---------------------------------------------------------------------------


class ExplicitMatmul(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = x @ self.in_proj.weight.T + self.in_proj.bias + s_prev @ self.state_proj.weight.T
        return torch.tanh(z)


class OptionalStateAndNonlinearity(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, nonlinearity: str = "tanh") -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, hidden_size, bias=True)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.f = torch.tanh if nonlinearity == "tanh" else torch.relu

    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = x.new_zeros(x.shape[0], self.hidden_size)
        return self.f(self.in_proj(x) + self.state_proj(s_prev))


class FunctionalAddmm(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = torch.addmm(self.in_proj.bias, x, self.in_proj.weight.t())
        z = z + F.linear(s_prev, self.state_proj.weight)
        return z.tanh()


CASES = [
    BlindCase(
        CHECK,
        "no_tanh",
        NoTanh,
        "mistake",
        "I returned in_proj(x) + state_proj(s_prev) without the tanh",
    ),
    BlindCase(
        CHECK,
        "state_left_out",
        StateLeftOut,
        "mistake",
        "I computed tanh(in_proj(x)) and never used the previous state",
    ),
    BlindCase(
        CHECK,
        "input_left_out",
        InputLeftOut,
        "mistake",
        "I computed tanh(state_proj(s_prev)) and forgot the input",
    ),
    BlindCase(
        CHECK,
        "state_proj_with_bias",
        StateProjWithBias,
        "mistake",
        "I forgot bias=False on state_proj, so the cell has a second bias",
    ),
    BlindCase(
        CHECK,
        "sigmoid_instead",
        SigmoidInstead,
        "mistake",
        "I used a sigmoid instead of tanh as the nonlinearity",
    ),
    BlindCase(
        CHECK,
        "tanh_only_on_input",
        TanhOnlyOnInput,
        "mistake",
        "I put the tanh around in_proj(x) only and added state_proj(s_prev) outside it",
    ),
    BlindCase(
        CHECK,
        "relu_instead",
        ReluInstead,
        "mistake",
        "I used ReLU as the nonlinearity instead of tanh",
    ),
    BlindCase(
        CHECK,
        "instance_passed",
        _my_cell_instance,
        "mistake",
        "I passed my built cell MyRNNCell(4, 8) to the check instead of the class",
    ),
    BlindCase(
        CHECK,
        "explicit_matmul",
        ExplicitMatmul,
        "correct",
        "I wrote the two products with the layers' weight matrices and bias by hand",
    ),
    BlindCase(
        CHECK,
        "optional_state_and_nonlinearity",
        OptionalStateAndNonlinearity,
        "correct",
        "I added an optional nonlinearity argument (default tanh) and a zero state when s_prev is None",
    ),
    BlindCase(
        CHECK,
        "functional_addmm",
        FunctionalAddmm,
        "correct",
        "I used torch.addmm for the input side and F.linear for the state side",
    ),
]
