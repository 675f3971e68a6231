"""Blind set B11, check_lstm_cell (chapter 3): one LSTM step as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_lstm_cell"


class _Base(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class LSTMForgetFirst(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        f, i, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)  # forget first
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
        c = c + torch.sigmoid(i) * torch.tanh(g)  # keep the diary, add to it
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMNoTanhOnMemory(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * c, c


class LSTMReturnsCH(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return c, h  # the state is (c, h)


class LSTMStateUnpackedCH(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        c, h = state  # memory first
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return h, c


class LSTMInterleavedGates(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)  # (B, 4H)
        i, f, g, o = z.view(z.shape[0], self.hidden_size, 4).unbind(-1)  # (B, H, 4): 4 gates
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOutputFromOldMemory(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c_prev = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c_prev)
        return h, c


class LSTMNoInputGate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.tanh(g)  # write the candidate
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMCoupledGates(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        f = torch.sigmoid(f)
        c = f * c + (1 - f) * torch.tanh(g)  # what is forgotten is replaced
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMDetachedH(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        # no backprop into the previous step's h, as in truncated BPTT
        z = self.in_proj(x) + self.state_proj(h.detach())
        i, f, g, o = z.chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


# ---------------------------------------------------------------- correct variants


class LSTMSplitSlices(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h_prev, c_prev = state
        H = self.hidden_size
        z = F.linear(x, self.in_proj.weight, self.in_proj.bias) + h_prev @ self.state_proj.weight.T
        i = torch.sigmoid(z[:, 0:H])
        f = torch.sigmoid(z[:, H : 2 * H])
        g = torch.tanh(z[:, 2 * H : 3 * H])
        o = torch.sigmoid(z[:, 3 * H :])
        c = torch.addcmul(f * c_prev, i, g)
        return o * c.tanh(), c


class LSTMGatesTogether(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)
        ifo_parts = torch.split(z, self.hidden_size, dim=1)
        gates = torch.sigmoid(torch.cat([ifo_parts[0], ifo_parts[1], ifo_parts[3]], dim=1))
        i, f, o = gates.chunk(3, dim=1)
        g = torch.tanh(ifo_parts[2])
        c_new = f * c
        c_new += i * g  # in place on my own tensor
        return o * torch.tanh(c_new), c_new


class LSTMWithExtras(nn.Module):
    """An optional zero state, a bias flag, and a helper returning the gates."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size, bias=bias)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)

    def gates(self, x: Tensor, h: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        i, f, g, o = torch.chunk(self.in_proj(x) + self.state_proj(h), 4, -1)
        return i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()

    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h, c = state
        i, f, g, o = self.gates(x, h)
        c = f * c + i * g
        h = o * torch.tanh(c)
        return h, c


CASES = [
    BlindCase(
        CHECK,
        "forget_gate_first",
        LSTMForgetFirst,
        "mistake",
        "I split the blocks as f, i, g, o (forget first, as in the equations I remembered).",
    ),
    BlindCase(
        CHECK,
        "sigmoid_on_candidate",
        LSTMSigmoidCandidate,
        "mistake",
        "I applied one sigmoid to all four blocks, the candidate included.",
    ),
    BlindCase(
        CHECK,
        "no_forget_gate",
        LSTMNoForget,
        "mistake",
        "I kept the whole old memory: c' = c + i * g, the forget gate unused.",
    ),
    BlindCase(
        CHECK,
        "no_tanh_on_memory",
        LSTMNoTanhOnMemory,
        "mistake",
        "I wrote h' = o * c' without the tanh of the new memory.",
    ),
    BlindCase(
        CHECK,
        "returns_c_h",
        LSTMReturnsCH,
        "mistake",
        "I return (c, h) instead of (h, c).",
    ),
    BlindCase(
        CHECK,
        "state_unpacked_c_h",
        LSTMStateUnpackedCH,
        "mistake",
        "I unpacked the state as c, h = state, so the memory goes through state_proj.",
    ),
    BlindCase(
        CHECK,
        "gates_interleaved",
        LSTMInterleavedGates,
        "mistake",
        "I reshaped z to (B, H, 4) and unbound the last axis, so the gates are interleaved "
        "columns, not four blocks.",
    ),
    BlindCase(
        CHECK,
        "output_from_old_memory",
        LSTMOutputFromOldMemory,
        "mistake",
        "I computed h' from tanh of the previous memory c instead of the new c'.",
    ),
    BlindCase(
        CHECK,
        "no_input_gate",
        LSTMNoInputGate,
        "mistake",
        "I added tanh(g) to the memory without multiplying by the input gate.",
    ),
    BlindCase(
        CHECK,
        "coupled_input_forget",
        LSTMCoupledGates,
        "mistake",
        "I used 1 - f as the input gate, so what is forgotten is replaced.",
    ),
    BlindCase(
        CHECK,
        "detached_h_prev",
        LSTMDetachedH,
        "mistake",
        "I detached h before state_proj, thinking of truncated backprop, so no gradient "
        "reaches the previous h.",
    ),
    BlindCase(
        CHECK,
        "slices_and_addcmul",
        LSTMSplitSlices,
        "correct",
        "Slices z[:, k*H:(k+1)*H] for the gates, F.linear and matmul, torch.addcmul for c'.",
    ),
    BlindCase(
        CHECK,
        "sigmoid_on_three_at_once",
        LSTMGatesTogether,
        "correct",
        "torch.split, one sigmoid on the concatenated i, f, o, and an in-place += on c'.",
    ),
    BlindCase(
        CHECK,
        "optional_state_gates_helper",
        LSTMWithExtras,
        "correct",
        "The state defaults to zeros, a bias flag, a gates() helper method.",
    ),
]
