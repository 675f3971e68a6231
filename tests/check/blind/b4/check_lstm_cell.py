"""Blind cases for check_lstm_cell (chapter 3), written from the chapter's text only."""

from __future__ import annotations

import torch
from torch import nn

from .. import BlindCase

CHECK = "check_lstm_cell"


class _Layers(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)

    def z(self, x, h):
        return self.in_proj(x) + self.state_proj(h)


class OrderIFOG(_Layers):
    def forward(self, x, state):
        h, c = state
        i, f, o, g = self.z(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class ReturnsCThenH(_Layers):
    def forward(self, x, state):
        h, c = state
        i, f, g, o = self.z(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return c, h


class OutputFromOldMemory(_Layers):
    def forward(self, x, state):
        h, c_prev = state
        i, f, g, o = self.z(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c_prev)
        return h, c


class SigmoidOnAllFour(_Layers):
    def forward(self, x, state):
        h, c = state
        i, f, g, o = torch.sigmoid(self.z(x, h)).chunk(4, dim=-1)
        c = f * c + i * g
        return o * torch.tanh(c), c


class CoupledGates(_Layers):
    def forward(self, x, state):
        h, c = state
        _, f, g, o = self.z(x, h).chunk(4, dim=-1)
        f = torch.sigmoid(f)
        c = f * c + (1 - f) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class InterleavedBlocks(_Layers):
    def forward(self, x, state):
        h, c = state
        B = x.shape[0]
        i, f, g, o = self.z(x, h).view(B, self.hidden_size, 4).unbind(-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class NoForgetGate(_Layers):
    def forward(self, x, state):
        h, c = state
        i, f, g, o = self.z(x, h).chunk(4, dim=-1)
        c = c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class ViewBlocks(_Layers):
    def forward(self, x, state):
        h, c = state
        B, H = x.shape[0], self.hidden_size
        i, f, g, o = self.z(x, h).view(B, 4, H).unbind(1)
        c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * c_new.tanh(), c_new


class SlicesAndDefault(_Layers):
    def forward(self, x, state=None):
        H = self.hidden_size
        if state is None:
            zeros = x.new_zeros(x.shape[0], H)
            state = (zeros, zeros)
        h, c = state
        z = self.z(x, h)
        i = torch.sigmoid(z[:, 0:H])
        f = torch.sigmoid(z[:, H : 2 * H])
        g = torch.tanh(z[:, 2 * H : 3 * H])
        o = torch.sigmoid(z[:, 3 * H :])
        c = torch.addcmul(f * c, i, g)
        return o * torch.tanh(c), c


class SplitThenGates(_Layers):
    def forward(self, x, state):
        h_prev, c_prev = state
        gates = torch.split(self.z(x, h_prev), self.hidden_size, dim=1)
        i, f, o = (torch.sigmoid(gates[k]) for k in (0, 1, 3))
        g = torch.tanh(gates[2])
        c = i * g + f * c_prev
        h = torch.tanh(c) * o
        return h, c


CASES = [
    BlindCase(
        CHECK,
        "order_ifog",
        OrderIFOG,
        "mistake",
        "I unpacked the blocks as i, f, o, g (output before candidate)",
    ),
    BlindCase(
        CHECK,
        "returns_c_then_h",
        ReturnsCThenH,
        "mistake",
        "I returned (c, h) instead of (h, c)",
    ),
    BlindCase(
        CHECK,
        "output_from_old_memory",
        OutputFromOldMemory,
        "mistake",
        "I computed h from tanh of the old memory c_{t-1} instead of the new one",
    ),
    BlindCase(
        CHECK,
        "sigmoid_on_all_four",
        SigmoidOnAllFour,
        "mistake",
        "I applied one sigmoid to z before splitting, so the candidate got a sigmoid too",
    ),
    BlindCase(
        CHECK,
        "coupled_gates",
        CoupledGates,
        "mistake",
        "I wrote with (1 - f) instead of the input gate, like a GRU's update",
    ),
    BlindCase(
        CHECK,
        "interleaved_blocks",
        InterleavedBlocks,
        "mistake",
        "I reshaped z to (B, H, 4) and took the four gates along the last axis",
    ),
    BlindCase(
        CHECK,
        "no_forget_gate",
        NoForgetGate,
        "mistake",
        "I added the new write to c without multiplying the old memory by f",
    ),
    BlindCase(
        CHECK,
        "view_blocks",
        ViewBlocks,
        "correct",
        "I viewed z as (B, 4, H) and unbound the gate axis",
    ),
    BlindCase(
        CHECK,
        "slices_and_default",
        SlicesAndDefault,
        "correct",
        "explicit slices of z, torch.addcmul for the diary, a zero state by default",
    ),
    BlindCase(
        CHECK,
        "split_then_gates",
        SplitThenGates,
        "correct",
        "torch.split into blocks of H, products written in another order",
    ),
]
