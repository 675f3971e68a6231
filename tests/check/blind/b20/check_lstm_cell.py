"""Blind set B20, check_lstm_cell (chapter 3): one LSTM step as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_lstm_cell"


class _Base(nn.Module):
    """The two layers under the book's names."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)

    def z(self, x: Tensor, h: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(h)


# ---------------------------------------------------------------- mistakes


class LSTMForgetFirst(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        f, i, g, o = self.z(x, h).chunk(4, dim=-1)  # forget gate first
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOutputBeforeCandidate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, o, g = self.z(x, h).chunk(4, dim=-1)  # the i, f, o, g order of the lecture notes
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMSigmoidCandidate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = torch.sigmoid(self.z(x, h)).chunk(4, dim=-1)  # every block is a gate
        c = f * c + i * g
        return o * torch.tanh(c), c


class LSTMNoForget(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.z(x, h).chunk(4, dim=-1)
        c = c + torch.sigmoid(i) * torch.tanh(g)  # the diary only gets written to
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMNoTanhOnCell(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.z(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * c, c


class LSTMOldCellInOutput(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c_prev = state
        i, f, g, o = self.z(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c_prev)
        return h, c


class LSTMReturnsCellFirst(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.z(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return c, h  # the state is (c, h)


class LSTMStateUnpackedSwapped(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        c, h = state  # cell first
        i, f, g, o = self.z(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMCoupledGates(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.z(x, h).chunk(4, dim=-1)
        f = torch.sigmoid(f)
        c = f * c + (1 - f) * torch.tanh(g)  # what is not kept is written
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMTanhOutsideGate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.z(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.tanh(torch.sigmoid(o) * c), c


class LSTMChunkBatchAxis(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.z(x, h).view(4, -1, self.hidden_size)  # (4, B, H): one block per gate
        i, f, g, o = z[0], z[1], z[2], z[3]
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMStateBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size)  # a bias here too

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


# ---------------------------------------------------------------- correct variants


class LSTMSlices(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h_prev, c_prev = state
        H = self.hidden_size
        z = self.in_proj(x) + self.state_proj(h_prev)
        i = torch.sigmoid(z[:, 0:H])
        f = torch.sigmoid(z[:, H : 2 * H])
        g = torch.tanh(z[:, 2 * H : 3 * H])
        o = torch.sigmoid(z[:, 3 * H :])
        c = f * c_prev + i * g
        h = o * torch.tanh(c)
        return h, c


class LSTMUnbind(_Base):
    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h, c = state
        z = F.linear(x, self.in_proj.weight, self.in_proj.bias) + h @ self.state_proj.weight.T
        i, f, g, o = z.unflatten(-1, (4, self.hidden_size)).unbind(-2)
        c_new = torch.addcmul(f.sigmoid() * c, i.sigmoid(), g.tanh())
        return o.sigmoid() * c_new.tanh(), c_new


class LSTMGatesTogether(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        H = self.hidden_size
        z = self.z(x, h)
        gates = torch.sigmoid(z)  # i, f, _, o all at once
        g = torch.tanh(z[..., 2 * H : 3 * H])
        i, f, o = gates.split(H, dim=-1)[0], gates.split(H, dim=-1)[1], gates[..., 3 * H :]
        c = f * c + i * g
        return o * torch.tanh(c), c


class LSTMTanhViaSigmoid(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = torch.tensor_split(self.z(x, h), 4, dim=1)
        g = 2 * torch.sigmoid(2 * g) - 1  # tanh(u) = 2 sigmoid(2u) - 1
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * g
        return torch.sigmoid(o) * (2 * torch.sigmoid(2 * c) - 1), c


CASES = [
    BlindCase(
        CHECK,
        "forget_block_first",
        LSTMForgetFirst,
        "mistake",
        "I read the blocks as f, i, g, o (forget gate first).",
    ),
    BlindCase(
        CHECK,
        "order_i_f_o_g",
        LSTMOutputBeforeCandidate,
        "mistake",
        "I split the blocks as i, f, o, g.",
    ),
    BlindCase(
        CHECK,
        "sigmoid_on_all_blocks",
        LSTMSigmoidCandidate,
        "mistake",
        "I applied the sigmoid to all four blocks, the candidate included.",
    ),
    BlindCase(
        CHECK,
        "no_forget_gate",
        LSTMNoForget,
        "mistake",
        "I added the write to the old diary without the forget gate.",
    ),
    BlindCase(
        CHECK,
        "no_tanh_on_cell",
        LSTMNoTanhOnCell,
        "mistake",
        "The output is o * c, without tanh on the new memory.",
    ),
    BlindCase(
        CHECK,
        "output_from_old_cell",
        LSTMOldCellInOutput,
        "mistake",
        "I computed h from the previous cell state instead of the new one.",
    ),
    BlindCase(
        CHECK,
        "returns_c_h",
        LSTMReturnsCellFirst,
        "mistake",
        "I returned (c, h) instead of (h, c).",
    ),
    BlindCase(
        CHECK,
        "state_unpacked_c_h",
        LSTMStateUnpackedSwapped,
        "mistake",
        "I unpacked the state as c, h = state.",
    ),
    BlindCase(
        CHECK,
        "coupled_input_gate",
        LSTMCoupledGates,
        "mistake",
        "I wrote with (1 - f) instead of the input gate.",
    ),
    BlindCase(
        CHECK,
        "tanh_after_output_gate",
        LSTMTanhOutsideGate,
        "mistake",
        "I wrote h = tanh(o * c) instead of o * tanh(c).",
    ),
    BlindCase(
        CHECK,
        "view_gates_first",
        LSTMChunkBatchAxis,
        "mistake",
        "I split the blocks with view(4, B, H), which cuts across the batch.",
    ),
    BlindCase(
        CHECK,
        "state_proj_bias",
        LSTMStateBias,
        "mistake",
        "I gave state_proj a bias too.",
    ),
    BlindCase(CHECK, "slices", LSTMSlices, "correct", "I sliced the four blocks by hand."),
    BlindCase(
        CHECK,
        "unflatten_addcmul",
        LSTMUnbind,
        "correct",
        "unflatten to (4, H) and unbind, addcmul for the diary, optional zero state.",
    ),
    BlindCase(
        CHECK,
        "sigmoid_all_then_tanh_g",
        LSTMGatesTogether,
        "correct",
        "One sigmoid over all blocks for the gates, then tanh on the candidate slice.",
    ),
    BlindCase(
        CHECK,
        "tanh_via_sigmoid",
        LSTMTanhViaSigmoid,
        "correct",
        "tensor_split, and tanh written as 2 sigmoid(2u) - 1.",
    ),
]
