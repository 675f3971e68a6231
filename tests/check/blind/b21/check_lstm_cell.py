"""Blind set B21, check_lstm_cell (chapter 3): one LSTM step as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_lstm_cell"


class _Base(nn.Module):
    """The two layers under the book's names; subclasses write forward."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class LSTMInputForgetSwapped(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        f, i, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMSigmoidCandidate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = torch.sigmoid(self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = f * c + i * g
        return o * torch.tanh(c), c


class LSTMNoForget(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMNoTanhOnMemory(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * c, c


class LSTMInterleavedSplit(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)  # (B, 4H)
        i, f, g, o = z.view(z.shape[0], self.hidden_size, 4).unbind(-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOrderIFOG(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, o, g = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)  # the 3 sigmoids first
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOldMemoryInOutput(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c_prev = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c_prev), c


class LSTMReturnsCH(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return c, h


class LSTMCoupledGates(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        f = torch.sigmoid(f)
        c = f * c + (1 - f) * torch.tanh(g)  # write what was forgotten
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMProjectsMemory(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(c)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMStateUnpackedCH(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        c, h = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMDoubleTanh(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
        c = f * c + i * torch.tanh(g)  # the formula's tanh(g), on top of the one above
        return o * torch.tanh(c), c


class LSTMForgetBiasInForward(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        f = torch.sigmoid(f + 1.0)  # forget bias of 1, so the memory is kept
        c = f * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


# ---------------------------------------------------------------- correct variants


class LSTMSplitBySize(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h_prev, c_prev = state
        z = self.in_proj(x) + self.state_proj(h_prev)
        i, f, g, o = torch.split(z, self.hidden_size, dim=1)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return h, c


class LSTMViewBlocks(_Base):
    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h, c = state
        z = (self.in_proj(x) + self.state_proj(h)).view(x.shape[0], 4, self.hidden_size)
        i, f, g, o = z.unbind(1)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        return o.sigmoid() * c.tanh(), c


class LSTMSigmoidOnce(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        H = self.hidden_size
        z = F.linear(x, self.in_proj.weight, self.in_proj.bias) + h @ self.state_proj.weight.T
        gates = torch.sigmoid(z[:, : 2 * H])  # i and f
        g = torch.tanh(z[:, 2 * H : 3 * H])
        o = torch.sigmoid(z[:, 3 * H :])
        c_new = torch.addcmul(gates[:, H:] * c, gates[:, :H], g)
        return o * torch.tanh(c_new), c_new


class LSTMCatInputs(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, 4 * hidden_size, bias=bias)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        # one matrix product on [x; h] with the two weights side by side
        W = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)
        z = torch.cat([x, h], dim=-1) @ W.T
        if self.in_proj.bias is not None:
            z = z + self.in_proj.bias
        i, f, g, o = z.chunk(4, -1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


CASES = [
    BlindCase(
        CHECK,
        "input_forget_swapped",
        LSTMInputForgetSwapped,
        "mistake",
        "I unpacked the blocks as f, i, g, o.",
    ),
    BlindCase(
        CHECK,
        "sigmoid_candidate",
        LSTMSigmoidCandidate,
        "mistake",
        "I applied sigmoid to all of z at once, the candidate g included.",
    ),
    BlindCase(
        CHECK,
        "no_forget_gate",
        LSTMNoForget,
        "mistake",
        "I wrote c = c_prev + i * g and left the forget gate out.",
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
        "interleaved_split",
        LSTMInterleavedSplit,
        "mistake",
        "I split z with view(B, H, 4).unbind(-1), which takes every fourth column instead of "
        "four blocks.",
    ),
    BlindCase(
        CHECK,
        "order_i_f_o_g",
        LSTMOrderIFOG,
        "mistake",
        "I unpacked the blocks as i, f, o, g (the sigmoid gates first).",
    ),
    BlindCase(
        CHECK,
        "old_memory_in_output",
        LSTMOldMemoryInOutput,
        "mistake",
        "I computed h from tanh(c_prev) instead of tanh of the new c.",
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
        "coupled_gates",
        LSTMCoupledGates,
        "mistake",
        "I wrote with (1 - f) instead of the input gate i.",
    ),
    BlindCase(
        CHECK,
        "state_proj_on_memory",
        LSTMProjectsMemory,
        "mistake",
        "I fed the memory c_prev to state_proj instead of h_prev.",
    ),
    BlindCase(
        CHECK,
        "state_unpacked_c_h",
        LSTMStateUnpackedCH,
        "mistake",
        "I unpacked the state as c, h = state.",
    ),
    BlindCase(
        CHECK,
        "tanh_twice_on_candidate",
        LSTMDoubleTanh,
        "mistake",
        "I took tanh of g when activating the gates and again in the memory update.",
    ),
    BlindCase(
        CHECK,
        "forget_bias_in_forward",
        LSTMForgetBiasInForward,
        "mistake",
        "I added a forget bias of 1 inside forward (sigmoid(f + 1)).",
    ),
    BlindCase(
        CHECK,
        "split_by_size",
        LSTMSplitBySize,
        "correct",
        "torch.split(z, H, dim=1) instead of chunk.",
    ),
    BlindCase(
        CHECK,
        "view_blocks_optional_state",
        LSTMViewBlocks,
        "correct",
        "z.view(B, 4, H).unbind(1); the state may be None (zeros).",
    ),
    BlindCase(
        CHECK,
        "sigmoid_once_addcmul",
        LSTMSigmoidOnce,
        "correct",
        "Column slices, one sigmoid for i and f together, addcmul for the memory update.",
    ),
    BlindCase(
        CHECK,
        "one_product_on_cat",
        LSTMCatInputs,
        "correct",
        "One product of [x; h] with the two weight matrices side by side, bias added after.",
    ),
]
