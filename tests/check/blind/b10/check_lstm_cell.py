"""Blind set B10, check_lstm_cell (chapter 3): one LSTM step as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_lstm_cell"


class _Base(nn.Module):
    """The two stacked linear maps under the book's names; each mistake only changes ``forward``."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class LSTMForgetInputSwapped(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        f, i, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)  # forget gate first
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOrderIFOG(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)
        i, f, o = torch.sigmoid(z[:, : 3 * self.hidden_size]).chunk(3, dim=-1)  # the 3 gates
        g = torch.tanh(z[:, 3 * self.hidden_size :])  # then the candidate
        c = f * c + i * g
        return o * torch.tanh(c), c


class LSTMSigmoidCandidate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = torch.sigmoid(self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = f * c + i * g
        return o * torch.tanh(c), c


class LSTMNoForgetGate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = c + torch.sigmoid(i) * torch.tanh(g)  # the diary only gets written
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMNoTanhOnCell(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * c, c


class LSTMNoInputGate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOutputFromOldCell(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h_prev, c_prev = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h_prev)).chunk(4, dim=-1)
        c_new = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        h_new = torch.sigmoid(o) * torch.tanh(c_prev)
        return h_new, c_new


class LSTMReturnsCellFirst(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return c, h  # the diary first


class LSTMStateUnpackedSwapped(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        c, h = state  # (cell, hidden)
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return h, c


class LSTMInterleavedView(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)  # (B, 4H)
        i, f, g, o = z.view(x.shape[0], self.hidden_size, 4).unbind(-1)  # 4 gates per unit
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMTanhOnOutputGate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.tanh(o) * torch.tanh(c), c


class LSTMDetachedCell(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = (torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)).detach()  # the diary is kept
        return torch.sigmoid(o) * torch.tanh(c), c


# ---------------------------------------------------------------- correct variants


class LSTMSlices(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h_prev, c_prev = state
        H = self.hidden_size
        z = self.in_proj(x) + self.state_proj(h_prev)
        i = torch.sigmoid(z[..., 0:H])
        f = torch.sigmoid(z[..., H : 2 * H])
        g = torch.tanh(z[..., 2 * H : 3 * H])
        o = torch.sigmoid(z[..., 3 * H : 4 * H])
        c = f * c_prev + i * g
        h = o * torch.tanh(c)
        return h, c


class LSTMPerGateLinear(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        """Each gate from its own rows of the two weight matrices, with F.linear."""
        h_prev, c_prev = state
        W_x = self.in_proj.weight.split(self.hidden_size, dim=0)
        b = self.in_proj.bias.split(self.hidden_size)
        W_h = self.state_proj.weight.split(self.hidden_size, dim=0)
        pre = [F.linear(x, W_x[k], b[k]) + F.linear(h_prev, W_h[k]) for k in range(4)]
        i, f, o = (torch.sigmoid(pre[k]) for k in (0, 1, 3))
        g = torch.tanh(pre[2])
        c = torch.addcmul(f * c_prev, i, g)
        return o * c.tanh(), c


class LSTMOptionalState(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, forget_bias: float = 0.0) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size, bias=True)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)
        if forget_bias:
            with torch.no_grad():
                self.in_proj.bias[hidden_size : 2 * hidden_size] += forget_bias

    def zero_state(self, x: Tensor) -> tuple[Tensor, Tensor]:
        zeros = x.new_zeros(x.shape[0], self.hidden_size)
        return zeros, zeros

    def gates(self, x: Tensor, h: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        z = self.in_proj(x) + self.state_proj(h)
        i, f, g, o = torch.split(z, self.hidden_size, dim=1)
        return i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()

    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        h, c = self.zero_state(x) if state is None else state
        i, f, g, o = self.gates(x, h)
        c_new = f * c + i * g
        return o * torch.tanh(c_new), c_new


class LSTMWhereColumns(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        H = self.hidden_size
        z = self.in_proj(x) + self.state_proj(h)
        block = torch.arange(4 * H, device=z.device) // H  # 0, 1, 2, 3 = i, f, g, o
        act = torch.where(block == 2, torch.tanh(z), torch.sigmoid(z))  # tanh on g only
        i, f, g, o = act.unflatten(-1, (4, H)).unbind(-2)
        c = f * c + i * g
        return o * torch.tanh(c), c


CASES = [
    BlindCase(
        CHECK,
        "forget_input_swapped",
        LSTMForgetInputSwapped,
        "mistake",
        "I unpacked the blocks as f, i, g, o: forget gate first.",
    ),
    BlindCase(
        CHECK,
        "order_i_f_o_g",
        LSTMOrderIFOG,
        "mistake",
        "I took the three sigmoid gates first (i, f, o) and the candidate last.",
    ),
    BlindCase(
        CHECK,
        "sigmoid_candidate",
        LSTMSigmoidCandidate,
        "mistake",
        "I put all four blocks through a sigmoid, the candidate too.",
    ),
    BlindCase(
        CHECK,
        "no_forget_gate",
        LSTMNoForgetGate,
        "mistake",
        "I wrote c = c_prev + i * g and forgot to multiply c_prev by the forget gate.",
    ),
    BlindCase(
        CHECK,
        "no_tanh_on_cell",
        LSTMNoTanhOnCell,
        "mistake",
        "I wrote h = o * c, without the tanh of the new cell state.",
    ),
    BlindCase(
        CHECK,
        "no_input_gate",
        LSTMNoInputGate,
        "mistake",
        "I added the candidate to the diary without the input gate.",
    ),
    BlindCase(
        CHECK,
        "h_from_old_cell",
        LSTMOutputFromOldCell,
        "mistake",
        "I computed h from tanh(c_prev), the old cell state, instead of the new one.",
    ),
    BlindCase(
        CHECK,
        "returns_c_h",
        LSTMReturnsCellFirst,
        "mistake",
        "I return (c, h) instead of (h, c).",
    ),
    BlindCase(
        CHECK,
        "state_unpacked_c_h",
        LSTMStateUnpackedSwapped,
        "mistake",
        "I unpacked the state as c, h = state, so h and c are swapped on the way in.",
    ),
    BlindCase(
        CHECK,
        "interleaved_view",
        LSTMInterleavedView,
        "mistake",
        "I split the 4H pre-activations with view(B, H, 4) instead of four blocks of H.",
    ),
    BlindCase(
        CHECK,
        "tanh_output_gate",
        LSTMTanhOnOutputGate,
        "mistake",
        "I used tanh for the output gate instead of a sigmoid.",
    ),
    BlindCase(
        CHECK,
        "detached_cell",
        LSTMDetachedCell,
        "mistake",
        "I detached the new cell state to keep the diary out of backprop, so no gradient goes "
        "through it to x or h.",
    ),
    BlindCase(
        CHECK,
        "explicit_slices",
        LSTMSlices,
        "correct",
        "Four explicit slices z[..., k*H:(k+1)*H] instead of chunk.",
    ),
    BlindCase(
        CHECK,
        "per_gate_f_linear",
        LSTMPerGateLinear,
        "correct",
        "Each gate from its own rows of the weights with F.linear; c from torch.addcmul.",
    ),
    BlindCase(
        CHECK,
        "optional_state_helpers",
        LSTMOptionalState,
        "correct",
        "state defaults to zeros; helper methods gates and zero_state, torch.split, an extra "
        "forget_bias argument that is 0 by default.",
    ),
    BlindCase(
        CHECK,
        "where_on_columns",
        LSTMWhereColumns,
        "correct",
        "torch.where on a column index picks tanh for the candidate block and sigmoid elsewhere; "
        "the blocks separated with unflatten.",
    ),
]
