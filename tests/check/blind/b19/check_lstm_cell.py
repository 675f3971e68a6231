"""Blind set B19, check_lstm_cell (chapter 3): one LSTM step as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_lstm_cell"


class _Base(nn.Module):
    """The book's two layers; the mistakes below differ only in ``forward``."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class LSTMSwapInputForget(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        f, i, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)  # f first
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOrderIFOG(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, o, g = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)  # the 3 gates first
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMSigmoidCandidate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = torch.sigmoid(self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = f * c + i * g
        return o * torch.tanh(c), c


class LSTMNoForget(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = c + torch.sigmoid(i) * torch.tanh(g)  # the diary only grows
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMNoTanhOnCell(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * c, c


class LSTMReturnsCellFirst(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return c, h


class LSTMStateUnpackedReversed(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        c, h = state  # the diary first
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMForgetsHidden(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * h + torch.sigmoid(i) * torch.tanh(g)  # f erases the old h
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMCoupledGates(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        f = torch.sigmoid(f)
        c = f * c + (1 - f) * torch.tanh(g)  # write what was erased, as in a GRU
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOutputFromOldCell(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c_prev = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c_prev), c  # shows the diary before the update


class LSTMChunkBatch(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)  # (B, 4H)
        H = self.hidden_size
        i, f, g, o = z.view(4, -1, H)  # split the rows of z as the four blocks
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


# ---------------------------------------------------------------- correct variants


class LSTMSlices(_Base):
    """Explicit slices of the four blocks, optional state."""

    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        H = self.hidden_size
        if state is None:
            zeros = x.new_zeros(x.shape[0], H)
            state = (zeros, zeros)
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)
        i = torch.sigmoid(z[:, :H])
        f = torch.sigmoid(z[:, H : 2 * H])
        g = torch.tanh(z[:, 2 * H : 3 * H])
        o = torch.sigmoid(z[:, 3 * H :])
        c_new = f * c + i * g
        return o * torch.tanh(c_new), c_new


class LSTMUnflatten(_Base):
    """The four blocks by unflatten/unbind, the gates with one sigmoid, addcmul."""

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h_prev, c_prev = state
        z = self.in_proj(x) + self.state_proj(h_prev)
        blocks = z.unflatten(-1, (4, self.hidden_size))  # (B, 4, H)
        gates = torch.sigmoid(blocks[:, [0, 1, 3]])
        i, f, o = gates.unbind(1)
        g = torch.tanh(blocks[:, 2])
        c = torch.addcmul(f * c_prev, i, g)
        h = o * c.tanh()
        return h, c


class LSTMConcatWeights(_Base):
    """One matrix product of [x; h] with the two weights side by side; helper method."""

    def gates(self, x: Tensor, h: Tensor) -> Tensor:
        W = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)  # (4H, D_in + H)
        return F.linear(torch.cat([x, h], dim=-1), W, self.in_proj.bias)

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.gates(x, h).chunk(4, 1)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        return o.sigmoid() * c.tanh(), c


CASES = [
    BlindCase(
        CHECK,
        "swap_input_forget",
        LSTMSwapInputForget,
        "mistake",
        "I split the blocks as f, i, g, o, so the input and forget gates are swapped.",
    ),
    BlindCase(
        CHECK,
        "order_ifog",
        LSTMOrderIFOG,
        "mistake",
        "I took the blocks in the order i, f, o, g (three gates, then the candidate).",
    ),
    BlindCase(
        CHECK,
        "sigmoid_candidate",
        LSTMSigmoidCandidate,
        "mistake",
        "I applied one sigmoid to all four blocks, the candidate too.",
    ),
    BlindCase(
        CHECK, "no_forget_gate", LSTMNoForget, "mistake", "I added to c without the forget gate."
    ),
    BlindCase(
        CHECK,
        "no_tanh_on_cell",
        LSTMNoTanhOnCell,
        "mistake",
        "I wrote h = o * c, without the tanh of the new memory.",
    ),
    BlindCase(
        CHECK,
        "returns_cell_first",
        LSTMReturnsCellFirst,
        "mistake",
        "I returned (c, h) instead of (h, c).",
    ),
    BlindCase(
        CHECK,
        "state_unpacked_reversed",
        LSTMStateUnpackedReversed,
        "mistake",
        "I unpacked the state as c, h = state.",
    ),
    BlindCase(
        CHECK,
        "forget_gate_on_h",
        LSTMForgetsHidden,
        "mistake",
        "I multiplied the forget gate with the previous h instead of the previous c.",
    ),
    BlindCase(
        CHECK,
        "coupled_gates",
        LSTMCoupledGates,
        "mistake",
        "I wrote the new memory with (1 - f) instead of the input gate.",
    ),
    BlindCase(
        CHECK,
        "output_from_old_cell",
        LSTMOutputFromOldCell,
        "mistake",
        "I computed h from tanh of the previous c, not the new one.",
    ),
    BlindCase(
        CHECK,
        "view_blocks_wrong_axis",
        LSTMChunkBatch,
        "mistake",
        "I split z with view(4, -1, H), which cuts across the batch, not the four blocks.",
    ),
    BlindCase(
        CHECK,
        "explicit_slices",
        LSTMSlices,
        "correct",
        "The four blocks by explicit slices of width H; the state may be None (zeros).",
    ),
    BlindCase(
        CHECK,
        "unflatten_addcmul",
        LSTMUnflatten,
        "correct",
        "unflatten to (B, 4, H), one sigmoid for the three gates, addcmul for the memory.",
    ),
    BlindCase(
        CHECK,
        "concatenated_weights",
        LSTMConcatWeights,
        "correct",
        "One F.linear of [x; h] with both weights concatenated, in a helper method.",
    ),
]
