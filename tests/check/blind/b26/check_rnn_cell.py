"""Blind set B26, check_rnn_cell (chapter 2): one step of a simple RNN as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_rnn_cell"


class _Layers(nn.Module):
    """The two layers as the skeleton names them, shared by the mistakes that are elsewhere."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class RNNCellSigmoid(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.sigmoid(self.in_proj(x) + self.state_proj(s_prev))  # a squashing function


class RNNCellReLU(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))


class RNNCellStateBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # bias left at its default

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNCellNoInputBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size, bias=False)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNCellNamesSwapped(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.state_proj = nn.Linear(input_size, hidden_size)  # W_s x ... W_in s, names mixed up
        self.in_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.state_proj(x) + self.in_proj(s_prev))


class RNNCellTanhOnInputOnly(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x)) + self.state_proj(s_prev)


class RNNCellReturnsPair(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> tuple[Tensor, Tensor]:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s, s  # (output, hidden) as nn.RNN returns


class RNNCellMultiplies(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) * self.state_proj(s_prev))  # input gated by the state


class RNNCellResidual(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return s_prev + torch.tanh(self.in_proj(x) + self.state_proj(s_prev))  # keep the old one


class RNNCellWeightNotTransposed(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = x @ self.in_proj.weight + self.in_proj.bias + s_prev @ self.state_proj.weight
        return torch.tanh(z)


class RNNCellDetachedState(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        s_prev = s_prev.detach()  # so the graph does not grow step after step
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNCellKeepsState(_Layers):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__(input_size, hidden_size)
        self.state: Tensor | None = None

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        if self.state is None:
            self.state = s_prev  # the cell remembers its state between calls
        self.state = torch.tanh(self.in_proj(x) + self.state_proj(self.state))
        return self.state


# ---------------------------------------------------------------- correct variants


class RNNCellFunctional(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = F.linear(x, self.in_proj.weight, self.in_proj.bias)
        z = z + s_prev @ self.state_proj.weight.T
        return z.tanh()


class RNNCellAddmm(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = torch.zeros(x.shape[0], self.state_proj.in_features, dtype=x.dtype)
        return torch.tanh(torch.addmm(self.in_proj(x), s_prev, self.state_proj.weight.t()))


class RNNCellInPlace(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, nonlinearity: str = "tanh") -> None:
        super().__init__()
        self.nonlinearity = nonlinearity
        self.in_proj = nn.Linear(input_size, hidden_size, bias=True)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = self.in_proj(x)
        z += self.state_proj(s_prev)
        return z.tanh_() if self.nonlinearity == "tanh" else z.relu_()


class RNNCellEinsum(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        a = torch.einsum("hd,bd->bh", self.in_proj.weight, x) + self.in_proj.bias
        b = torch.einsum("hk,bk->bh", self.state_proj.weight, s_prev)
        return torch.tanh(a + b)


CASES = [
    BlindCase(
        CHECK,
        "sigmoid",
        RNNCellSigmoid,
        "mistake",
        "I squashed with a sigmoid instead of tanh.",
    ),
    BlindCase(
        CHECK,
        "relu",
        RNNCellReLU,
        "mistake",
        "I used relu as the nonlinearity, the other choice RNNCell offers, instead of tanh.",
    ),
    BlindCase(
        CHECK,
        "state_proj_with_bias",
        RNNCellStateBias,
        "mistake",
        "I forgot bias=False on state_proj, so there is a second bias.",
    ),
    BlindCase(
        CHECK,
        "in_proj_without_bias",
        RNNCellNoInputBias,
        "mistake",
        "I made both layers bias-free, so b is missing.",
    ),
    BlindCase(
        CHECK,
        "layer_names_swapped",
        RNNCellNamesSwapped,
        "mistake",
        "I called the layer that reads x state_proj and the one that reads s in_proj.",
    ),
    BlindCase(
        CHECK,
        "tanh_on_input_only",
        RNNCellTanhOnInputOnly,
        "mistake",
        "I put tanh around W_in x + b only and added W_s s outside it.",
    ),
    BlindCase(
        CHECK,
        "returns_pair",
        RNNCellReturnsPair,
        "mistake",
        "I return (output, state), both the new state, like nn.RNN does.",
    ),
    BlindCase(
        CHECK,
        "multiplies_terms",
        RNNCellMultiplies,
        "mistake",
        "I multiplied W_in x by W_s s instead of adding them.",
    ),
    BlindCase(
        CHECK,
        "residual_state",
        RNNCellResidual,
        "mistake",
        "I added the old state to the new one, s + tanh(...), to keep the memory.",
    ),
    BlindCase(
        CHECK,
        "weight_not_transposed",
        RNNCellWeightNotTransposed,
        "mistake",
        "I multiplied x @ in_proj.weight without transposing the weight.",
    ),
    BlindCase(
        CHECK,
        "detached_state",
        RNNCellDetachedState,
        "mistake",
        "I detached s_prev inside the cell, so no gradient flows back to earlier steps.",
    ),
    BlindCase(
        CHECK,
        "keeps_state_between_calls",
        RNNCellKeepsState,
        "mistake",
        "My cell stores its state and only reads s_prev on the first call.",
    ),
    BlindCase(
        CHECK,
        "functional_linear",
        RNNCellFunctional,
        "correct",
        "F.linear for the input and s_prev @ state_proj.weight.T for the state.",
    ),
    BlindCase(
        CHECK,
        "addmm_optional_state",
        RNNCellAddmm,
        "correct",
        "One torch.addmm adds the state term to in_proj(x); s_prev may be None (zeros).",
    ),
    BlindCase(
        CHECK,
        "in_place_with_option",
        RNNCellInPlace,
        "correct",
        "The state term added in place and tanh_ in place; an extra nonlinearity argument "
        "defaults to tanh.",
    ),
    BlindCase(
        CHECK,
        "einsum",
        RNNCellEinsum,
        "correct",
        "Both products written with einsum on the layers' weights.",
    ),
]
