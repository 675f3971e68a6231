"""Blind set B25, check_rnn_cell (chapter 2): one step of a simple RNN as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_rnn_cell"


class _Layers(nn.Module):
    """The two layers under the book's names; each mistake below only changes forward."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class RNNNoTanh(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(s_prev)


class RNNRelu(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))


class RNNSigmoid(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.sigmoid(self.in_proj(x) + self.state_proj(s_prev))  # a squashing function


class RNNIgnoresState(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x))


class RNNStateBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # forgot bias=False

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNNoBiasAtAll(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size, bias=False)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNTanhOnInputOnly(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x)) + self.state_proj(s_prev)


class RNNTanhOnOldState(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(torch.tanh(s_prev))


class RNNStateWeightNotTransposed(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        # W_s s as a row vector: s @ W_s (the square matrix hides the missing .T)
        return torch.tanh(self.in_proj(x) + s_prev @ self.state_proj.weight)


class RNNReturnsPair(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> tuple[Tensor, Tensor]:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s, s  # (output, state), like nn.RNN


class RNNOtherNames(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.W_in = nn.Linear(input_size, hidden_size)
        self.W_s = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.W_in(x) + self.W_s(s_prev))


class RNNLeaky(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return s_prev + torch.tanh(self.in_proj(x) + self.state_proj(s_prev))  # keep the old state


class RNNArgumentsSwapped(_Layers):
    def forward(self, s_prev: Tensor, x: Tensor) -> Tensor:  # the state first, as in h, x
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


# ---------------------------------------------------------------- correct variants


class RNNFunctionalLinear(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = x.new_zeros(x.shape[0], self.state_proj.out_features)
        z = F.linear(x, self.in_proj.weight, self.in_proj.bias)
        z = z + F.linear(s_prev, self.state_proj.weight)
        return z.tanh()


class RNNConcatenated(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        W = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)  # (H, D_in + H)
        xs = torch.cat([x, s_prev], dim=-1)  # (B, D_in + H)
        return torch.tanh(xs @ W.T + self.in_proj.bias)


class RNNAddmmInPlace(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = torch.addmm(self.in_proj.bias, x, self.in_proj.weight.t())  # b + x W_in^T
        z += s_prev @ self.state_proj.weight.t()  # z is a fresh tensor: safe to add in place
        return torch.tanh(z)


CASES = [
    BlindCase(CHECK, "no_tanh", RNNNoTanh, "mistake", "I left out the tanh."),
    BlindCase(
        CHECK, "relu", RNNRelu, "mistake", "I used ReLU as the nonlinearity instead of tanh."
    ),
    BlindCase(
        CHECK,
        "sigmoid",
        RNNSigmoid,
        "mistake",
        "I squashed with a sigmoid instead of tanh.",
    ),
    BlindCase(
        CHECK,
        "ignores_state",
        RNNIgnoresState,
        "mistake",
        "I computed tanh(in_proj(x)) and never used the previous state.",
    ),
    BlindCase(
        CHECK,
        "state_proj_with_bias",
        RNNStateBias,
        "mistake",
        "I forgot bias=False on state_proj, so there are two biases.",
    ),
    BlindCase(
        CHECK,
        "no_bias_at_all",
        RNNNoBiasAtAll,
        "mistake",
        "I put bias=False on both layers, so the cell has no b.",
    ),
    BlindCase(
        CHECK,
        "tanh_on_input_only",
        RNNTanhOnInputOnly,
        "mistake",
        "I closed the bracket too early: tanh(W_in x + b) + W_s s.",
    ),
    BlindCase(
        CHECK,
        "tanh_on_old_state",
        RNNTanhOnOldState,
        "mistake",
        "I put the tanh on the previous state, W_in x + W_s tanh(s), instead of around the sum.",
    ),
    BlindCase(
        CHECK,
        "state_weight_not_transposed",
        RNNStateWeightNotTransposed,
        "mistake",
        "I multiplied s_prev @ state_proj.weight without transposing the weight.",
    ),
    BlindCase(
        CHECK,
        "returns_pair",
        RNNReturnsPair,
        "mistake",
        "I returned (output, state) like nn.RNN instead of the new state alone.",
    ),
    BlindCase(
        CHECK,
        "other_layer_names",
        RNNOtherNames,
        "mistake",
        "I named the layers W_in and W_s after the formula instead of in_proj and state_proj.",
    ),
    BlindCase(
        CHECK,
        "adds_old_state",
        RNNLeaky,
        "mistake",
        "I added the previous state to the new one, s + tanh(...), to keep the memory.",
    ),
    BlindCase(
        CHECK,
        "arguments_swapped",
        RNNArgumentsSwapped,
        "mistake",
        "I wrote forward(self, s_prev, x), the state first.",
    ),
    BlindCase(
        CHECK,
        "functional_linear",
        RNNFunctionalLinear,
        "correct",
        "F.linear with the layers' weights; s_prev defaults to zeros.",
    ),
    BlindCase(
        CHECK,
        "one_concatenated_matrix",
        RNNConcatenated,
        "correct",
        "[W_in W_s] applied to [x; s] in one product, plus in_proj's bias.",
    ),
    BlindCase(
        CHECK,
        "addmm_in_place",
        RNNAddmmInPlace,
        "correct",
        "torch.addmm for b + x W_in^T, the state term added in place, then tanh.",
    ),
]
