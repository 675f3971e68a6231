"""Blind set B7, check_lstm_cell (chapter 3): one LSTM step with the blocks i, f, g, o."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_lstm_cell"


class _Base(nn.Module):
    """The two stacked layers under the chapter's names; each mistake changes one thing."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class LSTMOrderIFOG(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)
        i, f, o, g = z.chunk(4, dim=-1)  # the order i, f, o, g of some blog posts
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMCoupledGates(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        f = torch.sigmoid(f)
        c = f * c + (1 - f) * torch.tanh(g)  # write what is forgotten, as in a GRU
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOldCellInOutput(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c_prev = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c_prev)  # the diary as it was
        return h, c


class LSTMTanhOutsideGate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.tanh(torch.sigmoid(o) * c), c


class LSTMReturnsCellFirst(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return c, h


class LSTMStateUnpackedReversed(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        c, h = state  # (cell, hidden)
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMInterleavedView(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)  # (B, 4H)
        i, f, g, o = z.view(z.shape[0], -1, 4).unbind(-1)  # 4 x (B, H)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMForgetBiasPlusOne(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        f = torch.sigmoid(f + 1.0)  # forget-gate bias of 1, as recommended for LSTMs
        c = f * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMDetachedHidden(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h.detach())  # truncate BPTT at every step
        i, f, g, o = z.chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMNoInputGate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.tanh(g)  # the candidate written in full
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMBiasOnStateProj(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, 4 * hidden_size, bias=False)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size)

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMChunkBatchAxis(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4)  # default dim=0
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


# ---------------------------------------------------------------- correct variants


class LSTMSplitByIndex(_Base):
    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        H = self.state_proj.in_features
        if state is None:
            state = (x.new_zeros(x.shape[0], H), x.new_zeros(x.shape[0], H))
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)
        i = torch.sigmoid(z[:, 0:H])
        f = torch.sigmoid(z[:, H : 2 * H])
        g = torch.tanh(z[:, 2 * H : 3 * H])
        o = torch.sigmoid(z[:, 3 * H :])
        c_new = torch.addcmul(f * c, i, g)
        return o * c_new.tanh(), c_new


class LSTMViewFourByH(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)  # (B, 4H)
        i, f, g, o = z.view(z.shape[0], 4, -1).unbind(1)  # blocks are contiguous: (B, 4, H)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        return o.sigmoid() * c.tanh(), c


class LSTMSigmoidAllThenFixG(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)
        i, f, g, o = z.chunk(4, dim=-1)
        gates = torch.sigmoid(torch.stack([i, f, o]))  # (3, B, H)
        g = 2 * torch.sigmoid(2 * g) - 1  # tanh written through the sigmoid
        c = gates[1] * c + gates[0] * g
        return gates[2] * torch.tanh(c), c


class LSTMFloat64Inside(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        dtype = x.dtype
        z = (self.in_proj(x) + self.state_proj(h)).double()
        i, f, g, o = z.chunk(4, dim=-1)
        c_new = torch.sigmoid(f) * c.double() + torch.sigmoid(i) * torch.tanh(g)
        h_new = torch.sigmoid(o) * torch.tanh(c_new)
        return h_new.to(dtype), c_new.to(dtype)


CASES = [
    BlindCase(
        check=CHECK,
        name="order_i_f_o_g",
        code=LSTMOrderIFOG,
        kind="mistake",
        what="I split the four blocks in the order i, f, o, g instead of PyTorch's i, f, g, o.",
    ),
    BlindCase(
        check=CHECK,
        name="coupled_input_forget",
        code=LSTMCoupledGates,
        kind="mistake",
        what="I wrote c = f * c + (1 - f) * tanh(g), coupling the input gate to the forget "
        "gate, instead of using the input gate i.",
    ),
    BlindCase(
        check=CHECK,
        name="output_reads_old_cell",
        code=LSTMOldCellInOutput,
        kind="mistake",
        what="I computed h from tanh(c_prev), the old diary, instead of the new c.",
    ),
    BlindCase(
        check=CHECK,
        name="tanh_around_gated_cell",
        code=LSTMTanhOutsideGate,
        kind="mistake",
        what="I wrote h = tanh(o * c) instead of o * tanh(c).",
    ),
    BlindCase(
        check=CHECK,
        name="returns_c_h",
        code=LSTMReturnsCellFirst,
        kind="mistake",
        what="I returned (c, h) instead of (h, c).",
    ),
    BlindCase(
        check=CHECK,
        name="state_unpacked_c_h",
        code=LSTMStateUnpackedReversed,
        kind="mistake",
        what="I unpacked the incoming state as `c, h = state`, so the memory is fed to "
        "state_proj and the hidden state is used as the diary.",
    ),
    BlindCase(
        check=CHECK,
        name="view_b_h_4",
        code=LSTMInterleavedView,
        kind="mistake",
        what="I split the gates with z.view(B, H, 4).unbind(-1), which interleaves the blocks "
        "instead of taking four contiguous blocks of H.",
    ),
    BlindCase(
        check=CHECK,
        name="forget_bias_plus_one",
        code=LSTMForgetBiasPlusOne,
        kind="mistake",
        what="I added 1 to the forget gate's pre-activation in forward, the 'forget bias of 1' "
        "trick, which the book's cell does not have.",
    ),
    BlindCase(
        check=CHECK,
        name="hidden_detached",
        code=LSTMDetachedHidden,
        kind="mistake",
        what="I detached h before state_proj, so no gradient flows back through the hidden "
        "state (the values are right).",
    ),
    BlindCase(
        check=CHECK,
        name="input_gate_left_out",
        code=LSTMNoInputGate,
        kind="mistake",
        what="I wrote c = f * c + tanh(g) and forgot to multiply the candidate by the input gate.",
    ),
    BlindCase(
        check=CHECK,
        name="bias_on_state_proj",
        code=LSTMBiasOnStateProj,
        kind="mistake",
        what="I put the bias on state_proj and made in_proj bias-free, the other way round "
        "from the chapter.",
    ),
    BlindCase(
        check=CHECK,
        name="chunk_default_dim",
        code=LSTMChunkBatchAxis,
        kind="mistake",
        what="I called z.chunk(4) without dim=-1, so it splits the batch axis instead of the "
        "4H features.",
    ),
    BlindCase(
        check=CHECK,
        name="slices_and_addcmul",
        code=LSTMSplitByIndex,
        kind="correct",
        what="I sliced the four blocks by index and built c with torch.addcmul; the state "
        "defaults to zeros when omitted.",
    ),
    BlindCase(
        check=CHECK,
        name="view_b_4_h",
        code=LSTMViewFourByH,
        kind="correct",
        what="I split the gates with z.view(B, 4, H).unbind(1), the same contiguous blocks as "
        "chunk.",
    ),
    BlindCase(
        check=CHECK,
        name="tanh_via_sigmoid",
        code=LSTMSigmoidAllThenFixG,
        kind="correct",
        what="I applied one sigmoid to i, f, o stacked, and wrote tanh(g) as 2 sigmoid(2g) - 1.",
    ),
    BlindCase(
        check=CHECK,
        name="float64_inside",
        code=LSTMFloat64Inside,
        kind="correct",
        what="I did the gate arithmetic in float64 and cast h and c back to the input's dtype.",
    ),
]
