"""Blind set B32, check_rnn_cell (chapter 2): one step of a simple RNN as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_rnn_cell"


class _Base(nn.Module):
    """The two layers under the book's names; forward differs from class to class."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class RNNNoTanh(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(s_prev)  # linear recurrence


class RNNSigmoid(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.sigmoid(self.in_proj(x) + self.state_proj(s_prev))


class RNNRelu(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))


class RNNTanhOnStateOnly(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return self.in_proj(x) + torch.tanh(self.state_proj(s_prev))


class RNNTwoTanhs(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x)) + torch.tanh(self.state_proj(s_prev))


class RNNStateWithBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # bias left at its default, True

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNNoBiasAnywhere(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size, bias=False)  # copied bias=False twice
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNStateWeightTransposed(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        w_s = self.state_proj.weight  # (H, H)
        return torch.tanh(self.in_proj(x) + s_prev @ w_s)  # forgot the .T that Linear applies


class RNNMultiplies(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) * self.state_proj(s_prev))


class RNNResidual(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return s_prev + torch.tanh(self.in_proj(x) + self.state_proj(s_prev))  # update the state


class RNNReturnsPair(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> tuple[Tensor, Tensor]:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s, s  # (output, state), like nn.RNN


class RNNKeepsState(_Base):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__(input_size, hidden_size)
        self.s = None

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        if self.s is not None and self.s.shape == s_prev.shape:
            s_prev = self.s  # carry my own state from the last call
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        self.s = s.detach()
        return s


class RNNFloat32Out(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev)).float()


class RNNStateDetached(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        # detach the previous state "to stop the gradient from exploding"
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev.detach()))


# ---------------------------------------------------------------- correct variants


class RNNManualMatmul(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        z = x @ self.in_proj.weight.T + self.in_proj.bias + s_prev @ self.state_proj.weight.T
        return torch.tanh(z)


class RNNInPlaceOwn(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, hidden_size, bias=bias)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = x.new_zeros(x.shape[0], self.hidden_size)
        z = self.in_proj(x)
        z.add_(self.state_proj(s_prev))  # in place on my own tensor
        return z.tanh_()


class RNNEinsumAddmm(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        state_part = torch.einsum("bh,gh->bg", s_prev, self.state_proj.weight)
        z = torch.addmm(self.in_proj.bias, x, self.in_proj.weight.T) + state_part
        return z.tanh()


class RNNFloat64Inside(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        dtype = x.dtype
        z = F.linear(x.double(), self.in_proj.weight.double(), self.in_proj.bias.double())
        z = z + F.linear(s_prev.double(), self.state_proj.weight.double())
        return torch.tanh(z).to(dtype)


CASES = [
    BlindCase(CHECK, "no_tanh", RNNNoTanh, "mistake", "I forgot the tanh."),
    BlindCase(CHECK, "sigmoid", RNNSigmoid, "mistake", "I used a sigmoid instead of tanh."),
    BlindCase(CHECK, "relu", RNNRelu, "mistake", "I used ReLU as the nonlinearity."),
    BlindCase(
        CHECK,
        "tanh_on_state_only",
        RNNTanhOnStateOnly,
        "mistake",
        "I put the tanh around the state term only, not around the whole sum.",
    ),
    BlindCase(
        CHECK,
        "two_tanhs",
        RNNTwoTanhs,
        "mistake",
        "I applied tanh to each term separately and added them.",
    ),
    BlindCase(
        CHECK,
        "state_proj_with_bias",
        RNNStateWithBias,
        "mistake",
        "I gave state_proj a bias too, so there are two biases.",
    ),
    BlindCase(
        CHECK,
        "no_bias_at_all",
        RNNNoBiasAnywhere,
        "mistake",
        "I wrote bias=False for in_proj as well, so the cell has no bias b.",
    ),
    BlindCase(
        CHECK,
        "state_weight_transposed",
        RNNStateWeightTransposed,
        "mistake",
        "I multiplied s_prev by state_proj.weight directly, i.e. by W_s transposed.",
    ),
    BlindCase(
        CHECK,
        "multiplies_terms",
        RNNMultiplies,
        "mistake",
        "I multiplied the input term and the state term instead of adding them.",
    ),
    BlindCase(
        CHECK,
        "residual_update",
        RNNResidual,
        "mistake",
        "I added the old state to the new one, s_prev + tanh(...), as an 'update'.",
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
        "keeps_state",
        RNNKeepsState,
        "mistake",
        "I stored the state in self.s and used it instead of s_prev on later calls.",
    ),
    BlindCase(
        CHECK,
        "float32_output",
        RNNFloat32Out,
        "mistake",
        "I cast the new state to float32 at the end.",
    ),
    BlindCase(
        CHECK,
        "state_detached",
        RNNStateDetached,
        "mistake",
        "I detached s_prev to stop exploding gradients, so no gradient flows to the old state.",
    ),
    BlindCase(
        CHECK,
        "manual_matmul",
        RNNManualMatmul,
        "correct",
        "x @ W_in^T + b + s @ W_s^T written out with the layers' weights.",
    ),
    BlindCase(
        CHECK,
        "in_place_with_defaults",
        RNNInPlaceOwn,
        "correct",
        "add_ and tanh_ on my own intermediate tensor; bias flag and s_prev=None with defaults.",
    ),
    BlindCase(
        CHECK,
        "einsum_addmm",
        RNNEinsumAddmm,
        "correct",
        "einsum for the state term, addmm for the input term.",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        RNNFloat64Inside,
        "correct",
        "Computed in float64 and cast back to the input's dtype.",
    ),
]
