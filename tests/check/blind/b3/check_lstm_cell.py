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

    def gates(self, x, h):
        return self.in_proj(x) + self.state_proj(h)  # (B, 4H)


class InputForgetSwapped(_Layers):
    def forward(self, x, state):
        h, c = state
        f, i, g, o = self.gates(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class SigmoidCandidate(_Layers):
    def forward(self, x, state):
        h, c = state
        i, f, g, o = torch.sigmoid(self.gates(x, h)).chunk(4, dim=-1)
        c = f * c + i * g
        return o * torch.tanh(c), c


class NoForgetGate(_Layers):
    def forward(self, x, state):
        h, c = state
        i, f, g, o = self.gates(x, h).chunk(4, dim=-1)
        c = c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class OutputWithoutTanh(_Layers):
    def forward(self, x, state):
        h, c = state
        i, f, g, o = self.gates(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * c, c


class PaperOrderIFOG(_Layers):
    def forward(self, x, state):
        h, c = state
        i, f, o, g = self.gates(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class OutputFromOldMemory(_Layers):
    def forward(self, x, state):
        h, c_prev = state
        i, f, g, o = self.gates(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c_prev), c


class CoupledGates(_Layers):
    def forward(self, x, state):
        h, c = state
        i, f, g, o = self.gates(x, h).chunk(4, dim=-1)
        f = torch.sigmoid(f)
        c = f * c + (1 - f) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class SquashedMemory(_Layers):
    def forward(self, x, state):
        h, c = state
        i, f, g, o = self.gates(x, h).chunk(4, dim=-1)
        c = torch.tanh(torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g))
        return torch.sigmoid(o) * torch.tanh(c), c


class ReshapedBlocksFirst(_Layers):
    def forward(self, x, state):
        h, c = state
        i, f, g, o = self.gates(x, h).reshape(4, -1, self.hidden_size)  # 4 x (B, H)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class ReturnsMemoryFirst(_Layers):
    def forward(self, x, state):
        h, c = state
        i, f, g, o = self.gates(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return c, h


class SlicesByHand(_Layers):
    def forward(self, x, state=None):
        H = self.hidden_size
        if state is None:
            zeros = x.new_zeros(x.shape[0], H)
            state = (zeros, zeros)
        h, c = state
        z = self.gates(x, h)
        i = torch.sigmoid(z[:, 0:H])
        f = torch.sigmoid(z[:, H : 2 * H])
        g = torch.tanh(z[:, 2 * H : 3 * H])
        o = torch.sigmoid(z[:, 3 * H :])
        c_new = f * c + i * g
        return o * torch.tanh(c_new), c_new


class ViewAndUnbind(_Layers):
    def forward(self, x, state):
        h, c = state
        z = self.gates(x, h).view(x.shape[0], 4, self.hidden_size)  # (B, 4, H)
        i, f, g, o = z.unbind(dim=1)
        sig = torch.sigmoid
        c_new = torch.addcmul(sig(f) * c, sig(i), torch.tanh(g))
        h_new = sig(o).mul(c_new.tanh())
        return h_new, c_new


class SplitWithFusedSigmoid(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.H = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size, bias=True)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)

    def forward(self, x, state):
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)
        i, f, g, o = torch.split(z, self.H, dim=-1)
        ifo = torch.sigmoid(torch.cat([i, f, o], dim=-1))
        i, f, o = ifo.split(self.H, dim=-1)
        c = f * c + i * torch.tanh(g)
        return o * torch.tanh(c), c


CASES = [
    BlindCase(
        CHECK,
        "input_forget_swapped",
        InputForgetSwapped,
        "mistake",
        "I unpacked the chunks as f, i, g, o: the input and forget gates swapped",
    ),
    BlindCase(
        CHECK,
        "sigmoid_candidate",
        SigmoidCandidate,
        "mistake",
        "I applied sigmoid to all four blocks at once, so the candidate g got a sigmoid, not tanh",
    ),
    BlindCase(
        CHECK,
        "no_forget_gate",
        NoForgetGate,
        "mistake",
        "I wrote c = c_prev + i * g, leaving out the forget gate",
    ),
    BlindCase(
        CHECK,
        "output_without_tanh",
        OutputWithoutTanh,
        "mistake",
        "I wrote h = o * c, without the tanh of the new memory",
    ),
    BlindCase(
        CHECK,
        "paper_order_ifog",
        PaperOrderIFOG,
        "mistake",
        "I split the blocks in the order i, f, o, g instead of PyTorch's i, f, g, o",
    ),
    BlindCase(
        CHECK,
        "output_from_old_memory",
        OutputFromOldMemory,
        "mistake",
        "I computed h from tanh(c_prev), the old memory, instead of the new c",
    ),
    BlindCase(
        CHECK,
        "coupled_gates",
        CoupledGates,
        "mistake",
        "I wrote c = f * c_prev + (1 - f) * g like a GRU, not using the input gate",
    ),
    BlindCase(
        CHECK,
        "squashed_memory",
        SquashedMemory,
        "mistake",
        "I put a tanh around the new memory itself: c = tanh(f * c_prev + i * g)",
    ),
    BlindCase(
        CHECK,
        "reshaped_blocks_first",
        ReshapedBlocksFirst,
        "mistake",
        "I split z with reshape(4, -1, H) instead of chunking the last axis, which mixes the "
        "rows of the batch (right only for batch size 1)",
    ),
    BlindCase(
        CHECK,
        "returns_memory_first",
        ReturnsMemoryFirst,
        "mistake",
        "I returned (c, h) instead of (h, c)",
    ),
    BlindCase(
        CHECK,
        "slices_by_hand",
        SlicesByHand,
        "correct",
        "I sliced the four blocks by hand with z[:, k*H:(k+1)*H], and state is optional",
    ),
    BlindCase(
        CHECK,
        "view_and_unbind",
        ViewAndUnbind,
        "correct",
        "z.view(B, 4, H).unbind(1) for the blocks, and torch.addcmul for the memory",
    ),
    BlindCase(
        CHECK,
        "split_with_fused_sigmoid",
        SplitWithFusedSigmoid,
        "correct",
        "torch.split by H, and one sigmoid over the three gates concatenated",
    ),
]
