"""Blind set B34, check_lstm_cell (chapter 3): one step of an LSTM as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_lstm_cell"


class _Base(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)

    def gates(self, x: Tensor, h: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        return (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)


# ---------------------------------------------------------------- mistakes


class LSTMSwapIF(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        f, i, g, o = self.gates(x, h)  # forget first, as in "forget gate LSTM"
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOrderIFOG(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, o, g = self.gates(x, h)  # the three sigmoids first, then the candidate
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMSigmoidCandidate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = torch.sigmoid(self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = f * c + i * g  # one sigmoid over all four blocks
        return o * torch.tanh(c), c


class LSTMNoForget(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.gates(x, h)
        c = c + torch.sigmoid(i) * torch.tanh(g)  # the memory just accumulates
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMNoTanhOut(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.gates(x, h)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * c, c


class LSTMCoupledGates(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.gates(x, h)
        f = torch.sigmoid(f)
        c = f * c + (1 - f) * torch.tanh(g)  # the input gate is 1 - f
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMReturnsCH(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.gates(x, h)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return c, h  # (c, h), the order of the diary first


class LSTMStateUnpackedCH(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        c, h = state  # I thought the pair was (c, h)
        i, f, g, o = self.gates(x, h)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOldMemoryInOutput(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c_prev = state
        i, f, g, o = self.gates(x, h)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c_prev), c  # used the old diary for h


class LSTMChunkWrongAxis(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)  # (B, 4H)
        i, f, g, o = z.view(-1, self.hidden_size, 4).unbind(-1)  # interleaved, not blocks
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMDetachedMemory(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.gates(x, h.detach())  # no gradient through the old h
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMForgetBiasAdded(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.gates(x, h)
        f = torch.sigmoid(f + 1.0)  # the forget bias of 1 from the chapter
        c = f * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


# ---------------------------------------------------------------- correct variants


class LSTMSplit(_Base):
    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)
        i, f, g, o = torch.split(z, self.hidden_size, dim=1)
        c_new = f.sigmoid() * c + i.sigmoid() * g.tanh()
        return o.sigmoid() * c_new.tanh(), c_new


class LSTMSlices(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        H = self.hidden_size
        z = self.in_proj(x) + self.state_proj(h)
        ifo = torch.sigmoid(torch.cat([z[:, : 2 * H], z[:, 3 * H :]], dim=-1))
        i, f, o = ifo[:, :H], ifo[:, H : 2 * H], ifo[:, 2 * H :]
        g = torch.tanh(z[:, 2 * H : 3 * H])
        c = torch.addcmul(f * c, i, g)
        return o * torch.tanh(c), c


class LSTMTorchFunctional(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)
        z = z.view(x.shape[0], 4, self.hidden_size)  # blocks in PyTorch's order
        gates = torch.sigmoid(z[:, [0, 1, 3]])
        g = torch.tanh(z[:, 2])
        c = gates[:, 1] * c + gates[:, 0] * g
        return gates[:, 2] * torch.tanh(c), c


CASES = [
    BlindCase(
        CHECK, "swap_input_forget", LSTMSwapIF, "mistake", "I unpacked the blocks as f, i, g, o"
    ),
    BlindCase(
        CHECK,
        "order_ifog",
        LSTMOrderIFOG,
        "mistake",
        "I unpacked the blocks as i, f, o, g, sigmoids first",
    ),
    BlindCase(
        CHECK,
        "sigmoid_everywhere",
        LSTMSigmoidCandidate,
        "mistake",
        "I applied one sigmoid to all four blocks, candidate included",
    ),
    BlindCase(
        CHECK,
        "no_forget_gate",
        LSTMNoForget,
        "mistake",
        "I added the new write to the old memory without the forget gate",
    ),
    BlindCase(
        CHECK,
        "no_tanh_on_memory",
        LSTMNoTanhOut,
        "mistake",
        "I computed h as o times c, without the tanh",
    ),
    BlindCase(
        CHECK,
        "coupled_gates",
        LSTMCoupledGates,
        "mistake",
        "I used 1 - f as the input gate, like a GRU",
    ),
    BlindCase(
        CHECK, "returns_c_h", LSTMReturnsCH, "mistake", "I returned (c, h) instead of (h, c)"
    ),
    BlindCase(
        CHECK, "state_as_c_h", LSTMStateUnpackedCH, "mistake", "I unpacked the state as (c, h)"
    ),
    BlindCase(
        CHECK,
        "old_memory_for_h",
        LSTMOldMemoryInOutput,
        "mistake",
        "I used the previous memory c_{t-1} in h = o * tanh(c)",
    ),
    BlindCase(
        CHECK,
        "interleaved_blocks",
        LSTMChunkWrongAxis,
        "mistake",
        "I reshaped z to (B, H, 4) to get the four gates",
    ),
    BlindCase(
        CHECK,
        "detached_h",
        LSTMDetachedMemory,
        "mistake",
        "I detached h before state_proj to stop exploding gradients",
    ),
    BlindCase(
        CHECK,
        "forget_bias_plus_one",
        LSTMForgetBiasAdded,
        "mistake",
        "I added the +1 forget bias inside the forward",
    ),
    BlindCase(
        CHECK,
        "split_and_default_state",
        LSTMSplit,
        "correct",
        "I used torch.split and let the state default to zeros",
    ),
    BlindCase(
        CHECK,
        "slices_addcmul",
        LSTMSlices,
        "correct",
        "I sliced the blocks by hand and used addcmul for the memory",
    ),
    BlindCase(
        CHECK,
        "view_four_blocks",
        LSTMTorchFunctional,
        "correct",
        "I viewed z as (B, 4, H) and indexed the blocks",
    ),
]
