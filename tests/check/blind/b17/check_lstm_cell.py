"""Blind set B17, check_lstm_cell (chapter 3): one LSTM step as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_lstm_cell"


class _Base(nn.Module):
    """The right layers; each mistake below changes only ``forward``."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class LSTMInputForgetSwapped(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        f, i, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)  # "forget first"
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMSigmoidCandidate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = torch.sigmoid(self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = f * c + i * g  # all four blocks through one sigmoid
        return o * torch.tanh(c), c


class LSTMNoForgetGate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = c + torch.sigmoid(i) * torch.tanh(g)  # the diary only adds
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMNoTanhOnCell(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * c, c


class LSTMOrderIFOG(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)
        i, f, o, g = z.chunk(4, dim=-1)  # the three sigmoid gates first, then the candidate
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMReturnsCellFirst(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return c, h  # the state is (c, h)


class LSTMOutputFromOldCell(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c_prev = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c_prev)
        return h, c


class LSTMInterleavedBlocks(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)  # (B, 4H)
        i, f, g, o = z.view(z.shape[0], self.hidden_size, 4).unbind(dim=-1)  # 4 values per unit
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMStateUnpackedBackwards(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        c, h = state  # the memory first, then the output
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMCoupledGates(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        f = torch.sigmoid(f)
        c = f * c + (1 - f) * torch.tanh(g)  # whatever is not kept is written, as in a GRU
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMGatesOnInputOnly(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, _, o = self.in_proj(x).chunk(4, dim=-1)  # gates from the input alone
        g = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)[2]
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


# ---------------------------------------------------------------- correct variants


class LSTMSlices(_Base):
    """Blocks taken by slicing; state may be None (zeros)."""

    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        H = self.hidden_size
        if state is None:
            zeros = x.new_zeros(x.shape[0], H)
            state = (zeros, zeros)
        h_prev, c_prev = state
        z = self.in_proj(x) + self.state_proj(h_prev)
        i = torch.sigmoid(z[:, :H])
        f = torch.sigmoid(z[:, H : 2 * H])
        g = torch.tanh(z[:, 2 * H : 3 * H])
        o = torch.sigmoid(z[:, 3 * H :])
        c = f * c_prev + i * g
        h = o * torch.tanh(c)
        return h, c


class LSTMSplitAddcmul(_Base):
    """split(H), a sigmoid over three blocks at once, and torch.addcmul for the diary."""

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h_prev, c_prev = state
        z = F.linear(x, self.in_proj.weight, self.in_proj.bias) + h_prev @ self.state_proj.weight.T
        i, f, g, o = z.split(self.hidden_size, dim=-1)
        i, f, o = torch.sigmoid(torch.stack([i, f, o])).unbind(0)
        c = torch.addcmul(f * c_prev, i, torch.tanh(g))
        return o * c.tanh(), c


class LSTMViewBlocks(_Base):
    """view(B, 4, H) and a helper method for the gates; an extra ``return_gates`` flag."""

    def gates(self, x: Tensor, h: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        z = (self.in_proj(x) + self.state_proj(h)).view(x.shape[0], 4, self.hidden_size)
        return z[:, 0].sigmoid(), z[:, 1].sigmoid(), z[:, 2].tanh(), z[:, 3].sigmoid()

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor], return_gates: bool = False):
        h, c = state
        i, f, g, o = self.gates(x, h)
        c_new = f * c + i * g
        h_new = o * torch.tanh(c_new)
        return (h_new, c_new, (i, f, g, o)) if return_gates else (h_new, c_new)


CASES = [
    BlindCase(
        CHECK,
        "input_forget_swapped",
        LSTMInputForgetSwapped,
        "mistake",
        "I unpacked the blocks as f, i, g, o, so the input and forget gates are swapped.",
    ),
    BlindCase(
        CHECK,
        "sigmoid_candidate",
        LSTMSigmoidCandidate,
        "mistake",
        "I put one sigmoid over all four blocks, so the candidate is a sigmoid, not a tanh.",
    ),
    BlindCase(
        CHECK,
        "forget_gate_left_out",
        LSTMNoForgetGate,
        "mistake",
        "I wrote c = c_prev + i * g, never multiplying the old memory by f.",
    ),
    BlindCase(
        CHECK,
        "no_tanh_on_new_cell",
        LSTMNoTanhOnCell,
        "mistake",
        "I wrote h = o * c, without the tanh of the new memory.",
    ),
    BlindCase(
        CHECK,
        "order_i_f_o_g",
        LSTMOrderIFOG,
        "mistake",
        "I took the blocks in the order i, f, o, g (gates first) instead of PyTorch's i, f, g, o.",
    ),
    BlindCase(
        CHECK,
        "returns_c_then_h",
        LSTMReturnsCellFirst,
        "mistake",
        "I return (c, h) instead of (h, c).",
    ),
    BlindCase(
        CHECK,
        "output_from_old_cell",
        LSTMOutputFromOldCell,
        "mistake",
        "I computed h from tanh(c_prev), the old memory, instead of the new one.",
    ),
    BlindCase(
        CHECK,
        "interleaved_blocks",
        LSTMInterleavedBlocks,
        "mistake",
        "I reshaped z to (B, H, 4) and unbound the last axis, so each gate takes every fourth "
        "column instead of a block of H.",
    ),
    BlindCase(
        CHECK,
        "state_unpacked_c_h",
        LSTMStateUnpackedBackwards,
        "mistake",
        "I unpacked the state as c, h = state, so state_proj reads the memory.",
    ),
    BlindCase(
        CHECK,
        "coupled_input_forget",
        LSTMCoupledGates,
        "mistake",
        "I wrote c = f * c_prev + (1 - f) * g, tying the input gate to the forget gate as in a GRU.",
    ),
    BlindCase(
        CHECK,
        "gates_from_input_only",
        LSTMGatesOnInputOnly,
        "mistake",
        "My gates i, f, o read only in_proj(x); only the candidate sees the previous h.",
    ),
    BlindCase(
        CHECK,
        "slices",
        LSTMSlices,
        "correct",
        "The four blocks by slicing z[:, k*H:(k+1)*H]; state defaults to zeros.",
    ),
    BlindCase(
        CHECK,
        "split_addcmul",
        LSTMSplitAddcmul,
        "correct",
        "split(H), one sigmoid over the stacked gates, addcmul for the diary, h @ W.T by hand.",
    ),
    BlindCase(
        CHECK,
        "view_blocks_helper",
        LSTMViewBlocks,
        "correct",
        "z viewed as (B, 4, H), a gates() helper method and a return_gates flag defaulting to False.",
    ),
]
