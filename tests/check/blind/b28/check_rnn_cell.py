"""Blind set B28, check_rnn_cell (chapter 2): one step of a simple RNN as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_rnn_cell"


class _Layers(nn.Module):
    """The two linear maps under the book's names, as the cell's docstring asks."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class RNNSigmoid(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.sigmoid(self.in_proj(x) + self.state_proj(s_prev))  # keeps it in (0, 1)


class RNNTanhOnInputOnly(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x)) + self.state_proj(s_prev)


class RNNStateProjWithBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # default bias=True

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNNoInputBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size, bias=False)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNResidualState(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        # keep the old memory and add the new information to it
        return s_prev + torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNColumnVectors(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        # the notes' column form: W_in x_t + W_s s_{t-1} + b, with x as columns
        W_in, b, W_s = self.in_proj.weight, self.in_proj.bias, self.state_proj.weight
        return torch.tanh(W_in @ x.T + W_s @ s_prev.T + b[:, None])  # (H, B)


class RNNReturnsPair(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> tuple[Tensor, Tensor]:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s, s  # output and new state, as nn.RNN returns


class RNNArgumentsSwapped(_Layers):
    def forward(self, s_prev: Tensor, x: Tensor) -> Tensor:  # state first, as in the formula
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNOwnNames(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.W_in = nn.Linear(input_size, hidden_size)  # named as in the formula
        self.W_s = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.W_in(x) + self.W_s(s_prev))


class RNNLinearSizesSwapped(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(hidden_size, input_size)  # W_in is H x D_in
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNDetachedState(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        # the old state is a constant by now, no need to keep its graph
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev.detach()))


class RNNTanhTwice(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(torch.tanh(self.in_proj(x)) + torch.tanh(self.state_proj(s_prev)))


# ---------------------------------------------------------------- correct variants


class RNNOneMatrix(_Layers):
    """The "shared MLP" view: one product of [W_in W_s] with [x; s]."""

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        W = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)  # (H, D_in + H)
        return torch.tanh(F.linear(torch.cat([x, s_prev], dim=1), W, self.in_proj.bias))


class RNNOptionalState(nn.Module):
    """s_prev may be None (zeros); extra bias and nonlinearity arguments with defaults."""

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh"
    ) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.act = torch.tanh if nonlinearity == "tanh" else torch.relu
        self.in_proj = nn.Linear(input_size, hidden_size, bias=bias)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        bound = hidden_size**-0.5
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)

    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = torch.zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device)
        return self.act(self.in_proj(x) + self.state_proj(s_prev))


class RNNAddmm(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        pre = torch.addmm(self.in_proj.bias, x, self.in_proj.weight.T)  # b + x W_in^T
        pre = pre + s_prev @ self.state_proj.weight.T
        return pre.tanh()


class RNNEinsumInPlace(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        pre = torch.einsum("hd,bd->bh", self.in_proj.weight, x)
        pre = pre + torch.einsum("hk,bk->bh", self.state_proj.weight, s_prev) + self.in_proj.bias
        return pre.tanh_()  # pre is a fresh tensor of mine


CASES = [
    BlindCase(
        CHECK,
        "sigmoid_not_tanh",
        RNNSigmoid,
        "mistake",
        "I used a sigmoid as the nonlinearity instead of tanh.",
    ),
    BlindCase(
        CHECK,
        "tanh_on_input_only",
        RNNTanhOnInputOnly,
        "mistake",
        "I put the tanh around the input term only and added W_s s_{t-1} after it.",
    ),
    BlindCase(
        CHECK,
        "state_proj_with_bias",
        RNNStateProjWithBias,
        "mistake",
        "I left state_proj with nn.Linear's default bias, so there are two biases.",
    ),
    BlindCase(
        CHECK,
        "in_proj_without_bias",
        RNNNoInputBias,
        "mistake",
        "I made both linear maps bias-free, so the cell has no b at all.",
    ),
    BlindCase(
        CHECK,
        "adds_old_state",
        RNNResidualState,
        "mistake",
        "I added s_{t-1} to the new state to help the memory: s_t = s_{t-1} + tanh(...).",
    ),
    BlindCase(
        CHECK,
        "column_vectors",
        RNNColumnVectors,
        "mistake",
        "I wrote the formula with column vectors, W_in @ x.T, and return the state as (H, B).",
    ),
    BlindCase(
        CHECK,
        "returns_output_and_state",
        RNNReturnsPair,
        "mistake",
        "I return (output, state) like nn.RNN instead of just the new state.",
    ),
    BlindCase(
        CHECK,
        "forward_state_first",
        RNNArgumentsSwapped,
        "mistake",
        "My forward takes (s_prev, x) instead of (x, s_prev).",
    ),
    BlindCase(
        CHECK,
        "own_layer_names",
        RNNOwnNames,
        "mistake",
        "I named the layers W_in and W_s as in the formula, not in_proj and state_proj.",
    ),
    BlindCase(
        CHECK,
        "in_proj_sizes_swapped",
        RNNLinearSizesSwapped,
        "mistake",
        "Since W_in is H x D_in, I wrote nn.Linear(hidden_size, input_size) for in_proj.",
    ),
    BlindCase(
        CHECK,
        "previous_state_detached",
        RNNDetachedState,
        "mistake",
        "I detached s_prev before state_proj, so no gradient flows back to earlier steps.",
    ),
    BlindCase(
        CHECK,
        "tanh_on_each_term",
        RNNTanhTwice,
        "mistake",
        "I squashed each of the two terms with tanh and then the sum again.",
    ),
    BlindCase(
        CHECK,
        "one_concatenated_matrix",
        RNNOneMatrix,
        "correct",
        "The shared-MLP form: [x; s_prev] times the concatenated weights [W_in W_s], plus b.",
    ),
    BlindCase(
        CHECK,
        "optional_state_and_options",
        RNNOptionalState,
        "correct",
        "s_prev defaults to None (zeros); bias and nonlinearity arguments with defaults; "
        "nn.RNN's uniform init.",
    ),
    BlindCase(
        CHECK,
        "addmm",
        RNNAddmm,
        "correct",
        "torch.addmm for b + x W_in^T, then the state term, then tanh as a method.",
    ),
    BlindCase(
        CHECK,
        "einsum_inplace_tanh",
        RNNEinsumInPlace,
        "correct",
        "einsum for both products and an in-place tanh_ on the fresh pre-activation.",
    ),
]
