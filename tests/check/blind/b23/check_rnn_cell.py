"""Blind set B23, check_rnn_cell (chapter 2): one step s_t = tanh(W_in x + W_s s + b) by readers."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_rnn_cell"


class _Cell(nn.Module):
    """The two layers as the chapter names them; the subclasses write ``forward``."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class RNNNoTanh(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(s_prev)  # the linear part of the formula


class RNNRelu(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))


class RNNSigmoid(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.sigmoid(self.in_proj(x) + self.state_proj(s_prev))  # keeps it bounded


class RNNForgetsState(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x))


class RNNForgetsInput(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.state_proj(s_prev) + self.in_proj.bias)


class RNNStateBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # a bias here too

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNNoBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size, bias=False)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNTanhEachTerm(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x)) + torch.tanh(self.state_proj(s_prev))


class RNNStateWeightNotTransposed(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        W_s = self.state_proj.weight  # (H, H)
        return torch.tanh(self.in_proj(x) + s_prev @ W_s)


class RNNResidual(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return s_prev + torch.tanh(self.in_proj(x) + self.state_proj(s_prev))  # keep the past


class RNNReturnsPair(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> tuple[Tensor, Tensor]:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s, s  # (output, state), as nn.RNN returns


class RNNMultiplies(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) * self.state_proj(s_prev))  # input gates the state


class RNNOverwritesState(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        new = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        with torch.no_grad():
            s_prev.copy_(new)  # update the state in place, no new tensor each step
        return s_prev


# ---------------------------------------------------------------- correct variants


class RNNFunctional(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = x.new_zeros(x.shape[0], self.state_proj.in_features)
        pre = F.linear(x, self.in_proj.weight, self.in_proj.bias)
        pre = pre + s_prev @ self.state_proj.weight.T
        return pre.tanh()


class RNNConcat(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        # one linear layer on [x_t; s_{t-1}]: [W_in W_s] [x; s] + b
        W = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)  # (H, D_in + H)
        return torch.tanh(torch.cat([x, s_prev], dim=-1) @ W.T + self.in_proj.bias)


class RNNEinsumAddmm(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        s_part = torch.einsum("bh,gh->bg", s_prev, self.state_proj.weight)
        out = torch.addmm(self.in_proj.bias, x, self.in_proj.weight.t()) + s_part
        return torch.tanh(out)


class RNNInPlaceTanh(_Cell):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        s = self.state_proj(s_prev)
        s += self.in_proj(x)  # a new tensor of mine, safe to edit
        return s.tanh_()


CASES = [
    BlindCase(CHECK, "no_tanh", RNNNoTanh, "mistake", "I forgot the tanh around the sum"),
    BlindCase(CHECK, "relu", RNNRelu, "mistake", "I used relu as the nonlinearity"),
    BlindCase(
        CHECK, "sigmoid", RNNSigmoid, "mistake", "I used a sigmoid to keep the state bounded"
    ),
    BlindCase(
        CHECK,
        "forgets_state",
        RNNForgetsState,
        "mistake",
        "I only used the input: tanh(in_proj(x))",
    ),
    BlindCase(
        CHECK, "forgets_input", RNNForgetsInput, "mistake", "I left the input out: tanh(W_s s + b)"
    ),
    BlindCase(
        CHECK,
        "state_bias",
        RNNStateBias,
        "mistake",
        "I gave state_proj a bias too, so there are two biases",
    ),
    BlindCase(CHECK, "no_bias", RNNNoBias, "mistake", "I made in_proj without a bias"),
    BlindCase(
        CHECK,
        "tanh_each_term",
        RNNTanhEachTerm,
        "mistake",
        "I took the tanh of each of the two terms, then added",
    ),
    BlindCase(
        CHECK,
        "state_weight_not_transposed",
        RNNStateWeightNotTransposed,
        "mistake",
        "I multiplied s_prev @ state_proj.weight without .T (it is square, so it ran)",
    ),
    BlindCase(
        CHECK,
        "residual",
        RNNResidual,
        "mistake",
        "I added the previous state to the new one, to keep the past",
    ),
    BlindCase(
        CHECK,
        "returns_pair",
        RNNReturnsPair,
        "mistake",
        "I returned (output, state) like nn.RNN instead of the new state",
    ),
    BlindCase(
        CHECK,
        "multiplies",
        RNNMultiplies,
        "mistake",
        "I multiplied the two projections instead of adding them",
    ),
    BlindCase(
        CHECK,
        "overwrites_state",
        RNNOverwritesState,
        "mistake",
        "I wrote the new state into s_prev in place and returned it",
    ),
    BlindCase(
        CHECK,
        "functional",
        RNNFunctional,
        "correct",
        "F.linear and s_prev @ W_s.T; s_prev optional (zeros)",
    ),
    BlindCase(
        CHECK,
        "concat",
        RNNConcat,
        "correct",
        "one product of [x; s] with the two weights concatenated, plus the bias",
    ),
    BlindCase(
        CHECK,
        "einsum_addmm",
        RNNEinsumAddmm,
        "correct",
        "torch.addmm for the input part and einsum for the state part",
    ),
    BlindCase(
        CHECK,
        "inplace_tanh",
        RNNInPlaceTanh,
        "correct",
        "in-place += and tanh_ on my own intermediate tensor",
    ),
]
