"""Blind set B14, check_rnn_cell (chapter 2): one step s_t = tanh(W_in x_t + W_s s_{t-1} + b)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
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
        return self.in_proj(x) + self.state_proj(s_prev)  # a linear recurrence


class RNNSigmoid(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.sigmoid(self.in_proj(x) + self.state_proj(s_prev))  # squash to (0, 1)


class RNNReLU(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))


class RNNForgetsState(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x))  # the state is only used by the next layer


class RNNForgetsInput(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.state_proj(s_prev))


class RNNTanhOnInputOnly(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x)) + self.state_proj(s_prev)  # tanh, then add memory


class RNNStateRowTimesWeight(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        # W_s s as a row vector times the weight, forgetting Linear stores W transposed
        return torch.tanh(self.in_proj(x) + s_prev @ self.state_proj.weight)


class RNNBiasOnBoth(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # a bias here too

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNReturnsPair(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> tuple[Tensor, Tensor]:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s, s  # (output, state), as nn.RNN returns


class RNNUpdatesStateInPlace(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        s_prev.copy_(s)  # keep the caller's state up to date
        return s_prev


class RNNTanhTwice(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        s_prev = torch.tanh(s_prev)  # squash the memory before using it too
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


# ---------------------------------------------------------------- correct variants


class RNNFunctional(_Base):
    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = x.new_zeros(x.shape[0], self.hidden_size)
        pre = F.linear(x, self.in_proj.weight, self.in_proj.bias)
        pre = pre + s_prev @ self.state_proj.weight.T
        return pre.tanh()


class RNNConcatenated(_Base):
    """One matrix product on [x; s] with the two weights side by side."""

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        W = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)  # (H, D_in + H)
        xs = torch.cat([x, s_prev], dim=-1)  # (B, D_in + H)
        return torch.tanh(torch.addmm(self.in_proj.bias, xs, W.T))


class RNNWithOptions(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, nonlinearity: str = "tanh") -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size, bias=True)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.act = torch.tanh if nonlinearity == "tanh" else torch.relu

    def extra_repr(self) -> str:
        return f"act={self.act.__name__}"

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = self.in_proj(x)
        z += self.state_proj(s_prev)  # in place on my own temporary
        return self.act(z)


CASES = [
    BlindCase(CHECK, "no_tanh", RNNNoTanh, "mistake", "I forgot the tanh."),
    BlindCase(
        CHECK,
        "sigmoid",
        RNNSigmoid,
        "mistake",
        "I used a sigmoid as the squashing function instead of tanh.",
    ),
    BlindCase(CHECK, "relu", RNNReLU, "mistake", "I used relu instead of tanh."),
    BlindCase(
        CHECK,
        "forgets_state",
        RNNForgetsState,
        "mistake",
        "I computed tanh(W_in x + b) and never used the previous state.",
    ),
    BlindCase(
        CHECK,
        "forgets_input",
        RNNForgetsInput,
        "mistake",
        "I only fed the previous state through state_proj and forgot x.",
    ),
    BlindCase(
        CHECK,
        "tanh_on_input_only",
        RNNTanhOnInputOnly,
        "mistake",
        "I applied tanh to the input term and added W_s s after it.",
    ),
    BlindCase(
        CHECK,
        "state_times_weight",
        RNNStateRowTimesWeight,
        "mistake",
        "I wrote s_prev @ state_proj.weight, forgetting that Linear stores W transposed.",
    ),
    BlindCase(
        CHECK,
        "bias_on_both",
        RNNBiasOnBoth,
        "mistake",
        "I left state_proj with its default bias, so there are two biases.",
    ),
    BlindCase(
        CHECK,
        "returns_pair",
        RNNReturnsPair,
        "mistake",
        "I returned (output, state) like nn.RNN instead of just the new state.",
    ),
    BlindCase(
        CHECK,
        "updates_state_in_place",
        RNNUpdatesStateInPlace,
        "mistake",
        "I copied the new state into s_prev in place, overwriting the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "tanh_twice",
        RNNTanhTwice,
        "mistake",
        "I passed the previous state through tanh again before W_s.",
    ),
    BlindCase(
        CHECK,
        "functional",
        RNNFunctional,
        "correct",
        "F.linear and s @ W_s.T with the modules' weights; s_prev may be None.",
    ),
    BlindCase(
        CHECK,
        "concatenated",
        RNNConcatenated,
        "correct",
        "Both weights concatenated and one addmm on [x; s].",
    ),
    BlindCase(
        CHECK,
        "with_options",
        RNNWithOptions,
        "correct",
        "An extra nonlinearity argument defaulting to tanh, extra_repr, += on a temporary.",
    ),
]
