"""Blind set B31, check_lstm_cell (chapter 3): one LSTM step with gates i, f, g, o."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_lstm_cell"


class _Base(nn.Module):
    """The right layers; the mistakes below change only forward (unless said otherwise)."""

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
        f, i, g, o = self.z(x, h).chunk(4, dim=-1)  # "forget gate first", as in the diagram
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOrderIFOG(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, o, g = self.z(x, h).chunk(4, dim=-1)  # the three sigmoid gates together
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMSigmoidCandidate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = torch.sigmoid(self.z(x, h)).chunk(4, dim=-1)  # all four through sigmoid
        c = f * c + i * g
        return o * torch.tanh(c), c


class LSTMNoForget(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.z(x, h).chunk(4, dim=-1)
        c = c + torch.sigmoid(i) * torch.tanh(g)  # the diary only adds
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMNoTanhOnMemory(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.z(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * c, c


class LSTMReturnsCH(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.z(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return c, torch.sigmoid(o) * torch.tanh(c)  # (c, h), the order of the state


class LSTMInterleavedGates(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        B = x.shape[0]
        i, f, g, o = self.z(x, h).view(B, self.hidden_size, 4).unbind(-1)  # (B, H, 4)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOldMemoryOut(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c_prev = state
        i, f, g, o = self.z(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c_prev), c  # h from the diary before the update


class LSTMCoupledGates(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.z(x, h).chunk(4, dim=-1)
        f = torch.sigmoid(f)
        c = f * c + (1 - f) * torch.tanh(g)  # what is forgotten is replaced, as in the GRU
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMRawOutputGate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.z(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return o * torch.tanh(c), c  # forgot the sigmoid on o


class LSTMStateBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size)  # PyTorch has b_hh too

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMUpdatesCInPlace(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.z(x, h).chunk(4, dim=-1)
        c.mul_(torch.sigmoid(f)).add_(torch.sigmoid(i) * torch.tanh(g))  # the diary, updated
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMDetachedH(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h.detach())  # the gradient should use the diary
        i, f, g, o = z.chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMTanhForget(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.z(x, h).chunk(4, dim=-1)
        c = torch.tanh(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


# ---------------------------------------------------------------- correct variants


class LSTMViewUnbind(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        gates = self.z(x, h).view(x.shape[0], 4, self.hidden_size)  # (B, 4, H): blocks i, f, g, o
        i, f, o = torch.sigmoid(gates[:, [0, 1, 3]]).unbind(1)
        g = torch.tanh(gates[:, 2])
        c_new = torch.addcmul(f * c, i, g)
        return o * c_new.tanh(), c_new


class LSTMSlicedWeights(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        H = self.hidden_size
        W, b, U = self.in_proj.weight, self.in_proj.bias, self.state_proj.weight

        def block(k: int) -> Tensor:
            rows = slice(k * H, (k + 1) * H)
            return F.linear(x, W[rows], b[rows]) + F.linear(h, U[rows])

        i, f, g, o = (block(k) for k in range(4))
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return h, c


class LSTMOptionalState(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, forget_bias: float = 0.0) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.forget_bias = forget_bias  # added at run time; 0 by default
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)

    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h, c = state
        i, f, g, o = torch.split(self.in_proj(x) + self.state_proj(h), self.hidden_size, -1)
        f = f + self.forget_bias
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        return o.sigmoid() * c.tanh(), c


class LSTMFloat64Inside(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        dtype = x.dtype
        z = F.linear(x.double(), self.in_proj.weight.double(), self.in_proj.bias.double())
        z = z + F.linear(h.double(), self.state_proj.weight.double())
        i, f, g, o = z.chunk(4, dim=-1)
        c_new = torch.sigmoid(f) * c.double() + torch.sigmoid(i) * torch.tanh(g)
        h_new = torch.sigmoid(o) * torch.tanh(c_new)
        return h_new.to(dtype), c_new.to(dtype)


CASES = [
    BlindCase(
        CHECK,
        "forget_block_first",
        LSTMForgetFirst,
        "mistake",
        "I split the blocks as f, i, g, o (forget first), swapping the input and forget gates.",
    ),
    BlindCase(
        CHECK,
        "order_i_f_o_g",
        LSTMOrderIFOG,
        "mistake",
        "I split the blocks as i, f, o, g, the three sigmoid gates first.",
    ),
    BlindCase(
        CHECK,
        "sigmoid_on_all_blocks",
        LSTMSigmoidCandidate,
        "mistake",
        "I put all four blocks through the sigmoid, the candidate g too.",
    ),
    BlindCase(
        CHECK,
        "no_forget_gate",
        LSTMNoForget,
        "mistake",
        "I wrote c = c_prev + i * g, leaving the forget gate out.",
    ),
    BlindCase(
        CHECK,
        "no_tanh_on_memory",
        LSTMNoTanhOnMemory,
        "mistake",
        "I wrote h = o * c, without the tanh of the new memory.",
    ),
    BlindCase(
        CHECK,
        "returns_c_h",
        LSTMReturnsCH,
        "mistake",
        "I returned (c, h) instead of (h, c).",
    ),
    BlindCase(
        CHECK,
        "interleaved_blocks",
        LSTMInterleavedGates,
        "mistake",
        "I split z with view(B, H, 4).unbind(-1), which interleaves the four blocks.",
    ),
    BlindCase(
        CHECK,
        "h_from_old_memory",
        LSTMOldMemoryOut,
        "mistake",
        "I computed h from tanh(c_prev), the memory before this step's update.",
    ),
    BlindCase(
        CHECK,
        "coupled_gates",
        LSTMCoupledGates,
        "mistake",
        "I wrote c = f * c_prev + (1 - f) * g, as in a GRU, instead of using the input gate.",
    ),
    BlindCase(
        CHECK,
        "output_gate_without_sigmoid",
        LSTMRawOutputGate,
        "mistake",
        "I forgot the sigmoid on the output gate o.",
    ),
    BlindCase(
        CHECK,
        "state_proj_with_bias",
        LSTMStateBias,
        "mistake",
        "I gave state_proj a bias too, as nn.LSTM has b_hh, so the bias is counted twice.",
    ),
    BlindCase(
        CHECK,
        "memory_updated_in_place",
        LSTMUpdatesCInPlace,
        "mistake",
        "I updated the memory with c.mul_(f).add_(i * g), which overwrites the caller's c.",
    ),
    BlindCase(
        CHECK,
        "h_detached",
        LSTMDetachedH,
        "mistake",
        "I detached h before state_proj, thinking the gradient should flow through c only.",
    ),
    BlindCase(
        CHECK,
        "tanh_forget_gate",
        LSTMTanhForget,
        "mistake",
        "I used tanh instead of a sigmoid for the forget gate.",
    ),
    BlindCase(
        CHECK,
        "view_unbind_addcmul",
        LSTMViewUnbind,
        "correct",
        "z viewed as (B, 4, H), gates picked by index, the memory with addcmul.",
    ),
    BlindCase(
        CHECK,
        "sliced_weights",
        LSTMSlicedWeights,
        "correct",
        "Each gate from its own slice of the weight matrices with F.linear.",
    ),
    BlindCase(
        CHECK,
        "optional_state_and_forget_bias",
        LSTMOptionalState,
        "correct",
        "state defaults to zeros; torch.split; an extra forget_bias argument, 0 by default.",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        LSTMFloat64Inside,
        "correct",
        "Computed in float64, both outputs cast back to the input's dtype.",
    ),
]
