"""Blind set B32, check_lstm_cell (chapter 3): one LSTM step as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_lstm_cell"


class _Base(nn.Module):
    """The two layers under the book's names; forward differs from class to class."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)

    def gates(self, x: Tensor, h: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(h)  # (B, 4H)


# ---------------------------------------------------------------- mistakes


class LSTMForgetInputSwapped(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        f, i, g, o = self.gates(x, h).chunk(4, dim=-1)  # I wrote them in the order of the text
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOrderIFOG(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, o, g = self.gates(x, h).chunk(4, dim=-1)  # the three sigmoid gates first
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMSigmoidCandidate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = torch.sigmoid(self.gates(x, h)).chunk(4, dim=-1)  # one sigmoid for all four
        c = f * c + i * g
        return o * torch.tanh(c), c


class LSTMNoForget(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.gates(x, h).chunk(4, dim=-1)
        c = c + torch.sigmoid(i) * torch.tanh(g)  # the diary only adds
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMNoTanhOnOutput(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.gates(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * c, c


class LSTMTanhOutside(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.gates(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.tanh(torch.sigmoid(o) * c), c  # tanh around the product


class LSTMReturnsCH(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.gates(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return c, h  # the diary first


class LSTMCoupledGates(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.gates(x, h).chunk(4, dim=-1)
        f = torch.sigmoid(f)
        c = f * c + (1 - f) * torch.tanh(g)  # write what was erased
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMInterleavedSplit(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.gates(x, h)
        i, f, g, o = z.view(z.shape[0], self.hidden_size, 4).unbind(-1)  # (B, H, 4)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOutputGateTanh(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.gates(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.tanh(o) * torch.tanh(c), c


class LSTMOutputFromOldCell(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c_prev = state
        i, f, g, o = self.gates(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c_prev), c  # h read from the old diary


class LSTMIgnoresH(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        _, c = state
        i, f, g, o = self.in_proj(x).chunk(4, dim=-1)  # the gates from the input only
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMStateBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size)  # a bias here too, as nn.LSTM

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMDetachH(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.gates(x, h.detach()).chunk(4, dim=-1)  # truncate backprop at h
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


# ---------------------------------------------------------------- correct variants


class LSTMSlices(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        H = self.hidden_size
        z = self.gates(x, h)
        i = torch.sigmoid(z[:, 0:H])
        f = torch.sigmoid(z[:, H : 2 * H])
        g = torch.tanh(z[:, 2 * H : 3 * H])
        o = torch.sigmoid(z[:, 3 * H :])
        c_new = f * c + i * g
        return o * torch.tanh(c_new), c_new


class LSTMUnflatten(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True) -> None:
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size, bias=bias)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)

    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h, c = state
        z = (self.in_proj(x) + self.state_proj(h)).unflatten(-1, (4, self.hidden_size))
        i, f, g, o = z.unbind(-2)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        h = o.sigmoid() * c.tanh()
        return h, c


class LSTMManualWeights(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = torch.einsum("bi,gi->bg", x, self.in_proj.weight) + self.in_proj.bias
        z = z + torch.einsum("bh,gh->bg", h, self.state_proj.weight)
        i, f, g, o = torch.split(z, self.hidden_size, dim=1)
        c = torch.addcmul(torch.sigmoid(f) * c, torch.sigmoid(i), torch.tanh(g))
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMSigmoidViaTanh(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.gates(x, h).chunk(4, dim=-1)

        def sig(t: Tensor) -> Tensor:
            return 0.5 * (1 + torch.tanh(t / 2))  # sigmoid(t) = (1 + tanh(t/2)) / 2

        c = sig(f) * c + sig(i) * torch.tanh(g)
        return sig(o) * torch.tanh(c), c


CASES = [
    BlindCase(
        CHECK,
        "forget_input_swapped",
        LSTMForgetInputSwapped,
        "mistake",
        "I split the blocks as f, i, g, o instead of PyTorch's i, f, g, o.",
    ),
    BlindCase(
        CHECK,
        "order_ifog",
        LSTMOrderIFOG,
        "mistake",
        "I split the blocks as i, f, o, g (the sigmoid gates together), not i, f, g, o.",
    ),
    BlindCase(
        CHECK,
        "sigmoid_on_all_blocks",
        LSTMSigmoidCandidate,
        "mistake",
        "I applied one sigmoid to all four blocks, so the candidate g gets a sigmoid too.",
    ),
    BlindCase(
        CHECK,
        "no_forget_gate",
        LSTMNoForget,
        "mistake",
        "I wrote c = c_prev + i * g, leaving out the forget gate.",
    ),
    BlindCase(
        CHECK,
        "no_tanh_on_cell_output",
        LSTMNoTanhOnOutput,
        "mistake",
        "I wrote h = o * c without the tanh of the new memory.",
    ),
    BlindCase(
        CHECK,
        "tanh_outside_product",
        LSTMTanhOutside,
        "mistake",
        "I wrote h = tanh(o * c) instead of o * tanh(c).",
    ),
    BlindCase(
        CHECK,
        "returns_c_h",
        LSTMReturnsCH,
        "mistake",
        "I returned (c, h) instead of (h, c).",
    ),
    BlindCase(
        CHECK,
        "coupled_gates",
        LSTMCoupledGates,
        "mistake",
        "I wrote c = f * c + (1 - f) * g, using 1 - f as the input gate (GRU style).",
    ),
    BlindCase(
        CHECK,
        "interleaved_split",
        LSTMInterleavedSplit,
        "mistake",
        "I split the 4H features with view(B, H, 4).unbind(-1), so each gate takes every fourth "
        "feature instead of one contiguous block.",
    ),
    BlindCase(
        CHECK,
        "output_gate_tanh",
        LSTMOutputGateTanh,
        "mistake",
        "I used tanh instead of sigmoid for the output gate.",
    ),
    BlindCase(
        CHECK,
        "h_from_old_cell",
        LSTMOutputFromOldCell,
        "mistake",
        "I computed h from tanh of the previous cell state instead of the new one.",
    ),
    BlindCase(
        CHECK,
        "gates_ignore_h",
        LSTMIgnoresH,
        "mistake",
        "I computed the gates from in_proj(x) alone and never used state_proj(h).",
    ),
    BlindCase(
        CHECK,
        "state_proj_bias",
        LSTMStateBias,
        "mistake",
        "I left state_proj with a bias, as nn.LSTM has two biases.",
    ),
    BlindCase(
        CHECK,
        "h_detached",
        LSTMDetachH,
        "mistake",
        "I detached h before state_proj to truncate backprop, so no gradient reaches h.",
    ),
    BlindCase(
        CHECK,
        "explicit_slices",
        LSTMSlices,
        "correct",
        "The four blocks taken with explicit slices z[:, k*H:(k+1)*H].",
    ),
    BlindCase(
        CHECK,
        "unflatten_with_defaults",
        LSTMUnflatten,
        "correct",
        "unflatten(-1, (4, H)).unbind(-2) for the blocks; bias flag and state=None defaults.",
    ),
    BlindCase(
        CHECK,
        "einsum_split_addcmul",
        LSTMManualWeights,
        "correct",
        "einsum with the layers' weights, torch.split, and addcmul for the diary.",
    ),
    BlindCase(
        CHECK,
        "sigmoid_via_tanh",
        LSTMSigmoidViaTanh,
        "correct",
        "The sigmoid written as (1 + tanh(t / 2)) / 2.",
    ),
]
