"""Chapter 2, "Your turn": ``MyRNNCell(input_size, hidden_size)``, ``forward(x, s_prev)``.

``s_t = tanh(in_proj(x_t) + state_proj(s_{t-1}))``, ``in_proj`` with the bias, ``state_proj``
without.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_rnn_cell"


class _Layers(nn.Module):
    """The two linear maps under the book's names (a base the learners' cells share)."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)


# --- mistakes ---------------------------------------------------------------------------------


class ReluStep(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))


class TanhOnInputOnly(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x)) + self.state_proj(s_prev)


class TwoBiases(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # bias left on, like nn.RNNCell

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class StateWeightNotTransposed(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        # row vectors times W_s, as in x @ W: but nn.Linear stores W as (out, in)
        return torch.tanh(self.in_proj(x) + s_prev @ self.state_proj.weight)


class TupleLikeNnRnn(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> tuple[Tensor, Tensor]:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s, s  # (output, new state), as nn.RNN returns


class NoBiasAnywhere(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size, bias=False)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class SquashesPreviousStateAgain(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(torch.tanh(s_prev)))


class WritesIntoSPrev(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        new = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        with torch.no_grad():
            s_prev.copy_(new)  # keep the state in the same buffer, step after step
        return s_prev


class SqueezedOutput(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev)).squeeze()


class MeanInsteadOfSum(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        # average the two contributions so that neither dominates
        return torch.tanh((self.in_proj(x) + self.state_proj(s_prev)) / 2)


# --- correct variants -------------------------------------------------------------------------


class ConcatenatedMLP(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = x.new_zeros(x.shape[0], self.hidden_size)
        W = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)  # (H, D_in + H)
        return torch.tanh(torch.cat([x, s_prev], dim=1) @ W.T + self.in_proj.bias)


class FunctionalInPlaceTanh(_Layers):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = F.linear(x, self.in_proj.weight, self.in_proj.bias)  # a fresh tensor
        z = z.add_(F.linear(s_prev, self.state_proj.weight))
        return z.tanh_()


class EinsumCell(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True) -> None:
        super().__init__()
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.in_proj = nn.Linear(input_size, hidden_size, bias=bias)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = torch.einsum("bi,hi->bh", x, self.in_proj.weight)
        z = z + torch.einsum("bk,hk->bh", s_prev, self.state_proj.weight)
        if self.in_proj.bias is not None:
            z = z + self.in_proj.bias
        return torch.tanh(z)


CASES = [
    BlindCase(
        CHECK, "relu_step", ReluStep, "mistake", "I used ReLU instead of tanh on the new state."
    ),
    BlindCase(
        CHECK,
        "tanh_on_input_only",
        TanhOnInputOnly,
        "mistake",
        "I put the tanh around in_proj(x) only and added state_proj(s_prev) outside it.",
    ),
    BlindCase(
        CHECK,
        "two_biases",
        TwoBiases,
        "mistake",
        "I left bias=True on state_proj, so my cell adds a second bias vector.",
    ),
    BlindCase(
        CHECK,
        "state_weight_not_transposed",
        StateWeightNotTransposed,
        "mistake",
        "I wrote s_prev @ state_proj.weight without .T, so the previous state meets W_s "
        "transposed.",
    ),
    BlindCase(
        CHECK,
        "tuple_like_nn_rnn",
        TupleLikeNnRnn,
        "mistake",
        "I returned a pair (output, state) like nn.RNN instead of the new state alone.",
    ),
    BlindCase(
        CHECK,
        "no_bias_anywhere",
        NoBiasAnywhere,
        "mistake",
        "I made in_proj bias-free as well, so the cell has no bias b at all.",
    ),
    BlindCase(
        CHECK,
        "squashes_previous_state_again",
        SquashesPreviousStateAgain,
        "mistake",
        "I applied tanh to s_prev before state_proj, squashing the previous state twice.",
    ),
    BlindCase(
        CHECK,
        "writes_into_s_prev",
        WritesIntoSPrev,
        "mistake",
        "I copied the new state into the s_prev tensor I was given and returned it, overwriting "
        "the caller's state.",
    ),
    BlindCase(
        CHECK,
        "squeezed_output",
        SqueezedOutput,
        "mistake",
        "I called .squeeze() on the result, which drops the batch axis when the batch has one row.",
    ),
    BlindCase(
        CHECK,
        "mean_instead_of_sum",
        MeanInsteadOfSum,
        "mistake",
        "I averaged the input and state terms (divided their sum by 2) before the tanh.",
    ),
    BlindCase(
        CHECK,
        "concatenated_mlp",
        ConcatenatedMLP,
        "correct",
        "I computed the step as one linear map on [x; s_prev] with the two weights side by side, "
        "and allowed s_prev=None.",
    ),
    BlindCase(
        CHECK,
        "functional_in_place_tanh",
        FunctionalInPlaceTanh,
        "correct",
        "I used F.linear and in-place add_ and tanh_ on the fresh pre-activation.",
    ),
    BlindCase(
        CHECK,
        "einsum_cell",
        EinsumCell,
        "correct",
        "I wrote both products with einsum and added the bias by hand, with an optional bias flag.",
    ),
]
