"""Chapter 3, "Your turn": ``MyLSTMCell(input_size, hidden_size)``, ``forward(x, (h, c))``.

``z = in_proj(x) + state_proj(h)`` split into i, f, g, o (PyTorch's order);
``c' = sigmoid(f) * c + sigmoid(i) * tanh(g)``, ``h' = sigmoid(o) * tanh(c')``; returns ``(h', c')``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_lstm_cell"


class _Layers(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)


# --- mistakes ---------------------------------------------------------------------------------


class OrderIFOG(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, o, g = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)  # i, f, o, g
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class OutputFromOldMemory(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c_prev = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c_prev)  # shows the diary as it was
        return h, c


class TanhAroundTheProduct(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.tanh(torch.sigmoid(o) * c), c


class ReturnsCThenH(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return c, h  # the (cell, hidden) order


class InterleavedGates(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)  # (B, 4H)
        i, f, g, o = z.view(-1, self.hidden_size, 4).unbind(dim=-1)  # every 4th column a gate
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class CoupledInputGate(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        _, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        f = torch.sigmoid(f)
        c = f * c + (1 - f) * torch.tanh(g)  # write what was erased, like a GRU
        return torch.sigmoid(o) * torch.tanh(c), c


class StateProjReadsMemory(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(c)).chunk(4, dim=-1)  # the diary c
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class ReluCandidate(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.relu(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class SeparateArguments(_Layers):
    def forward(self, x: Tensor, h: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class ChunkAlongBatch(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)
        i, f, g, o = z.chunk(4, dim=0)  # dim=0 is the batch axis, not the 4H axis
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


# --- correct variants -------------------------------------------------------------------------


class ViewAndUnbind(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)
        i, f, g, o = z.view(z.shape[0], 4, self.hidden_size).unbind(dim=1)
        c_new = f.sigmoid() * c + i.sigmoid() * g.tanh()
        return o.sigmoid() * c_new.tanh(), c_new


class SigmoidEverythingThenCandidate(_Layers):
    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h, c = state
        H = self.hidden_size
        z = F.linear(x, self.in_proj.weight, self.in_proj.bias) + F.linear(
            h, self.state_proj.weight
        )
        gates = torch.sigmoid(z)  # i, f and o are sigmoids; g is replaced below
        g = torch.tanh(z[:, 2 * H : 3 * H])
        c_new = gates[:, H : 2 * H] * c + gates[:, :H] * g
        h_new = gates[:, 3 * H :] * torch.tanh(c_new)
        return h_new, c_new


class SplitWithAddcmul(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = torch.addmm(self.in_proj.bias, x, self.in_proj.weight.T) + h @ self.state_proj.weight.T
        i, f, g, o = torch.split(z, self.hidden_size, dim=1)
        c_new = torch.addcmul(torch.sigmoid(f) * c, torch.sigmoid(i), torch.tanh(g))
        return torch.sigmoid(o) * torch.tanh(c_new), c_new


CASES = [
    BlindCase(
        CHECK,
        "order_ifog",
        OrderIFOG,
        "mistake",
        "I unpacked the four blocks as i, f, o, g instead of PyTorch's i, f, g, o.",
    ),
    BlindCase(
        CHECK,
        "output_from_old_memory",
        OutputFromOldMemory,
        "mistake",
        "I computed h from tanh of the previous memory c_prev instead of the new c.",
    ),
    BlindCase(
        CHECK,
        "tanh_around_the_product",
        TanhAroundTheProduct,
        "mistake",
        "I wrote h = tanh(sigmoid(o) * c), with the tanh around the product instead of on c.",
    ),
    BlindCase(
        CHECK,
        "returns_c_then_h",
        ReturnsCThenH,
        "mistake",
        "I returned (c, h) instead of (h, c).",
    ),
    BlindCase(
        CHECK,
        "interleaved_gates",
        InterleavedGates,
        "mistake",
        "I split z with view(B, H, 4), as if the four gates were interleaved column by column "
        "instead of stacked in blocks.",
    ),
    BlindCase(
        CHECK,
        "coupled_input_gate",
        CoupledInputGate,
        "mistake",
        "I ignored the input gate and wrote (1 - f) * tanh(g), coupling it to the forget gate.",
    ),
    BlindCase(
        CHECK,
        "state_proj_reads_memory",
        StateProjReadsMemory,
        "mistake",
        "I fed the memory c instead of the hidden state h into state_proj.",
    ),
    BlindCase(
        CHECK,
        "relu_candidate",
        ReluCandidate,
        "mistake",
        "I used ReLU instead of tanh on the candidate g.",
    ),
    BlindCase(
        CHECK,
        "separate_arguments",
        SeparateArguments,
        "mistake",
        "I wrote forward(x, h, c) with two separate arguments instead of one state pair (h, c).",
    ),
    BlindCase(
        CHECK,
        "chunk_along_batch",
        ChunkAlongBatch,
        "mistake",
        "I chunked z into four along dim=0 (the batch) instead of the last axis.",
    ),
    BlindCase(
        CHECK,
        "view_and_unbind",
        ViewAndUnbind,
        "correct",
        "I split z with view(B, 4, H).unbind(1) and used the tensor methods sigmoid() and tanh().",
    ),
    BlindCase(
        CHECK,
        "sigmoid_everything_then_candidate",
        SigmoidEverythingThenCandidate,
        "correct",
        "I took the sigmoid of all of z, the tanh of the g block separately, sliced the gates by "
        "hand, and allowed state=None.",
    ),
    BlindCase(
        CHECK,
        "split_with_addcmul",
        SplitWithAddcmul,
        "correct",
        "I used addmm for the input map, torch.split for the blocks and addcmul for the new memory.",
    ),
]
