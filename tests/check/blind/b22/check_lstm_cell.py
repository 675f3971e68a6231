"""Blind set B22, check_lstm_cell (chapter 3): one LSTM step as readers write it."""

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

    def _z(self, x: Tensor, h: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(h)


# ---------------------------------------------------------------- mistakes


class LSTMSwappedIF(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        f, i, g, o = self._z(x, h).chunk(4, dim=-1)  # forget first
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMSigmoidCandidate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = torch.sigmoid(self._z(x, h)).chunk(4, dim=-1)  # all four through sigmoid
        c = f * c + i * g
        return o * torch.tanh(c), c


class LSTMNoForget(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self._z(x, h).chunk(4, dim=-1)
        c = c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMNoTanhOnC(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self._z(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * c, c


class LSTMOrderIFOG(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, o, g = self._z(x, h).chunk(4, dim=-1)  # i, f, o, g as in some papers
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMReturnsCH(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self._z(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return c, h


class LSTMOldCellInOutput(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c_prev = state
        i, f, g, o = self._z(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c_prev), c


class LSTMTanhOutputGate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self._z(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.tanh(o) * torch.tanh(c), c


class LSTMNoRecurrence(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.in_proj(x).chunk(4, dim=-1)  # forgot state_proj(h)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOneMinusForget(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self._z(x, h).chunk(4, dim=-1)
        c = (1 - torch.sigmoid(f)) * c + torch.sigmoid(i) * torch.tanh(g)  # f = how much to forget
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMStateUnpackedCH(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        c, h = state  # unpacked in the wrong order
        i, f, g, o = self._z(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMCoupledGates(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self._z(x, h).chunk(4, dim=-1)
        f = torch.sigmoid(f)
        c = f * c + (1 - f) * torch.tanh(g)  # write what was forgotten
        return torch.sigmoid(o) * torch.tanh(c), c


# ---------------------------------------------------------------- correct variants


class LSTMView(_Base):
    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h, c = state
        z = self._z(x, h).view(x.shape[0], 4, self.hidden_size)
        i, f, g, o = z.unbind(dim=1)
        c_new = f.sigmoid() * c + i.sigmoid() * g.tanh()
        return o.sigmoid() * c_new.tanh(), c_new


class LSTMSplitFunctional(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        H = self.hidden_size
        z = F.linear(x, self.in_proj.weight, self.in_proj.bias) + h @ self.state_proj.weight.T
        ifo = torch.sigmoid(torch.cat([z[:, : 2 * H], z[:, 3 * H :]], dim=-1))
        i, f, o = torch.split(ifo, H, dim=-1)
        g = torch.tanh(z[:, 2 * H : 3 * H])
        c = torch.addcmul(f * c, i, g)
        return o * torch.tanh(c), c


class LSTMTorchFunction(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        h_new, c_new = torch.lstm_cell(
            x, (h, c), self.in_proj.weight, self.state_proj.weight, self.in_proj.bias, None
        )
        return h_new, c_new


CASES = [
    BlindCase(
        CHECK, "swapped_i_f", LSTMSwappedIF, "mistake", "I unpacked the chunks as f, i, g, o."
    ),
    BlindCase(
        CHECK,
        "sigmoid_candidate",
        LSTMSigmoidCandidate,
        "mistake",
        "I put all four blocks through the sigmoid, the candidate too.",
    ),
    BlindCase(
        CHECK,
        "no_forget",
        LSTMNoForget,
        "mistake",
        "I added the old memory without the forget gate.",
    ),
    BlindCase(
        CHECK,
        "no_tanh_on_c",
        LSTMNoTanhOnC,
        "mistake",
        "h = o * c, I forgot the tanh of the new memory.",
    ),
    BlindCase(
        CHECK, "order_ifog", LSTMOrderIFOG, "mistake", "I used the order i, f, o, g for the blocks."
    ),
    BlindCase(
        CHECK, "returns_c_h", LSTMReturnsCH, "mistake", "I returned (c, h) instead of (h, c)."
    ),
    BlindCase(
        CHECK,
        "old_cell_in_output",
        LSTMOldCellInOutput,
        "mistake",
        "I computed h from the previous memory c_{t-1}, not the new one.",
    ),
    BlindCase(
        CHECK,
        "tanh_output_gate",
        LSTMTanhOutputGate,
        "mistake",
        "I used tanh on the output gate instead of a sigmoid.",
    ),
    BlindCase(
        CHECK,
        "no_recurrence",
        LSTMNoRecurrence,
        "mistake",
        "I computed the gates from in_proj(x) only and forgot state_proj(h).",
    ),
    BlindCase(
        CHECK,
        "one_minus_forget",
        LSTMOneMinusForget,
        "mistake",
        "I read f as 'how much to forget' and kept (1 - f) * c.",
    ),
    BlindCase(
        CHECK,
        "state_unpacked_c_h",
        LSTMStateUnpackedCH,
        "mistake",
        "I unpacked the incoming state as c, h.",
    ),
    BlindCase(
        CHECK,
        "coupled_gates",
        LSTMCoupledGates,
        "mistake",
        "I wrote (1 - f) * g instead of i * g, like a GRU.",
    ),
    BlindCase(
        CHECK,
        "view_unbind",
        LSTMView,
        "correct",
        "view (B, 4, H) and unbind; the state may be None.",
    ),
    BlindCase(
        CHECK,
        "split_functional",
        LSTMSplitFunctional,
        "correct",
        "F.linear, one sigmoid on the three gates sliced out, addcmul for the memory.",
    ),
    BlindCase(
        CHECK,
        "torch_lstm_cell",
        LSTMTorchFunction,
        "correct",
        "torch.lstm_cell with my two weights and the one bias.",
    ),
]
