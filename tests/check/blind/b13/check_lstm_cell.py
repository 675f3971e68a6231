"""Blind set B13, check_lstm_cell (chapter 3): one LSTM step as readers write it."""

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


class LSTMSwapIF(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        f, i, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)  # "forget first"
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMSigmoidCandidate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = torch.sigmoid(self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = f * c + i * g  # every block through the sigmoid
        return o * torch.tanh(c), c


class LSTMNoForget(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMNoTanhOnCell(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * c, c


class LSTMOrderIFOG(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, o, g = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)  # sigmoids first
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMInterleavedSplit(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)
        i, f, g, o = z.view(z.shape[0], self.hidden_size, 4).unbind(-1)  # (B, H, 4)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMReturnsCH(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return c, h  # memory first, as it is computed first


class LSTMOutputFromOldCell(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c_prev = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c_prev), c  # shows the old diary


class LSTMSquashedCell(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.tanh(torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g))  # keep it bounded
        return torch.sigmoid(o) * c, c


class LSTMStateUnpackedCH(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        c, h = state  # unpacked in the wrong order
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMDetachedState(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        h = h.detach()  # truncated backprop, so gradients do not explode
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


# ---------------------------------------------------------------- correct variants


class LSTMSplit(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h_prev, c_prev = state
        z = self.in_proj(x) + self.state_proj(h_prev)
        i, f, g, o = torch.split(z, self.hidden_size, dim=1)
        c = f.sigmoid() * c_prev + i.sigmoid() * g.tanh()
        return o.sigmoid() * c.tanh(), c


class LSTMViewBlocks(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor] | None = None) -> tuple:
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)
        gates = z.view(z.shape[0], 4, self.hidden_size)  # (B, 4, H): block-major
        i, f, o = torch.sigmoid(gates[:, [0, 1, 3]]).unbind(1)
        g = torch.tanh(gates[:, 2])
        c_new = f * c + i * g
        return o * torch.tanh(c_new), c_new


class LSTMConcatWeights(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        W = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)  # (4H, D_in + H)
        z = F.linear(torch.cat([x, h], dim=-1), W, self.in_proj.bias)
        i, f, g, o = z.chunk(4, -1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMTanhViaSigmoid(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        g = 2 * torch.sigmoid(2 * g) - 1  # tanh(g) written with the sigmoid
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * g
        return torch.sigmoid(o) * torch.tanh(c), c


CASES = [
    BlindCase(
        CHECK,
        "input_forget_swapped",
        LSTMSwapIF,
        "mistake",
        "I chunked the blocks as f, i, g, o, forget gate first.",
    ),
    BlindCase(
        CHECK,
        "sigmoid_on_candidate",
        LSTMSigmoidCandidate,
        "mistake",
        "I applied the sigmoid to all four blocks at once, candidate included.",
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
        "no_tanh_on_cell",
        LSTMNoTanhOnCell,
        "mistake",
        "I wrote h = o * c without the tanh of the new memory.",
    ),
    BlindCase(
        CHECK,
        "order_i_f_o_g",
        LSTMOrderIFOG,
        "mistake",
        "I took the blocks in the order i, f, o, g (the three sigmoid gates first).",
    ),
    BlindCase(
        CHECK,
        "interleaved_split",
        LSTMInterleavedSplit,
        "mistake",
        "I split z with view(B, H, 4).unbind(-1), which interleaves the blocks.",
    ),
    BlindCase(
        CHECK, "returns_c_h", LSTMReturnsCH, "mistake", "I returned (c, h) instead of (h, c)."
    ),
    BlindCase(
        CHECK,
        "output_from_old_cell",
        LSTMOutputFromOldCell,
        "mistake",
        "I computed h from tanh(c_prev) instead of the new c.",
    ),
    BlindCase(
        CHECK,
        "squashed_cell",
        LSTMSquashedCell,
        "mistake",
        "I applied tanh to the new memory itself and stored the squashed c.",
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
        "detached_h",
        LSTMDetachedState,
        "mistake",
        "I detached h_prev inside the cell to truncate backprop, so no gradient reaches h.",
    ),
    BlindCase(
        CHECK,
        "split_by_hidden",
        LSTMSplit,
        "correct",
        "torch.split by hidden_size and tensor methods .sigmoid()/.tanh().",
    ),
    BlindCase(
        CHECK,
        "view_blocks_optional_state",
        LSTMViewBlocks,
        "correct",
        "view(B, 4, H) block-major and gate indexing; state optional (zeros).",
    ),
    BlindCase(
        CHECK,
        "concatenated_weights",
        LSTMConcatWeights,
        "correct",
        "One F.linear on [x; h] with the two weight matrices concatenated.",
    ),
    BlindCase(
        CHECK,
        "tanh_via_sigmoid",
        LSTMTanhViaSigmoid,
        "correct",
        "The candidate's tanh written as 2 sigmoid(2g) - 1.",
    ),
]
