"""Blind set B31, check_rnn_cell (chapter 2): one step s_t = tanh(W_in x + W_s s + b)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_rnn_cell"


class _Base(nn.Module):
    """The right layers; the mistakes below change only forward (unless said otherwise)."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class RNNNoTanh(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(s_prev)


class RNNReLU(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))  # ReLU as in the MLPs


class RNNSigmoid(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.sigmoid(self.in_proj(x) + self.state_proj(s_prev))


class RNNIgnoresState(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x))


class RNNIgnoresInput(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.state_proj(s_prev) + self.in_proj.bias)


class RNNTanhPerTerm(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x)) + torch.tanh(self.state_proj(s_prev))


class RNNTanhOnStateOnly(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + torch.tanh(self.state_proj(s_prev))


class RNNStateBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # bias left at its default True

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNNoBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size, bias=False)  # the figure shows no b
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNStateWeightTransposed(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        W_s = self.state_proj.weight  # (H, H)
        return torch.tanh(self.in_proj(x) + s_prev @ W_s)  # row vectors times W_s, not W_s^T


class RNNRemembersState(_Base):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__(input_size, hidden_size)
        self.s = None

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        s = s_prev if self.s is None or self.s.shape != s_prev.shape else self.s
        self.s = torch.tanh(self.in_proj(x) + self.state_proj(s))  # the cell keeps its memory
        return self.s


class RNNDetachedState(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        s_prev = s_prev.detach()  # truncated BPTT, so the graph does not grow forever
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNTanhTwice(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(torch.tanh(x)) + self.state_proj(s_prev))


class RNNReturnsPair(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> tuple[Tensor, Tensor]:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s, s  # (output, state), like nn.RNN


# ---------------------------------------------------------------- correct variants


class RNNByHand(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        a = torch.addmm(self.in_proj.bias, x, self.in_proj.weight.T)
        a = a + s_prev @ self.state_proj.weight.T
        return a.tanh()


class RNNWithDefaults(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, nonlinearity: str = "tanh") -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.act = torch.tanh if nonlinearity == "tanh" else torch.relu
        self.in_proj = nn.Linear(input_size, hidden_size, bias=True)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = torch.zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device)
        return self.act(self.in_proj(x) + self.state_proj(s_prev))


class RNNConcatenated(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        W = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)  # (H, D_in + H)
        return F.linear(torch.cat([x, s_prev], dim=1), W, self.in_proj.bias).tanh()


class RNNFloat64Inside(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        a = F.linear(x.double(), self.in_proj.weight.double(), self.in_proj.bias.double())
        a = a + F.linear(s_prev.double(), self.state_proj.weight.double())
        return torch.tanh(a).to(x.dtype)


CASES = [
    BlindCase(CHECK, "no_tanh", RNNNoTanh, "mistake", "I forgot the tanh."),
    BlindCase(CHECK, "relu", RNNReLU, "mistake", "I used ReLU instead of tanh."),
    BlindCase(CHECK, "sigmoid", RNNSigmoid, "mistake", "I used a sigmoid instead of tanh."),
    BlindCase(
        CHECK,
        "ignores_state",
        RNNIgnoresState,
        "mistake",
        "I left the previous state out: tanh(W_in x + b).",
    ),
    BlindCase(
        CHECK,
        "ignores_input",
        RNNIgnoresInput,
        "mistake",
        "I left the input out and kept only the bias from in_proj.",
    ),
    BlindCase(
        CHECK,
        "tanh_per_term",
        RNNTanhPerTerm,
        "mistake",
        "I took the tanh of each term separately and added them.",
    ),
    BlindCase(
        CHECK,
        "tanh_on_state_only",
        RNNTanhOnStateOnly,
        "mistake",
        "I put the tanh around the state term only.",
    ),
    BlindCase(
        CHECK,
        "state_proj_with_bias",
        RNNStateBias,
        "mistake",
        "I gave state_proj a bias too (nn.Linear's default), so there are two biases.",
    ),
    BlindCase(
        CHECK,
        "no_bias",
        RNNNoBias,
        "mistake",
        "I made in_proj bias-free as well, so there is no b.",
    ),
    BlindCase(
        CHECK,
        "state_weight_transposed",
        RNNStateWeightTransposed,
        "mistake",
        "I wrote s_prev @ state_proj.weight, which multiplies by W_s^T (no error, it is square).",
    ),
    BlindCase(
        CHECK,
        "remembers_state",
        RNNRemembersState,
        "mistake",
        "I kept the last state in self.s and used it instead of s_prev on the next call.",
    ),
    BlindCase(
        CHECK,
        "detached_state",
        RNNDetachedState,
        "mistake",
        "I detached s_prev inside the cell, so no gradient flows back to earlier steps.",
    ),
    BlindCase(
        CHECK,
        "tanh_on_input",
        RNNTanhTwice,
        "mistake",
        "I squashed the input with tanh before in_proj as well.",
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
        "by_hand_addmm",
        RNNByHand,
        "correct",
        "The formula written with addmm and the layers' weights and bias.",
    ),
    BlindCase(
        CHECK,
        "defaults_and_nonlinearity",
        RNNWithDefaults,
        "correct",
        "s_prev defaults to zeros; an extra nonlinearity argument defaulting to tanh.",
    ),
    BlindCase(
        CHECK,
        "concatenated_input",
        RNNConcatenated,
        "correct",
        "[x; s_prev] times [W_in, W_s] in one product (the 'shared MLP' view).",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        RNNFloat64Inside,
        "correct",
        "Computed in float64, cast back to the input's dtype.",
    ),
]
