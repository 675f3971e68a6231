"""Blind set B27, check_rnn_cell (chapter 2): one step of a simple RNN as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_rnn_cell"


class _Cell(nn.Module):
    """The two layers as the chapter names them; the mistakes below differ in forward."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class RNNCellReLU(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))


class RNNCellSigmoid(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.sigmoid(self.in_proj(x) + self.state_proj(s_prev))  # a gate-like squash


class RNNCellTanhOnInputOnly(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x)) + self.state_proj(s_prev)


class RNNCellStateBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # as nn.RNN has bias_hh

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNCellTransposedStateWeight(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        W_s = self.state_proj.weight  # (H, H)
        return torch.tanh(self.in_proj(x) + s_prev @ W_s)  # W_s s, with row vectors


class RNNCellLayersCrossed(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.state_proj(x) + self.in_proj(s_prev))


class RNNCellReturnsPair(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> tuple[Tensor, Tensor]:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s, s  # (output, new state), like nn.RNN


class RNNCellStateFirst(_Cell):
    def forward(
        self, s_prev: Tensor, x: Tensor
    ) -> Tensor:  # the state comes first in S_t's formula
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNCellSizesSwapped(nn.Module):
    def __init__(self, hidden_size: int, input_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNCellKeepsItsState(_Cell):
    """Remembers its own state between calls, so a loop need not pass it back."""

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        if getattr(self, "state", None) is None or self.state.shape != s_prev.shape:
            self.state = s_prev
        self.state = torch.tanh(self.in_proj(x) + self.state_proj(self.state))
        return self.state


class RNNCellDetachedState(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        s_prev = s_prev.detach()  # truncated backpropagation: do not go back through time
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNCellAveraged(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh((self.in_proj(x) + self.state_proj(s_prev)) / 2)  # mean of the two


class RNNCellOldStateAdded(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return s_prev + torch.tanh(self.in_proj(x) + self.state_proj(s_prev))  # update the state


# ---------------------------------------------------------------- correct variants


class RNNCellFunctional(nn.Module):
    """The weights used through F.linear, and s_prev optional (zeros)."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, hidden_size, bias=True)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = x.new_zeros(x.shape[0], self.hidden_size)
        pre = F.linear(x, self.in_proj.weight, self.in_proj.bias)
        pre = pre + F.linear(s_prev, self.state_proj.weight)
        return pre.tanh()


class RNNCellAddmm(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        pre = torch.addmm(self.in_proj.bias, x, self.in_proj.weight.t())  # b + x W_in^T
        pre = torch.addmm(pre, s_prev, self.state_proj.weight.t())
        return torch.tanh(pre)


class RNNCellWithNonlinearity(nn.Module):
    """An extra nonlinearity argument with the chapter's default."""

    def __init__(self, input_size: int, hidden_size: int, nonlinearity: str = "tanh") -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.act = nn.Tanh() if nonlinearity == "tanh" else nn.ReLU()

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        state_part = self.state_proj(s_prev)
        return self.act(state_part + self.in_proj(x))


CASES = [
    BlindCase(
        CHECK,
        "relu_instead_of_tanh",
        RNNCellReLU,
        "mistake",
        "I used ReLU as the nonlinearity instead of tanh.",
    ),
    BlindCase(
        CHECK,
        "sigmoid_instead_of_tanh",
        RNNCellSigmoid,
        "mistake",
        "I squashed the new state with a sigmoid instead of tanh.",
    ),
    BlindCase(
        CHECK,
        "tanh_on_input_term_only",
        RNNCellTanhOnInputOnly,
        "mistake",
        "I put the tanh around W_in x + b only and added W_s s_prev outside it.",
    ),
    BlindCase(
        CHECK,
        "state_proj_with_bias",
        RNNCellStateBias,
        "mistake",
        "I left state_proj's bias on (nn.Linear's default), so the cell has a second bias.",
    ),
    BlindCase(
        CHECK,
        "state_weight_transposed",
        RNNCellTransposedStateWeight,
        "mistake",
        "I wrote s_prev @ state_proj.weight by hand, which multiplies by W_s transposed.",
    ),
    BlindCase(
        CHECK,
        "layers_applied_crosswise",
        RNNCellLayersCrossed,
        "mistake",
        "In forward I applied state_proj to x and in_proj to s_prev.",
    ),
    BlindCase(
        CHECK,
        "returns_output_and_state",
        RNNCellReturnsPair,
        "mistake",
        "I returned (output, state) as nn.RNN does, instead of the new state alone.",
    ),
    BlindCase(
        CHECK,
        "forward_arguments_swapped",
        RNNCellStateFirst,
        "mistake",
        "My forward takes (s_prev, x), state first, instead of (x, s_prev).",
    ),
    BlindCase(
        CHECK,
        "constructor_sizes_swapped",
        RNNCellSizesSwapped,
        "mistake",
        "My __init__ takes (hidden_size, input_size) in that order.",
    ),
    BlindCase(
        CHECK,
        "keeps_state_between_calls",
        RNNCellKeepsItsState,
        "mistake",
        "The cell stores its state in self.state and reuses it on the next call, so the s_prev "
        "passed later is ignored.",
    ),
    BlindCase(
        CHECK,
        "detached_previous_state",
        RNNCellDetachedState,
        "mistake",
        "I detached s_prev inside the cell, so no gradient flows back to earlier steps.",
    ),
    BlindCase(
        CHECK,
        "averaged_the_two_terms",
        RNNCellAveraged,
        "mistake",
        "I averaged the input and state terms, tanh((W_in x + b + W_s s) / 2).",
    ),
    BlindCase(
        CHECK,
        "old_state_added",
        RNNCellOldStateAdded,
        "mistake",
        "I returned s_prev + tanh(...), updating the state instead of replacing it.",
    ),
    BlindCase(
        CHECK,
        "functional_linear",
        RNNCellFunctional,
        "correct",
        "F.linear with the two layers' weights, .tanh() on the sum; s_prev optional (zeros).",
    ),
    BlindCase(
        CHECK,
        "addmm",
        RNNCellAddmm,
        "correct",
        "torch.addmm for both products, the bias as the starting term.",
    ),
    BlindCase(
        CHECK,
        "nonlinearity_argument",
        RNNCellWithNonlinearity,
        "correct",
        "An nn.Tanh module chosen by an extra nonlinearity='tanh' argument; terms added in the "
        "other order.",
    ),
]
