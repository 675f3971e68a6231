"""Blind set B34, check_rnn_cell (chapter 2): one step of a simple RNN as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_rnn_cell"


class _Base(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class RNNNoTanh(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(s_prev)  # the linear part is the state


class RNNSigmoid(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.sigmoid(self.in_proj(x) + self.state_proj(s_prev))


class RNNRelu(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))


class RNNForgetsState(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x))  # the state_proj is for the next step


class RNNForgetsInput(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.state_proj(s_prev) + self.in_proj.bias)


class RNNTanhOnlyState(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + torch.tanh(self.state_proj(s_prev))


class RNNTanhEachTerm(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x)) + torch.tanh(self.state_proj(s_prev))


class RNNAddsPrevState(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return s_prev + torch.tanh(self.in_proj(x) + self.state_proj(s_prev))  # residual


class RNNMultiplies(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) * self.state_proj(s_prev))


class RNNWeightTransposed(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + s_prev @ self.state_proj.weight)  # W_s s as s @ W_s


class RNNReturnsPair(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> tuple[Tensor, Tensor]:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s, s_prev  # new and old state


# ---------------------------------------------------------------- correct variants


class RNNOptionalState(_Base):
    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = torch.zeros(x.shape[0], self.hidden_size, dtype=x.dtype)
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNFunctional(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = x @ self.in_proj.weight.T + self.in_proj.bias + s_prev @ self.state_proj.weight.T
        return z.tanh()


class RNNAddmm(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = torch.addmm(self.in_proj.bias, x, self.in_proj.weight.t())
        z = torch.addmm(z, s_prev, self.state_proj.weight.t())
        return torch.tanh(z)


class RNNLayersAfterInit(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.in_proj = nn.Linear(input_size, hidden_size, bias=True)
        nn.init.orthogonal_(self.state_proj.weight)  # my own init

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return nn.functional.tanh(self.state_proj(s_prev) + self.in_proj(x))


CASES = [
    BlindCase(CHECK, "no_tanh", RNNNoTanh, "mistake", "I forgot the tanh"),
    BlindCase(CHECK, "sigmoid", RNNSigmoid, "mistake", "I squashed with a sigmoid instead of tanh"),
    BlindCase(CHECK, "relu", RNNRelu, "mistake", "I used relu as the nonlinearity"),
    BlindCase(
        CHECK,
        "no_state",
        RNNForgetsState,
        "mistake",
        "I only used the input; I thought state_proj was applied elsewhere",
    ),
    BlindCase(
        CHECK, "no_input", RNNForgetsInput, "mistake", "I left out W_in x and kept only its bias"
    ),
    BlindCase(
        CHECK,
        "tanh_state_only",
        RNNTanhOnlyState,
        "mistake",
        "I put the tanh only around the state term",
    ),
    BlindCase(
        CHECK,
        "tanh_each_term",
        RNNTanhEachTerm,
        "mistake",
        "I took the tanh of each term and added them",
    ),
    BlindCase(
        CHECK,
        "residual_state",
        RNNAddsPrevState,
        "mistake",
        "I added the previous state to the new one, like a residual",
    ),
    BlindCase(
        CHECK,
        "multiplied_terms",
        RNNMultiplies,
        "mistake",
        "I multiplied the input term and the state term instead of adding",
    ),
    BlindCase(
        CHECK,
        "weight_transposed",
        RNNWeightTransposed,
        "mistake",
        "I wrote s_prev @ state_proj.weight without the transpose",
    ),
    BlindCase(
        CHECK,
        "returns_pair",
        RNNReturnsPair,
        "mistake",
        "I returned the new state and the old one as a pair",
    ),
    BlindCase(
        CHECK, "optional_state", RNNOptionalState, "correct", "I let s_prev default to zeros"
    ),
    BlindCase(
        CHECK,
        "by_hand_matmul",
        RNNFunctional,
        "correct",
        "I wrote the two matrix products by hand with the layers' weights",
    ),
    BlindCase(CHECK, "addmm", RNNAddmm, "correct", "I used torch.addmm twice"),
    BlindCase(
        CHECK,
        "other_order_own_init",
        RNNLayersAfterInit,
        "correct",
        "I created state_proj first, initialised it orthogonally, and added in another order",
    ),
]
