"""Blind set B24, check_lstm_cell (chapter 3): one LSTM step as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_lstm_cell"


class _Cell(nn.Module):
    """The book's two layers; each case below changes only ``forward`` (or the layers)."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class LSTMForgetFirst(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        f, i, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)  # "forget gate"
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOrderIFOG(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, o, g = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)  # the 3 gates first
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMSigmoidCandidate(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = torch.sigmoid(self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = f * c + i * g
        return o * torch.tanh(c), c


class LSTMNoForget(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMNoTanhOnMemory(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * c, c


class LSTMReturnsCH(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return c, torch.sigmoid(o) * torch.tanh(c)


class LSTMInterleavedBlocks(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)  # (B, 4H)
        i, f, g, o = z.view(z.shape[0], self.hidden_size, 4).unbind(-1)  # four per unit
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOutputFromOldMemory(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c_prev = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        h = torch.sigmoid(o) * torch.tanh(c_prev)  # output first, then update the memory
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        return h, c


class LSTMSquashedMemory(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.tanh(torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g))  # keep c bounded
        return torch.sigmoid(o) * c, c


class LSTMGatesFromMemory(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(c)).chunk(4, dim=-1)  # c, not h
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOneMinusForget(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = (1 - torch.sigmoid(f)) * c + torch.sigmoid(i) * torch.tanh(g)  # f = how much to forget
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMGateInsideTanh(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.tanh(torch.sigmoid(o) * c), c


class LSTMMemoryInPlace(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c.mul_(torch.sigmoid(f)).add_(torch.sigmoid(i) * torch.tanh(g))  # update the diary
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMReturnsLikeNN(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]):
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return h, (h, c)  # output, (h_n, c_n) as nn.LSTM


# ---------------------------------------------------------------- correct variants


class LSTMSplitSlices(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h_prev, c_prev = state
        H = self.hidden_size
        z = self.in_proj(x) + h_prev @ self.state_proj.weight.T
        i = torch.sigmoid(z[:, 0:H])
        f = torch.sigmoid(z[:, H : 2 * H])
        g = torch.tanh(z[:, 2 * H : 3 * H])
        o = torch.sigmoid(z[:, 3 * H :])
        c = torch.addcmul(f * c_prev, i, g)
        return o * c.tanh(), c


class LSTMConcatWeights(_Cell):
    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h, c = state
        W = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)  # [W_in | W_h]
        z = F.linear(torch.cat([x, h], dim=-1), W, self.in_proj.bias)
        gates = torch.sigmoid(z).split(self.hidden_size, dim=-1)
        g = torch.tanh(z.split(self.hidden_size, dim=-1)[2])
        c_new = gates[1] * c + gates[0] * g
        return gates[3] * torch.tanh(c_new), c_new


class LSTMTanhSigmoid(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, 4 * hidden_size, bias=bias)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        zi, zf, zg, zo = torch.chunk(self.in_proj(x) + self.state_proj(h), 4, dim=1)
        sig = lambda t: 0.5 * (1 + torch.tanh(0.5 * t))  # noqa: E731  sigmoid written with tanh
        c = sig(zf) * c + sig(zi) * torch.tanh(zg)
        return sig(zo) * torch.tanh(c), c


CASES = [
    BlindCase(
        CHECK,
        "forget_block_first",
        LSTMForgetFirst,
        "mistake",
        "I unpacked the blocks as f, i, g, o: the forget gate first.",
    ),
    BlindCase(
        CHECK,
        "order_i_f_o_g",
        LSTMOrderIFOG,
        "mistake",
        "I unpacked the blocks as i, f, o, g (the three gates, then the candidate).",
    ),
    BlindCase(
        CHECK,
        "sigmoid_on_candidate",
        LSTMSigmoidCandidate,
        "mistake",
        "I applied one sigmoid to all four blocks, the candidate g included.",
    ),
    BlindCase(
        CHECK,
        "no_forget_gate",
        LSTMNoForget,
        "mistake",
        "I wrote c = c_prev + i * g, without the forget gate.",
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
        "returns_c_then_h",
        LSTMReturnsCH,
        "mistake",
        "I return (c, h) instead of (h, c).",
    ),
    BlindCase(
        CHECK,
        "blocks_interleaved",
        LSTMInterleavedBlocks,
        "mistake",
        "I split z with view(B, H, 4), so each unit's four numbers are taken as i, f, g, o.",
    ),
    BlindCase(
        CHECK,
        "output_from_old_memory",
        LSTMOutputFromOldMemory,
        "mistake",
        "I computed h from tanh(c_prev) before updating the memory.",
    ),
    BlindCase(
        CHECK,
        "memory_squashed",
        LSTMSquashedMemory,
        "mistake",
        "I stored tanh of the new memory as c, so the memory is squashed every step.",
    ),
    BlindCase(
        CHECK,
        "gates_from_memory",
        LSTMGatesFromMemory,
        "mistake",
        "I fed c_prev into state_proj instead of h_prev.",
    ),
    BlindCase(
        CHECK,
        "one_minus_forget",
        LSTMOneMinusForget,
        "mistake",
        "I read f as 'how much to forget' and kept (1 - f) * c_prev.",
    ),
    BlindCase(
        CHECK,
        "output_gate_inside_tanh",
        LSTMGateInsideTanh,
        "mistake",
        "I wrote h = tanh(o * c) instead of o * tanh(c).",
    ),
    BlindCase(
        CHECK,
        "memory_updated_in_place",
        LSTMMemoryInPlace,
        "mistake",
        "I updated c in place with mul_ and add_, which also changes the caller's c.",
    ),
    BlindCase(
        CHECK,
        "returns_like_nn_lstm",
        LSTMReturnsLikeNN,
        "mistake",
        "I return h, (h, c) like nn.LSTM does, not the pair (h, c).",
    ),
    BlindCase(
        CHECK,
        "slices_and_addcmul",
        LSTMSplitSlices,
        "correct",
        "Four explicit slices of z, h @ W_h.T for the state term, addcmul for the memory.",
    ),
    BlindCase(
        CHECK,
        "concatenated_weights",
        LSTMConcatWeights,
        "correct",
        "One F.linear on [x; h] with [W_in | W_h]; the sigmoid on all of z, tanh on g; the "
        "state may be None.",
    ),
    BlindCase(
        CHECK,
        "sigmoid_via_tanh_bias_arg",
        LSTMTanhSigmoid,
        "correct",
        "sigmoid written as (1 + tanh(t/2)) / 2; an extra bias argument with default True.",
    ),
]
