"""Blind set B6, check_rnn_cell (chapter 2): one step of a simple RNN, as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_rnn_cell"


# ---------------------------------------------------------------- mistakes


class RNNCellNoTanh(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(s_prev)  # the nonlinearity is in the next layer


class RNNCellReLU(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))  # relu, as everywhere else


class RNNCellTwoBiases(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)  # b_ih
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # b_hh, as nn.RNN has both

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNCellInputOnly(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        s = torch.tanh(self.in_proj(x))
        return s  # the state is carried by the loop that calls the cell


class RNNCellTanhEachTerm(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x)) + torch.tanh(self.state_proj(s_prev))


class RNNCellReturnsPair(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> tuple[Tensor, Tensor]:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s, s  # (output, state), as nn.RNN returns


class RNNCellStateWeightNotTransposed(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        W_s = self.state_proj.weight  # square, so no transpose needed
        return torch.tanh(self.in_proj(x) + s_prev @ W_s)


class RNNCellOwnNames(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.W_in = nn.Linear(input_size, hidden_size)  # the names of the formula
        self.W_s = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.W_in(x) + self.W_s(s_prev))


class RNNCellDetachedState(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        s_prev = s_prev.detach()  # to avoid "backward through the graph a second time"
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNCellSwappedSizes(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(hidden_size, input_size)  # (out, in), as the weight's shape
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


# ---------------------------------------------------------------- correct variants


class RNNCellFunctional(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size, bias=True)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        pre = F.linear(x, self.in_proj.weight, self.in_proj.bias)
        pre = pre + s_prev @ self.state_proj.weight.T
        return torch.tanh(pre)


class RNNCellOptionalState(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, nonlinearity: str = "tanh") -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.nonlinearity = nonlinearity
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = x.new_zeros(x.shape[0], self.hidden_size)
        f = torch.tanh if self.nonlinearity == "tanh" else torch.relu
        return f(self.in_proj(x) + self.state_proj(s_prev))


class RNNCellConcatenated(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        W = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)  # (H, D_in + H)
        xs = torch.cat([x, s_prev], dim=-1)  # (B, D_in + H)
        return torch.tanh(torch.addmm(self.in_proj.bias, xs, W.T))


CASES = [
    BlindCase(
        CHECK,
        "no_tanh",
        RNNCellNoTanh,
        "mistake",
        "I left out the tanh and returned W_in x + W_s s + b.",
    ),
    BlindCase(
        CHECK,
        "relu_instead_of_tanh",
        RNNCellReLU,
        "mistake",
        "I used relu as the nonlinearity instead of tanh.",
    ),
    BlindCase(
        CHECK,
        "bias_on_state_proj",
        RNNCellTwoBiases,
        "mistake",
        "I gave state_proj a bias too, like nn.RNN's b_hh, although it should have none.",
    ),
    BlindCase(
        CHECK,
        "previous_state_unused",
        RNNCellInputOnly,
        "mistake",
        "My forward never uses s_prev: the new state is tanh(in_proj(x)) only.",
    ),
    BlindCase(
        CHECK,
        "tanh_of_each_term",
        RNNCellTanhEachTerm,
        "mistake",
        "I applied tanh to the input term and to the state term separately and added them.",
    ),
    BlindCase(
        CHECK,
        "returns_output_and_state",
        RNNCellReturnsPair,
        "mistake",
        "I return the pair (output, state), like nn.RNN, instead of the new state alone.",
    ),
    BlindCase(
        CHECK,
        "state_weight_not_transposed",
        RNNCellStateWeightNotTransposed,
        "mistake",
        "I multiplied s_prev @ state_proj.weight without the transpose, since it is square, "
        "which computes W_s^T s instead of W_s s.",
    ),
    BlindCase(
        CHECK,
        "own_layer_names",
        RNNCellOwnNames,
        "mistake",
        "I named the layers W_in and W_s instead of in_proj and state_proj.",
    ),
    BlindCase(
        CHECK,
        "previous_state_detached",
        RNNCellDetachedState,
        "mistake",
        "I detach s_prev inside the cell, so no gradient flows back to earlier steps.",
    ),
    BlindCase(
        CHECK,
        "in_proj_sizes_swapped",
        RNNCellSwappedSizes,
        "mistake",
        "I built in_proj as nn.Linear(hidden_size, input_size), the sizes the wrong way round.",
    ),
    BlindCase(
        CHECK,
        "functional_linear",
        RNNCellFunctional,
        "correct",
        "F.linear for the input and s_prev @ state_proj.weight.T for the state, then tanh.",
    ),
    BlindCase(
        CHECK,
        "optional_state_and_nonlinearity",
        RNNCellOptionalState,
        "correct",
        "s_prev defaults to zeros and an extra nonlinearity argument defaults to 'tanh'.",
    ),
    BlindCase(
        CHECK,
        "concatenated_weights",
        RNNCellConcatenated,
        "correct",
        "I concatenate [x; s_prev] and the two weight matrices and do one addmm with the bias.",
    ),
]
