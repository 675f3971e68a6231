"""Blind set B29, check_rnn_cell (chapter 2): one step s_t = tanh(W_in x_t + W_s s_{t-1} + b)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_rnn_cell"


class _Layers(nn.Module):
    """The two linear maps under the book's names, shared by the cells below."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class CellNoTanh(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(s_prev)  # f applied later, in the layer


class CellRelu(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))


class CellSigmoid(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.sigmoid(self.in_proj(x) + self.state_proj(s_prev))


class CellNoState(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x))


class CellStateBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # nn.Linear's default bias kept

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class CellTanhEachTerm(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x)) + torch.tanh(self.state_proj(s_prev))


class CellResidualState(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return s_prev + torch.tanh(self.in_proj(x) + self.state_proj(s_prev))  # keep the past


class CellWeightNotTransposed(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        W_in, b, W_s = self.in_proj.weight, self.in_proj.bias, self.state_proj.weight
        return torch.tanh(x @ W_in + s_prev @ W_s + b)  # x W_in + s W_s + b, as in the math


class CellKeepsOwnState(_Layers):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__(input_size, hidden_size)
        self.state: Tensor | None = None

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        if self.state is None or self.state.shape != s_prev.shape:
            self.state = torch.zeros_like(s_prev)  # the cell remembers its own state
        self.state = torch.tanh(self.in_proj(x) + self.state_proj(self.state))
        return self.state


class CellArgumentsSwapped(_Layers):
    def forward(self, s_prev: Tensor, x: Tensor) -> Tensor:  # state first, like nn.RNN's h
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class CellSizesSwapped(nn.Module):
    def __init__(self, hidden_size: int, input_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class CellTorchInside(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.cell = nn.RNNCell(input_size, hidden_size)  # PyTorch's own cell does the step

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.cell(x, s_prev)


# ---------------------------------------------------------------- correct variants


class CellOneMatrix(_Layers):
    """The "shared MLP" view: one product with [W_in W_s] on the concatenation [x; s]."""

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        W = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)  # (H, D_in + H)
        return torch.tanh(F.linear(torch.cat([x, s_prev], dim=-1), W, self.in_proj.bias))


class CellInPlace(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = self.in_proj(x)
        z += self.state_proj(s_prev)
        return z.tanh_()


class CellWithOptions(nn.Module):
    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh"
    ) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.f = torch.tanh if nonlinearity == "tanh" else torch.relu
        self.in_proj = nn.Linear(input_size, hidden_size, bias=bias)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = x.new_zeros(x.shape[0], self.hidden_size)
        return self.f(self.in_proj(x) + self.state_proj(s_prev))


class CellEinsum(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = torch.einsum("bi,hi->bh", x, self.in_proj.weight)
        z = z + torch.einsum("bj,hj->bh", s_prev, self.state_proj.weight) + self.in_proj.bias
        return torch.tanh(z)


CASES = [
    BlindCase(CHECK, "no_tanh", CellNoTanh, "mistake", "I left out the tanh."),
    BlindCase(
        CHECK,
        "relu",
        CellRelu,
        "mistake",
        "The notes only write f, so I used ReLU instead of tanh.",
    ),
    BlindCase(
        CHECK,
        "sigmoid",
        CellSigmoid,
        "mistake",
        "I squashed with a sigmoid instead of tanh.",
    ),
    BlindCase(
        CHECK,
        "state_left_out",
        CellNoState,
        "mistake",
        "My step only uses the input: tanh(W_in x + b), the previous state is never read.",
    ),
    BlindCase(
        CHECK,
        "state_proj_with_bias",
        CellStateBias,
        "mistake",
        "I kept nn.Linear's default bias on state_proj, so the step adds a second bias.",
    ),
    BlindCase(
        CHECK,
        "tanh_on_each_term",
        CellTanhEachTerm,
        "mistake",
        "I applied tanh to each of the two terms and added the results.",
    ),
    BlindCase(
        CHECK,
        "adds_previous_state",
        CellResidualState,
        "mistake",
        "I returned s_prev + tanh(...), so the new state also keeps the old one.",
    ),
    BlindCase(
        CHECK,
        "weights_not_transposed",
        CellWeightNotTransposed,
        "mistake",
        "I wrote x @ W_in + s @ W_s + b with the layers' weights, forgetting that nn.Linear "
        "stores them as (out, in).",
    ),
    BlindCase(
        CHECK,
        "keeps_own_state",
        CellKeepsOwnState,
        "mistake",
        "My cell remembers its state in self.state and ignores the s_prev it is given.",
    ),
    BlindCase(
        CHECK,
        "forward_state_first",
        CellArgumentsSwapped,
        "mistake",
        "I wrote forward(self, s_prev, x), with the state first.",
    ),
    BlindCase(
        CHECK,
        "init_sizes_swapped",
        CellSizesSwapped,
        "mistake",
        "My __init__ takes (hidden_size, input_size), the other order.",
    ),
    BlindCase(
        CHECK,
        "torch_rnncell_inside",
        CellTorchInside,
        "mistake",
        "I wrapped nn.RNNCell, so there are no in_proj and state_proj layers.",
    ),
    BlindCase(
        CHECK,
        "one_matrix_on_concat",
        CellOneMatrix,
        "correct",
        "One product of [x; s_prev] with the two weights concatenated, F.linear with the bias.",
    ),
    BlindCase(
        CHECK,
        "in_place_sum",
        CellInPlace,
        "correct",
        "The sum built with += and squashed with tanh_() in place.",
    ),
    BlindCase(
        CHECK,
        "options_and_default_state",
        CellWithOptions,
        "correct",
        "Extra bias and nonlinearity arguments with defaults; s_prev defaults to zeros.",
    ),
    BlindCase(
        CHECK,
        "einsum",
        CellEinsum,
        "correct",
        "Both products written with einsum on the layers' weights.",
    ),
]
