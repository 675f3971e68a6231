"""Blind cases for check_lstm_cell (chapter 3)."""

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

    def gates(self, x, h):
        return (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)


class LSTMOrderIFOG(_Base):
    def forward(self, x, state):
        h, c = state
        i, f, o, g = self.gates(x, h)  # the i, f, o, g order of some textbooks
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMNoTanhOnOutput(_Base):
    def forward(self, x, state):
        h, c = state
        i, f, g, o = self.gates(x, h)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * c, c


class LSTMOneMinusForget(_Base):
    def forward(self, x, state):
        h, c = state
        i, f, g, o = self.gates(x, h)
        f = torch.sigmoid(f)
        c = f * c + (1 - f) * torch.tanh(g)  # coupled gates, i = 1 - f
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOutputGateOnOldC(_Base):
    def forward(self, x, state):
        h, c_prev = state
        i, f, g, o = self.gates(x, h)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c_prev), c  # h from the old diary


class LSTMSplitWrongDim(_Base):
    def forward(self, x, state):
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)  # (B, 4H)
        i, f, g, o = z.view(z.shape[0], self.hidden_size, 4).unbind(-1)  # interleaved split
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMReturnsCH(_Base):
    def forward(self, x, state):
        h, c = state
        i, f, g, o = self.gates(x, h)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return c, h  # order swapped


class LSTMRelUCandidate(_Base):
    def forward(self, x, state):
        h, c = state
        i, f, g, o = self.gates(x, h)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.relu(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMInPlace(_Base):
    def forward(self, x, state):
        h, c = state
        i, f, g, o = self.gates(x, h)
        c.mul_(torch.sigmoid(f))  # updates the caller's c in place
        c.add_(torch.sigmoid(i) * torch.tanh(g))
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMSeparateArgs(_Base):
    def forward(self, x, h, c):
        i, f, g, o = self.gates(x, h)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMFunctionalSlices(_Base):
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


class LSTMOptionalState(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size, bias=bias)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor] | None = None):
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)
        sig = torch.sigmoid(z)
        i, f, _, o = sig.split(self.hidden_size, dim=1)
        g = torch.tanh(z.split(self.hidden_size, dim=1)[2])
        c_new = f * c + i * g
        h_new = o * torch.tanh(c_new)
        return h_new, c_new


CASES = [
    BlindCase(
        CHECK,
        "gate_order_ifog",
        LSTMOrderIFOG,
        "mistake",
        "splits the blocks in the order i, f, o, g instead of PyTorch's i, f, g, o",
    ),
    BlindCase(
        CHECK,
        "no_tanh_on_new_memory",
        LSTMNoTanhOnOutput,
        "mistake",
        "computes h as sigmoid(o) * c, without the tanh of the new memory",
    ),
    BlindCase(
        CHECK,
        "input_gate_is_one_minus_forget",
        LSTMOneMinusForget,
        "mistake",
        "uses (1 - f) as the input gate (GRU-style coupling) instead of sigmoid(i)",
    ),
    BlindCase(
        CHECK,
        "output_from_old_memory",
        LSTMOutputGateOnOldC,
        "mistake",
        "computes h from tanh of the previous c instead of the new c",
    ),
    BlindCase(
        CHECK,
        "interleaved_split",
        LSTMSplitWrongDim,
        "mistake",
        "reshapes z to (B, H, 4) and unbinds the last axis, so the gates are interleaved columns",
    ),
    BlindCase(
        CHECK, "returns_c_then_h", LSTMReturnsCH, "mistake", "returns (c, h) instead of (h, c)"
    ),
    BlindCase(
        CHECK,
        "relu_candidate",
        LSTMRelUCandidate,
        "mistake",
        "uses ReLU on the candidate g instead of tanh",
    ),
    BlindCase(
        CHECK,
        "in_place_memory_update",
        LSTMInPlace,
        "mistake",
        "updates the previous memory c in place with mul_ and add_",
    ),
    BlindCase(
        CHECK,
        "slip_h_and_c_as_separate_args",
        LSTMSeparateArgs,
        "mistake",
        "makes forward take h and c as two separate arguments instead of one state tuple",
    ),
    BlindCase(
        CHECK,
        "slices_and_addcmul",
        LSTMFunctionalSlices,
        "correct",
        "slices the four blocks by hand with F.linear and combines them with torch.addcmul",
    ),
    BlindCase(
        CHECK,
        "optional_state_split",
        LSTMOptionalState,
        "correct",
        "applies sigmoid to all of z, splits it, takes tanh of the g block, and accepts state=None and a bias flag",
    ),
]
