"""Blind set B33, check_lstm_cell (chapter 3): one LSTM step as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_lstm_cell"


class _Base(nn.Module):
    """The two layers as the skeleton asks; each mistake overrides only the step."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class LSTMGatesIFOG(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, o, g = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)  # i, f, o, g
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMInputForgetSwapped(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        f, i, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)  # forget first
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMSigmoidCandidate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = torch.sigmoid(self.in_proj(x) + self.state_proj(h))  # all four are gates
        i, f, g, o = z.chunk(4, dim=-1)
        c = f * c + i * g
        return o * torch.tanh(c), c


class LSTMNoForget(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = c + torch.sigmoid(i) * torch.tanh(g)  # the diary only adds
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMNoTanhOnMemory(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * c, c


class LSTMOutputFromOldMemory(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c_prev = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c_prev)
        return h, c


class LSTMReturnsCH(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return c, h  # the memory first, then the output


class LSTMInterleavedSplit(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)  # (B, 4H)
        i, f, g, o = z.view(-1, self.hidden_size, 4).unbind(-1)  # four values per unit
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMSquashedMemory(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.tanh(torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g))  # keep c bounded
        return torch.sigmoid(o) * c, c


class LSTMCoupledGates(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        f = torch.sigmoid(f)
        c = f * c + (1 - f) * torch.tanh(g)  # what is not kept is written
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMStateUnpackedCH(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        c_prev, h_prev = state  # (memory, hidden)
        i, f, g, o = (self.in_proj(x) + self.state_proj(h_prev)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMInPlaceMemory(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c.mul_(torch.sigmoid(f)).add_(torch.sigmoid(i) * torch.tanh(g))  # update the diary
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMDetachedHidden(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        h = h.detach()  # truncated backprop: do not go back through time
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


# ---------------------------------------------------------------- correct variants


class LSTMPerGate(_Base):
    """Each gate from its own slice of the weights with F.linear."""

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        H = self.hidden_size
        gates = []
        for k in range(4):
            rows = slice(k * H, (k + 1) * H)
            W_x, b = self.in_proj.weight[rows], self.in_proj.bias[rows]
            gates.append(F.linear(x, W_x, b) + F.linear(h, self.state_proj.weight[rows]))
        i, f, g, o = gates
        c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c_new), c_new


class LSTMSplitIFOAtOnce(_Base):
    """torch.split into the blocks, one sigmoid over the three gates together."""

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h_prev, c_prev = state
        z = self.in_proj(x) + self.state_proj(h_prev)
        i, f, g, o = torch.split(z, self.hidden_size, dim=1)
        i, f, o = torch.sigmoid(torch.stack([i, f, o])).unbind(0)
        c = torch.addcmul(f * c_prev, i, torch.tanh(g))
        h = o * torch.tanh(c)
        return h, c


class LSTMOptionalState(nn.Module):
    """A zero state when none is given, and a bias switch with a default."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size, bias=bias)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)

    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)
        i, f, g, o = z.view(x.shape[0], 4, self.hidden_size).unbind(1)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        return o.sigmoid() * c.tanh(), c


CASES = [
    BlindCase(
        CHECK,
        "gates_ifog",
        LSTMGatesIFOG,
        "mistake",
        "I split the blocks as i, f, o, g (the three gates first) instead of i, f, g, o.",
    ),
    BlindCase(
        CHECK,
        "input_forget_swapped",
        LSTMInputForgetSwapped,
        "mistake",
        "I took the forget gate from the first block and the input gate from the second.",
    ),
    BlindCase(
        CHECK,
        "sigmoid_candidate",
        LSTMSigmoidCandidate,
        "mistake",
        "I applied one sigmoid to all four blocks, so the candidate g is a sigmoid too.",
    ),
    BlindCase(
        CHECK,
        "no_forget",
        LSTMNoForget,
        "mistake",
        "I wrote c = c_prev + i * g and left the forget gate out.",
    ),
    BlindCase(
        CHECK,
        "no_tanh_on_memory",
        LSTMNoTanhOnMemory,
        "mistake",
        "I computed h = o * c, without the tanh of the new memory.",
    ),
    BlindCase(
        CHECK,
        "output_from_old_memory",
        LSTMOutputFromOldMemory,
        "mistake",
        "I computed h from tanh(c_prev), the old memory, instead of the new c.",
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
        "interleaved_split",
        LSTMInterleavedSplit,
        "mistake",
        "I reshaped z to (B, H, 4) and unbound the last axis to get the four gates.",
    ),
    BlindCase(
        CHECK,
        "squashed_memory",
        LSTMSquashedMemory,
        "mistake",
        "I put a tanh around the new memory c itself, to keep it bounded, and then h = o * c.",
    ),
    BlindCase(
        CHECK,
        "coupled_gates",
        LSTMCoupledGates,
        "mistake",
        "I wrote with (1 - f) instead of the input gate, like a GRU's update gate.",
    ),
    BlindCase(
        CHECK,
        "state_unpacked_c_h",
        LSTMStateUnpackedCH,
        "mistake",
        "I unpacked the state as (c, h) instead of (h, c).",
    ),
    BlindCase(
        CHECK,
        "in_place_memory",
        LSTMInPlaceMemory,
        "mistake",
        "I updated the memory in place with c.mul_(f).add_(i * g) to save a tensor.",
    ),
    BlindCase(
        CHECK,
        "detached_hidden",
        LSTMDetachedHidden,
        "mistake",
        "I detached h at the start of the step (truncated backprop through time).",
    ),
    BlindCase(
        CHECK,
        "per_gate_linear",
        LSTMPerGate,
        "correct",
        "Each gate computed with F.linear from its own row slice of the two weight matrices.",
    ),
    BlindCase(
        CHECK,
        "split_then_stacked_sigmoid",
        LSTMSplitIFOAtOnce,
        "correct",
        "torch.split into the four blocks, one sigmoid on the three gates stacked, and addcmul "
        "for the memory.",
    ),
    BlindCase(
        CHECK,
        "optional_state_view",
        LSTMOptionalState,
        "correct",
        "z viewed as (B, 4, H) and unbound; state=None gives zeros; a bias switch with a default.",
    ),
]
