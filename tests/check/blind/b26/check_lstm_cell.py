"""Blind set B26, check_lstm_cell (chapter 3): one LSTM step as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_lstm_cell"


class _Layers(nn.Module):
    """The two layers as the skeleton names them, shared by the mistakes that are elsewhere."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class LSTMGatesIFOG(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, o, g = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)  # i, f, o, g
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMReturnsCH(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return c, h  # the diary first


class LSTMTanhOutside(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.tanh(torch.sigmoid(o) * c), c  # tanh around the product


class LSTMLinearCandidate(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * g  # candidate written as it comes
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOutputFromOldMemory(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        h_new = torch.sigmoid(o) * torch.tanh(c)  # shows the diary as it was
        c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return h_new, c_new


class LSTMCoupledGates(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        _, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        f = torch.sigmoid(f)
        c = f * c + (1 - f) * torch.tanh(g)  # what is not kept is written
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMInterleavedSplit(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)  # (B, 4H)
        i, f, g, o = z.view(z.shape[0], self.hidden_size, 4).unbind(-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMChunkBatchAxis(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)
        i, f, g, o = z.chunk(4)  # four blocks
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMTwoBiases(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size)  # b_ih and b_hh, as in PyTorch

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMStateUnpackedCH(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        c, h = state  # the cell state, then the hidden state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMUpdatesDiaryInPlace(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c.mul_(torch.sigmoid(f)).add_(torch.sigmoid(i) * torch.tanh(g))  # erase, then write
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOneMinusForget(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        forget = torch.sigmoid(f)  # how much to erase
        c = (1 - forget) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMReturnsOnlyH(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> Tensor:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c)


# ---------------------------------------------------------------- correct variants


class LSTMSlices(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h_prev, c_prev = state
        H = self.hidden_size
        z = self.in_proj(x) + self.state_proj(h_prev)
        i = torch.sigmoid(z[:, 0:H])
        f = torch.sigmoid(z[:, H : 2 * H])
        g = torch.tanh(z[:, 2 * H : 3 * H])
        o = torch.sigmoid(z[:, 3 * H :])
        c = f * c_prev + i * g
        h = o * torch.tanh(c)
        return h, c


class LSTMTanhFromSigmoid(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).split(self.hidden_size, dim=-1)
        g = 2 * torch.sigmoid(2 * g) - 1  # tanh(g) written through the sigmoid
        c = torch.addcmul(torch.sigmoid(f) * c, torch.sigmoid(i), g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMConcatenated(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, forget_bias: float = 0.0) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)
        self.forget_bias = forget_bias

    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h, c = state
        weight = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)  # (4H, D + H)
        z = F.linear(torch.cat([x, h], dim=-1), weight, self.in_proj.bias)
        i, f, g, o = z.chunk(4, dim=-1)
        f = f + self.forget_bias
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        return o.sigmoid() * c.tanh(), c


class LSTMViewBlocks(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)
        i, f, g, o = z.view(-1, 4, self.hidden_size).unbind(1)  # block k is z[:, kH:(k+1)H]
        gates = torch.stack([i, f, o]).sigmoid()
        c = gates[1] * c + gates[0] * torch.tanh(g)
        return gates[2] * torch.tanh(c), c


CASES = [
    BlindCase(
        CHECK,
        "gates_i_f_o_g",
        LSTMGatesIFOG,
        "mistake",
        "I split the blocks in the order i, f, o, g, as a blog wrote them, not PyTorch's i, f, g, o.",
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
        "tanh_around_output_gate",
        LSTMTanhOutside,
        "mistake",
        "I wrote h = tanh(o * c) instead of o * tanh(c).",
    ),
    BlindCase(
        CHECK,
        "candidate_without_squashing",
        LSTMLinearCandidate,
        "mistake",
        "I used the candidate block g as it is, without tanh.",
    ),
    BlindCase(
        CHECK,
        "output_from_old_memory",
        LSTMOutputFromOldMemory,
        "mistake",
        "I computed h from the previous c before updating the diary.",
    ),
    BlindCase(
        CHECK,
        "coupled_input_forget",
        LSTMCoupledGates,
        "mistake",
        "I wrote the candidate with (1 - f) and never used the input gate.",
    ),
    BlindCase(
        CHECK,
        "interleaved_split",
        LSTMInterleavedSplit,
        "mistake",
        "I split z with view(B, H, 4).unbind(-1), which interleaves the four blocks.",
    ),
    BlindCase(
        CHECK,
        "chunk_over_batch",
        LSTMChunkBatchAxis,
        "mistake",
        "I called z.chunk(4) without dim=-1, so it splits the batch axis.",
    ),
    BlindCase(
        CHECK,
        "two_biases",
        LSTMTwoBiases,
        "mistake",
        "I gave state_proj a bias too, as nn.LSTMCell has b_ih and b_hh.",
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
        "diary_updated_in_place",
        LSTMUpdatesDiaryInPlace,
        "mistake",
        "I updated c in place with mul_ and add_, which changes the caller's c.",
    ),
    BlindCase(
        CHECK,
        "one_minus_forget",
        LSTMOneMinusForget,
        "mistake",
        "I read the forget gate as how much to erase and kept (1 - f) * c.",
    ),
    BlindCase(
        CHECK,
        "returns_only_h",
        LSTMReturnsOnlyH,
        "mistake",
        "I return only the new h and not the new c.",
    ),
    BlindCase(
        CHECK,
        "explicit_slices",
        LSTMSlices,
        "correct",
        "Each gate sliced out of z by hand, z[:, 0:H] and so on.",
    ),
    BlindCase(
        CHECK,
        "tanh_through_sigmoid",
        LSTMTanhFromSigmoid,
        "correct",
        "split by hidden_size; tanh(g) as 2 sigmoid(2g) - 1 and the diary with addcmul.",
    ),
    BlindCase(
        CHECK,
        "one_concatenated_product",
        LSTMConcatenated,
        "correct",
        "One F.linear on [x; h] with the two weights concatenated; state may be None and an "
        "extra forget_bias argument defaults to 0.",
    ),
    BlindCase(
        CHECK,
        "view_blocks",
        LSTMViewBlocks,
        "correct",
        "z.view(B, 4, H).unbind(1) for the four blocks; the three sigmoid gates in one stack.",
    ),
]
