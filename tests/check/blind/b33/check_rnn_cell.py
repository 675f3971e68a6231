"""Blind set B33, check_rnn_cell (chapter 2): one step of a simple RNN as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_rnn_cell"


class _Base(nn.Module):
    """The two layers as the skeleton asks; each mistake overrides only what it gets wrong."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class RNNNoTanh(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(s_prev)  # f left out: a linear recurrence


class RNNForgetsState(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x))


class RNNForgetsInput(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.state_proj(s_prev))


class RNNRelu(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))


class RNNSigmoid(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.sigmoid(self.in_proj(x) + self.state_proj(s_prev))  # keeps it bounded too


class RNNTanhOnStateOnly(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + torch.tanh(self.state_proj(s_prev))


class RNNStateBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # default bias=True, like b_hh

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNNoBiasAtAll(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size, bias=False)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNStateWeightNotTransposed(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        W_in, b, W_s = self.in_proj.weight, self.in_proj.bias, self.state_proj.weight
        return torch.tanh(x @ W_in.T + b + s_prev @ W_s)  # W_s is square, so no .T needed


class RNNReturnsPair(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> tuple[Tensor, Tensor]:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s, s  # (output, state), like nn.RNN


class RNNCastsToFloat32(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s.float()  # states are float32


class RNNSwappedSizes(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(hidden_size, input_size)  # W_in is H x D_in
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


# ---------------------------------------------------------------- correct variants


class RNNByHand(_Base):
    """The formula with the weights written out, row vectors on the left."""

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        W_in, b, W_s = self.in_proj.weight, self.in_proj.bias, self.state_proj.weight
        return torch.tanh(x @ W_in.T + s_prev @ W_s.T + b)


class RNNOneMLP(_Base):
    """The "shared MLP" view: one product with [W_in W_s] on the concatenation [x; s]."""

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        W = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)  # (H, D_in + H)
        xs = torch.cat([x, s_prev], dim=1)  # (B, D_in + H)
        return torch.tanh(F.linear(xs, W, self.in_proj.bias))


class RNNOptionalState(nn.Module):
    """Extra keyword arguments with defaults, and a zero state when none is given."""

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh"
    ) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.act = torch.tanh if nonlinearity == "tanh" else torch.relu
        self.in_proj = nn.Linear(input_size, hidden_size, bias=bias)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = torch.zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device)
        pre = self.in_proj(x)
        pre = pre + self.state_proj(s_prev)
        return self.act(pre)


class RNNAddmm(_Base):
    """torch.addmm for the input part, F.linear for the state part."""

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        a = torch.addmm(self.in_proj.bias, x, self.in_proj.weight.t())
        return (a + F.linear(s_prev, self.state_proj.weight)).tanh()


CASES = [
    BlindCase(CHECK, "no_tanh", RNNNoTanh, "mistake", "I forgot the tanh around the sum."),
    BlindCase(
        CHECK,
        "forgets_state",
        RNNForgetsState,
        "mistake",
        "I computed tanh(in_proj(x)) and never used s_prev.",
    ),
    BlindCase(
        CHECK,
        "forgets_input",
        RNNForgetsInput,
        "mistake",
        "I only used the previous state: tanh(state_proj(s_prev)), without the input x.",
    ),
    BlindCase(CHECK, "relu", RNNRelu, "mistake", "I used ReLU instead of tanh as f."),
    BlindCase(
        CHECK,
        "sigmoid",
        RNNSigmoid,
        "mistake",
        "I used a sigmoid as the nonlinearity, since it also keeps the state bounded.",
    ),
    BlindCase(
        CHECK,
        "tanh_on_state_only",
        RNNTanhOnStateOnly,
        "mistake",
        "I put the tanh around state_proj(s_prev) only and added in_proj(x) outside it.",
    ),
    BlindCase(
        CHECK,
        "state_bias",
        RNNStateBias,
        "mistake",
        "I left state_proj with its default bias, like PyTorch's b_hh, so there are two biases.",
    ),
    BlindCase(
        CHECK,
        "no_bias",
        RNNNoBiasAtAll,
        "mistake",
        "I made both linear layers bias=False, so there is no b at all.",
    ),
    BlindCase(
        CHECK,
        "state_weight_not_transposed",
        RNNStateWeightNotTransposed,
        "mistake",
        "I wrote the product by hand and multiplied s_prev by W_s without transposing it, since "
        "it is square.",
    ),
    BlindCase(
        CHECK,
        "returns_pair",
        RNNReturnsPair,
        "mistake",
        "I return (output, state) like nn.RNN does, both the new state.",
    ),
    BlindCase(
        CHECK,
        "casts_to_float32",
        RNNCastsToFloat32,
        "mistake",
        "I call .float() on the new state before returning it.",
    ),
    BlindCase(
        CHECK,
        "swapped_sizes",
        RNNSwappedSizes,
        "mistake",
        "I built in_proj as nn.Linear(hidden_size, input_size) because W_in is H x D_in.",
    ),
    BlindCase(
        CHECK,
        "by_hand",
        RNNByHand,
        "correct",
        "The formula with the weight matrices and the bias written out: x W_in^T + s W_s^T + b.",
    ),
    BlindCase(
        CHECK,
        "one_mlp",
        RNNOneMLP,
        "correct",
        "One linear map on the concatenation [x; s_prev] with the two weights side by side.",
    ),
    BlindCase(
        CHECK,
        "optional_state",
        RNNOptionalState,
        "correct",
        "Extra arguments bias and nonlinearity with defaults, and s_prev=None means zeros.",
    ),
    BlindCase(
        CHECK,
        "addmm",
        RNNAddmm,
        "correct",
        "torch.addmm for W_in x + b and F.linear for W_s s, then .tanh().",
    ),
]
