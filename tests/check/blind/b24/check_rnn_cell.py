"""Blind set B24, check_rnn_cell (chapter 2): one step of a simple RNN as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_rnn_cell"


class _Cell(nn.Module):
    """The book's two layers; each case below changes only ``forward`` (or the layers)."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class CellNoTanh(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(s_prev)


class CellReLU(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))


class CellSigmoid(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.sigmoid(self.in_proj(x) + self.state_proj(s_prev))


class CellNoPreviousState(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x))


class CellNoInput(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.state_proj(s_prev) + self.in_proj.bias)


class CellTanhOnInputOnly(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x)) + self.state_proj(s_prev)


class CellStateBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # bias left at its default

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class CellNoBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size, bias=False)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class CellStateWeightTransposed(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + s_prev @ self.state_proj.weight)  # s W_s


class CellTanhTwice(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(torch.tanh(self.in_proj(x)) + self.state_proj(s_prev))


class CellReturnsPair(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> tuple[Tensor, Tensor]:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s, s  # (output, state), like nn.RNN


class CellOldStateMixedIn(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return s_prev + torch.tanh(self.in_proj(x) + self.state_proj(s_prev))  # keep the old


# ---------------------------------------------------------------- correct variants


class CellFunctional(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        pre = F.linear(x, self.in_proj.weight, self.in_proj.bias)
        pre = pre + s_prev @ self.state_proj.weight.T  # W_s s as a row-vector product
        return pre.tanh()


class CellInPlace(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        h = self.in_proj(x)  # a fresh tensor, safe to change in place
        if s_prev is not None:
            h.add_(self.state_proj(s_prev))
        return h.tanh_()


class CellAddmmOptions(nn.Module):
    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh"
    ) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, hidden_size, bias=bias)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.act = torch.tanh if nonlinearity == "tanh" else torch.relu

    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = x.new_zeros(x.shape[0], self.hidden_size)
        pre = torch.addmm(self.in_proj(x), s_prev, self.state_proj.weight.t())
        return self.act(pre)


CASES = [
    BlindCase(CHECK, "no_tanh", CellNoTanh, "mistake", "I forgot the tanh: the state is linear."),
    BlindCase(CHECK, "relu", CellReLU, "mistake", "I used ReLU instead of tanh."),
    BlindCase(CHECK, "sigmoid", CellSigmoid, "mistake", "I used a sigmoid instead of tanh."),
    BlindCase(
        CHECK,
        "previous_state_left_out",
        CellNoPreviousState,
        "mistake",
        "I wrote tanh(in_proj(x)) and never used s_prev.",
    ),
    BlindCase(
        CHECK,
        "input_left_out",
        CellNoInput,
        "mistake",
        "I only used the state and the bias, tanh(W_s s + b), and left x out.",
    ),
    BlindCase(
        CHECK,
        "tanh_on_input_only",
        CellTanhOnInputOnly,
        "mistake",
        "My parenthesis closed too early: tanh(W_in x + b) + W_s s.",
    ),
    BlindCase(
        CHECK,
        "state_proj_with_bias",
        CellStateBias,
        "mistake",
        "I left state_proj with nn.Linear's default bias=True, so there is a second bias.",
    ),
    BlindCase(
        CHECK,
        "in_proj_without_bias",
        CellNoBias,
        "mistake",
        "I made both layers bias=False, so the cell has no b.",
    ),
    BlindCase(
        CHECK,
        "state_weight_transposed",
        CellStateWeightTransposed,
        "mistake",
        "I wrote s_prev @ state_proj.weight, which multiplies by W_s transposed.",
    ),
    BlindCase(
        CHECK,
        "tanh_twice",
        CellTanhTwice,
        "mistake",
        "I squashed the input term with tanh first and then the sum again.",
    ),
    BlindCase(
        CHECK,
        "returns_output_and_state",
        CellReturnsPair,
        "mistake",
        "I return (output, state) as nn.RNN does, instead of the new state alone.",
    ),
    BlindCase(
        CHECK,
        "old_state_added",
        CellOldStateMixedIn,
        "mistake",
        "I added the previous state to the new one, s_prev + tanh(...), to keep the memory.",
    ),
    BlindCase(
        CHECK,
        "functional_row_vectors",
        CellFunctional,
        "correct",
        "F.linear for the input and s_prev @ W_s.T for the state, then .tanh().",
    ),
    BlindCase(
        CHECK,
        "in_place_on_fresh_tensor",
        CellInPlace,
        "correct",
        "add_ and tanh_ on the fresh in_proj output; s_prev may be None.",
    ),
    BlindCase(
        CHECK,
        "addmm_with_options",
        CellAddmmOptions,
        "correct",
        "torch.addmm for in_proj(x) + s W_s^T; extra bias and nonlinearity arguments with "
        "defaults, zeros when s_prev is None.",
    ),
]
