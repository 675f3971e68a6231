"""Blind set B9, check_lstm_cell (chapter 3): one LSTM step with gates i, f, g, o."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_lstm_cell"


class _Base(nn.Module):
    """The two layers as the book names them; each mistake only changes ``forward``."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class LSTMInputForgetSwapped(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        f, i, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)  # f first
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMSigmoidCandidate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = torch.sigmoid(self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = f * c + i * g  # every block went through the sigmoid, g too
        return o * torch.tanh(c), c


class LSTMNoForgetGate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = c + torch.sigmoid(i) * torch.tanh(g)
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
        return c, torch.sigmoid(o) * torch.tanh(c)  # (c, h)


class LSTMGateOrderIFOG(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, o, g = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)  # i, f, o, g
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMChunkBatchAxis(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=0)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOldCellInOutput(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c_prev = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c_prev), c


class LSTMStateProjOnCell(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(c)).chunk(4, dim=-1)  # c, not h
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMCoupledGates(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        f = torch.sigmoid(f)
        c = f * c + (1 - f) * torch.tanh(g)  # write what was erased, as in a GRU
        return torch.sigmoid(o) * torch.tanh(c), c


# ---------------------------------------------------------------- correct variants


class LSTMSplit(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)
        i, f, g, o = torch.split(z, self.hidden_size, dim=1)
        c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c_new), c_new


class LSTMViewUnbind(_Base):
    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h, c = state
        z = (self.in_proj(x) + self.state_proj(h)).view(x.shape[0], 4, self.hidden_size)
        i, f, g, o = z.unbind(dim=1)
        c = torch.addcmul(f.sigmoid() * c, i.sigmoid(), g.tanh())
        return o.sigmoid() * c.tanh(), c


class LSTMSlices(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        H = self.hidden_size
        z = self.in_proj(x) + self.state_proj(h)
        gates = torch.sigmoid(z)  # i, f and o from here
        g = torch.tanh(z[:, 2 * H : 3 * H])
        c = gates[:, H : 2 * H] * c + gates[:, :H] * g
        h = gates[:, 3 * H :] * torch.tanh(c)
        return h, c


class LSTMFloat64Inside(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = (self.in_proj(x) + self.state_proj(h)).double()
        i, f, g, o = z.chunk(4, dim=-1)
        c64 = torch.sigmoid(f) * c.double() + torch.sigmoid(i) * torch.tanh(g)
        h64 = torch.sigmoid(o) * torch.tanh(c64)
        return h64.to(x.dtype), c64.to(x.dtype)


CASES = [
    BlindCase(
        CHECK,
        "input_forget_swapped",
        LSTMInputForgetSwapped,
        "mistake",
        "I unpacked the chunks as f, i, g, o, so the input and forget gates are swapped.",
    ),
    BlindCase(
        CHECK,
        "sigmoid_on_candidate",
        LSTMSigmoidCandidate,
        "mistake",
        "I applied the sigmoid to the whole z before chunking, so the candidate g gets a "
        "sigmoid instead of a tanh.",
    ),
    BlindCase(
        CHECK,
        "forget_gate_left_out",
        LSTMNoForgetGate,
        "mistake",
        "I wrote c = c_prev + i * g, keeping the old memory without the forget gate.",
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
        "returns_c_then_h",
        LSTMReturnsCellFirst,
        "mistake",
        "I returned (c, h) instead of (h, c).",
    ),
    BlindCase(
        CHECK,
        "gate_order_i_f_o_g",
        LSTMGateOrderIFOG,
        "mistake",
        "I unpacked the blocks as i, f, o, g (the order I saw in a blog) instead of "
        "PyTorch's i, f, g, o.",
    ),
    BlindCase(
        CHECK,
        "chunk_over_batch",
        LSTMChunkBatchAxis,
        "mistake",
        "I called chunk(4, dim=0), splitting the batch instead of the 4H features.",
    ),
    BlindCase(
        CHECK,
        "old_cell_in_output",
        LSTMOldCellInOutput,
        "mistake",
        "I computed h from tanh(c_prev) instead of the new memory c_t.",
    ),
    BlindCase(
        CHECK,
        "state_proj_applied_to_cell",
        LSTMStateProjOnCell,
        "mistake",
        "I fed the memory c instead of h into state_proj.",
    ),
    BlindCase(
        CHECK,
        "coupled_input_forget",
        LSTMCoupledGates,
        "mistake",
        "I used (1 - f) as the input gate (coupled gates, as in a GRU) instead of i.",
    ),
    BlindCase(
        CHECK,
        "split_by_hidden_size",
        LSTMSplit,
        "correct",
        "I used torch.split(z, hidden_size, dim=1) instead of chunk.",
    ),
    BlindCase(
        CHECK,
        "view_unbind_addcmul",
        LSTMViewUnbind,
        "correct",
        "I viewed z as (B, 4, H), unbound the gates, used addcmul, and the state defaults "
        "to zeros.",
    ),
    BlindCase(
        CHECK,
        "explicit_slices",
        LSTMSlices,
        "correct",
        "I took the sigmoid of all of z and sliced the gates by hand, with a separate tanh "
        "for the candidate block.",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        LSTMFloat64Inside,
        "correct",
        "I computed the gates and the memory in float64 and cast h and c back.",
    ),
]
