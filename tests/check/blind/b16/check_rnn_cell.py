"""Blind set B16, check_rnn_cell (chapter 2): one step of a simple RNN as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_rnn_cell"


class _Layers(nn.Module):
    """The two layers under the book's names; the subclasses write their own forward."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class CellNoTanh(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(s_prev)  # linear is enough for one step


class CellRelu(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))  # ReLU, as in an MLP


class CellIgnoresState(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x))  # the state only matters in the layer, not here


class CellTanhPerTerm(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x)) + torch.tanh(self.state_proj(s_prev))


class CellStateBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # default bias=True kept

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class CellBiasTwice(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        b = self.in_proj.bias  # the b of the formula
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev) + b)


class CellDetachedState(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        s_prev = s_prev.detach()  # cut the graph so long sequences fit in memory
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class CellReturnsPair(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> tuple[Tensor, Tensor]:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s, s  # (output, new state), as nn.RNN returns them


class CellLastLayerOfState(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        s_prev = s_prev[-1]  # the last layer of the state, as for nn.RNN's (layers, B, H)
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


# ---------------------------------------------------------------- correct variants


class CellOneMatrix(_Layers):
    """The "shared MLP" view: one matrix [W_in W_s] on the concatenation [x; s]."""

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        W = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)  # (H, D_in + H)
        return torch.tanh(torch.cat([x, s_prev], dim=1) @ W.T + self.in_proj.bias)


class CellAddmm(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = torch.addmm(self.in_proj.bias, x, self.in_proj.weight.t())  # b + x W_in^T
        z = torch.addmm(z, s_prev, self.state_proj.weight.t())  # + s W_s^T
        return F.tanh(z)


class CellWithDefaults(nn.Module):
    """Optional s_prev (zeros), a nonlinearity argument, in-place ops on its own temporary."""

    def __init__(self, input_size: int, hidden_size: int, nonlinearity: str = "tanh") -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.nonlinearity = nonlinearity
        self.in_proj = nn.Linear(input_size, hidden_size, bias=True)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def init_state(self, x: Tensor) -> Tensor:
        return x.new_zeros(x.shape[0], self.hidden_size)

    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = self.init_state(x)
        z = self.in_proj(x)
        z += self.state_proj(s_prev)
        return z.tanh_() if self.nonlinearity == "tanh" else z.relu_()


CASES = [
    BlindCase(
        CHECK,
        "no_tanh",
        CellNoTanh,
        "mistake",
        "I returned in_proj(x) + state_proj(s_prev) without the tanh.",
    ),
    BlindCase(
        CHECK,
        "relu_instead_of_tanh",
        CellRelu,
        "mistake",
        "I used ReLU as the nonlinearity, as in the MLPs I know.",
    ),
    BlindCase(
        CHECK,
        "previous_state_ignored",
        CellIgnoresState,
        "mistake",
        "My step only uses the input: tanh(in_proj(x)); state_proj is never called.",
    ),
    BlindCase(
        CHECK,
        "tanh_on_each_term",
        CellTanhPerTerm,
        "mistake",
        "I took the tanh of each term separately and added them: tanh(W_in x + b) + tanh(W_s s).",
    ),
    BlindCase(
        CHECK,
        "bias_on_state_proj",
        CellStateBias,
        "mistake",
        "I left state_proj with nn.Linear's default bias, so the step adds a second bias.",
    ),
    BlindCase(
        CHECK,
        "bias_added_twice",
        CellBiasTwice,
        "mistake",
        "I added in_proj.bias by hand as the b of the formula, but in_proj already adds it.",
    ),
    BlindCase(
        CHECK,
        "state_detached",
        CellDetachedState,
        "mistake",
        "I detached s_prev to save memory, so no gradient flows back through time.",
    ),
    BlindCase(
        CHECK,
        "returns_output_and_state",
        CellReturnsPair,
        "mistake",
        "I returned (output, state) like nn.RNN instead of the new state alone.",
    ),
    BlindCase(
        CHECK,
        "state_indexed_as_layers",
        CellLastLayerOfState,
        "mistake",
        "I took s_prev[-1] as if the state were (num_layers, B, H); with a (B, H) state this is "
        "the last sequence's state, used for the whole batch.",
    ),
    BlindCase(
        CHECK,
        "one_matrix_on_concatenation",
        CellOneMatrix,
        "correct",
        "Concatenates [x; s_prev] and multiplies by the concatenated weights [W_in W_s].",
    ),
    BlindCase(
        CHECK,
        "addmm",
        CellAddmm,
        "correct",
        "Two torch.addmm calls on the layers' weights and F.tanh.",
    ),
    BlindCase(
        CHECK,
        "defaults_and_in_place",
        CellWithDefaults,
        "correct",
        "s_prev optional (zeros), a nonlinearity argument defaulting to tanh, a helper method, "
        "and += / tanh_ on its own temporary.",
    ),
]
