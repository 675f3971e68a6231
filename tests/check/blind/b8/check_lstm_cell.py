"""Blind set B8, check_lstm_cell (chapter 3): one LSTM step with gates in PyTorch's order."""

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


class InputForgetSwapped(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        f, i, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class GateOrderIFOG(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, o, g = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)  # blog's order
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class SigmoidCandidate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = torch.sigmoid(self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = f * c + i * g
        return o * torch.tanh(c), c


class NoForgetGate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class NoTanhOnNewCell(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * c, c


class OutputFromOldCell(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c_prev = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c_prev), c


class ReturnsCellFirst(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return c, h


class StateUnpackedAsCH(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        c, h = state  # the pair comes as (h, c)
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class GatesInterleavedView(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)  # (B, 4H)
        i, f, g, o = z.view(-1, self.hidden_size, 4).unbind(-1)  # split the wrong way
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class CoupledInputGate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        f = torch.sigmoid(f)
        c = f * c + (1 - f) * torch.tanh(g)  # input gate written as 1 - f
        return torch.sigmoid(o) * torch.tanh(c), c


# ---------------------------------------------------------------- correct variants


class SlicedWeights(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        H = self.hidden_size
        W, U, b = self.in_proj.weight, self.state_proj.weight, self.in_proj.bias

        def block(k: int) -> Tensor:
            return F.linear(x, W[k * H : (k + 1) * H], b[k * H : (k + 1) * H]) + F.linear(
                h, U[k * H : (k + 1) * H]
            )

        i, f, g, o = (block(k) for k in range(4))
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class TensorSplitFloat64(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        dtype = x.dtype
        z = (self.in_proj(x) + self.state_proj(h)).double()
        i, f, g, o = torch.tensor_split(z, 4, dim=1)
        c2 = f.sigmoid() * c.double() + i.sigmoid() * g.tanh()
        h2 = o.sigmoid() * c2.tanh()
        return h2.to(dtype), c2.to(dtype)


class OneMatmulOnConcat(_Base):
    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h, c = state
        W = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)
        z = torch.addmm(self.in_proj.bias, torch.cat([x, h], dim=1), W.T)
        gates = torch.sigmoid(z)
        H = self.hidden_size
        i, f, o = gates[:, :H], gates[:, H : 2 * H], gates[:, 3 * H :]
        g = torch.tanh(z[:, 2 * H : 3 * H])
        c = torch.addcmul(i * g, f, c)
        return o * torch.tanh(c), c


CASES = [
    BlindCase(
        CHECK,
        "input_forget_swapped",
        InputForgetSwapped,
        "mistake",
        "I unpacked the chunks as f, i, g, o, swapping the input and forget gates",
    ),
    BlindCase(
        CHECK,
        "gate_order_ifog",
        GateOrderIFOG,
        "mistake",
        "I unpacked the chunks in the order i, f, o, g that a blog used, not PyTorch's i, f, g, o",
    ),
    BlindCase(
        CHECK,
        "sigmoid_candidate",
        SigmoidCandidate,
        "mistake",
        "I applied sigmoid to all four blocks at once, so the candidate g got a sigmoid too",
    ),
    BlindCase(
        CHECK,
        "no_forget_gate",
        NoForgetGate,
        "mistake",
        "I wrote c = c_prev + i * g and left the forget gate out",
    ),
    BlindCase(
        CHECK,
        "no_tanh_on_new_cell",
        NoTanhOnNewCell,
        "mistake",
        "I wrote h = o * c without the tanh of the new cell state",
    ),
    BlindCase(
        CHECK,
        "output_from_old_cell",
        OutputFromOldCell,
        "mistake",
        "I computed h from tanh of the previous cell state c_prev instead of the new c",
    ),
    BlindCase(
        CHECK,
        "returns_cell_first",
        ReturnsCellFirst,
        "mistake",
        "I returned (c, h) instead of (h, c)",
    ),
    BlindCase(
        CHECK,
        "state_unpacked_as_c_h",
        StateUnpackedAsCH,
        "mistake",
        "I unpacked the incoming state as c, h = state, though it is (h, c)",
    ),
    BlindCase(
        CHECK,
        "gates_interleaved_view",
        GatesInterleavedView,
        "mistake",
        "I split z with view(B, H, 4).unbind(-1) instead of chunking into four blocks of H",
    ),
    BlindCase(
        CHECK,
        "coupled_input_gate",
        CoupledInputGate,
        "mistake",
        "I used (1 - f) as the input gate, as a blog's coupled variant does, "
        "instead of the i block",
    ),
    BlindCase(
        CHECK,
        "sliced_weights",
        SlicedWeights,
        "correct",
        "each gate computed by its own F.linear on row slices of the stacked weights",
    ),
    BlindCase(
        CHECK,
        "tensor_split_float64",
        TensorSplitFloat64,
        "correct",
        "tensor_split and the gate arithmetic in float64, cast back to the input dtype",
    ),
    BlindCase(
        CHECK,
        "one_matmul_on_concat",
        OneMatmulOnConcat,
        "correct",
        "one addmm on [x; h] with the concatenated weights, sigmoid everywhere then tanh "
        "for g, addcmul for c; state optional",
    ),
]
