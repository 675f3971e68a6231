"""Blind set B30, check_rnn_cell (chapter 2): one step of a simple RNN, as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_rnn_cell"


class _Layers(nn.Module):
    """The two layers under the book's names; each mistake below changes only forward."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class RNNNoTanh(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(s_prev)


class RNNReLU(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))


class RNNTanhOnStateOnly(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + torch.tanh(self.state_proj(s_prev))


class RNNForgetsState(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x))


class RNNForgetsInput(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.state_proj(s_prev) + self.in_proj.bias)


class RNNBiasOnBoth(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # a bias here too, like nn.RNN

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNWeightOnly(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(x @ self.in_proj.weight.T + s_prev @ self.state_proj.weight.T)


class RNNSwappedProjections(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(hidden_size, hidden_size)  # the one for the state
        self.state_proj = nn.Linear(input_size, hidden_size, bias=False)  # the one for x

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(s_prev) + self.state_proj(x))


class RNNSizesSwapped(nn.Module):
    def __init__(self, hidden_size: int, input_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNReturnsPair(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> tuple[Tensor, Tensor]:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s, s  # (output, state), like nn.RNN


class RNNStateWithLayerAxis(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev)).unsqueeze(0)  # (1, B, H)


class RNNWrapsTorchCell(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.cell = nn.RNNCell(input_size, hidden_size)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.cell(x, s_prev)


# ---------------------------------------------------------------- correct variants


class RNNConcatenated(_Layers):
    """One matrix product on [x; s_prev] with the two weights side by side."""

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        W = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)  # (H, D_in + H)
        return torch.tanh(F.linear(torch.cat([x, s_prev], dim=-1), W, self.in_proj.bias))


class RNNOptionalState(nn.Module):
    """s_prev defaults to zeros; the nonlinearity is an argument."""

    def __init__(self, input_size: int, hidden_size: int, nonlinearity: str = "tanh") -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.act = torch.tanh if nonlinearity == "tanh" else torch.relu
        self.in_proj = nn.Linear(input_size, hidden_size, bias=True)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = x.new_zeros(x.shape[0], self.hidden_size)
        return self.act(torch.addmm(self.in_proj(x), s_prev, self.state_proj.weight.t()))


class RNNInPlace(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = self.in_proj(x)
        z += self.state_proj(s_prev)
        return z.tanh_()


CASES = [
    BlindCase(CHECK, "no_tanh", RNNNoTanh, "mistake", "I forgot the tanh: the step is linear."),
    BlindCase(
        CHECK,
        "relu",
        RNNReLU,
        "mistake",
        "I used ReLU as the nonlinearity, since it is the usual activation elsewhere.",
    ),
    BlindCase(
        CHECK,
        "tanh_on_state_only",
        RNNTanhOnStateOnly,
        "mistake",
        "My parentheses put the tanh around the state term only; the input term is added after it.",
    ),
    BlindCase(
        CHECK,
        "previous_state_left_out",
        RNNForgetsState,
        "mistake",
        "I computed tanh(in_proj(x)) and never used s_prev.",
    ),
    BlindCase(
        CHECK,
        "input_left_out",
        RNNForgetsInput,
        "mistake",
        "I used only the previous state and the bias; x never enters the step.",
    ),
    BlindCase(
        CHECK,
        "bias_on_state_proj",
        RNNBiasOnBoth,
        "mistake",
        "I gave state_proj a bias too, as nn.RNN has b_ih and b_hh.",
    ),
    BlindCase(
        CHECK,
        "bias_dropped",
        RNNWeightOnly,
        "mistake",
        "I multiplied by the weight matrices directly and so left out the bias b.",
    ),
    BlindCase(
        CHECK,
        "projections_swapped",
        RNNSwappedProjections,
        "mistake",
        "I mixed up the two layers: in_proj works on the state and state_proj on x.",
    ),
    BlindCase(
        CHECK,
        "constructor_arguments_swapped",
        RNNSizesSwapped,
        "mistake",
        "My __init__ takes (hidden_size, input_size), the other order.",
    ),
    BlindCase(
        CHECK,
        "returns_output_and_state",
        RNNReturnsPair,
        "mistake",
        "I return (s, s) like nn.RNN's (output, h) instead of the new state alone.",
    ),
    BlindCase(
        CHECK,
        "state_with_layer_axis",
        RNNStateWithLayerAxis,
        "mistake",
        "I return the state as (1, B, H), the shape nn.RNN uses for h.",
    ),
    BlindCase(
        CHECK,
        "wraps_nn_rnncell",
        RNNWrapsTorchCell,
        "mistake",
        "I wrapped torch's nn.RNNCell instead of writing in_proj and state_proj.",
    ),
    BlindCase(
        CHECK,
        "concatenated_product",
        RNNConcatenated,
        "correct",
        "x and s_prev concatenated and multiplied by both weights side by side in one F.linear.",
    ),
    BlindCase(
        CHECK,
        "optional_state_addmm",
        RNNOptionalState,
        "correct",
        "s_prev may be None (zeros), a nonlinearity argument defaulting to tanh, and addmm for "
        "the state term.",
    ),
    BlindCase(
        CHECK,
        "in_place_sum",
        RNNInPlace,
        "correct",
        "The state term added in place to in_proj(x), then tanh_ in place.",
    ),
]
