"""Blind set B25, check_lstm_cell (chapter 3): one step of an LSTM as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_lstm_cell"


class _Layers(nn.Module):
    """The two layers under the book's names; each mistake below only changes forward."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class LSTMForgetFirst(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        f, i, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)  # f comes first
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOutputBeforeCandidate(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, o, g = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)  # i, f, o, g
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMAllSigmoid(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = torch.sigmoid(self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = f * c + i * g  # every gate through the sigmoid, the candidate too
        return o * torch.tanh(c), c


class LSTMNoForget(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMNoTanhOnCell(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * c, c


class LSTMReturnsCellFirst(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        c, h = state  # (c, h), the memory first
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return c, torch.sigmoid(o) * torch.tanh(c)


class LSTMOldCellInOutput(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c_prev = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c_prev), c


class LSTMChunkBatchAxis(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)  # (B, 4H)
        i, f, g, o = z.view(-1, 4, self.hidden_size).unbind(0)  # the four blocks
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMInterleavedGates(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)  # (B, 4H)
        i, f, g, o = z.view(z.shape[0], self.hidden_size, 4).unbind(-1)  # 4 numbers per unit
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOneMinusForget(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        erase = torch.sigmoid(f)  # f says how much to erase
        c = (1 - erase) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMStateBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size)  # bias=True, as PyTorch's b_hh

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMDetachedState(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = (s.detach() for s in state)  # cut the graph between steps to save memory
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMReturnsOnlyH(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> Tensor:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c)


# ---------------------------------------------------------------- correct variants


class LSTMSplitSizes(_Layers):
    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        H = self.hidden_size
        if state is None:
            state = (x.new_zeros(x.shape[0], H), x.new_zeros(x.shape[0], H))
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)
        i, f, g, o = torch.split(z, [H, H, H, H], dim=1)
        c_new = torch.addcmul(torch.sigmoid(f) * c, torch.sigmoid(i), torch.tanh(g))
        return torch.sigmoid(o) * torch.tanh(c_new), c_new


class LSTMOneMatrix(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        W = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)  # (4H, D_in + H)
        z = F.linear(torch.cat([x, h], dim=-1), W, self.in_proj.bias)
        H = self.hidden_size
        i, f, o = (torch.sigmoid(z[:, k * H : (k + 1) * H]) for k in (0, 1, 3))
        g = torch.tanh(z[:, 2 * H : 3 * H])
        c = f * c + i * g
        return o * torch.tanh(c), c


class LSTMSigmoidOnceTanhFromSigmoid(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)
        H = self.hidden_size
        scale = torch.ones_like(z)
        scale[:, 2 * H : 3 * H] = 2.0  # tanh(g) = 2 sigmoid(2 g) - 1
        s = torch.sigmoid(z * scale)
        i, f, sg, o = s.chunk(4, dim=-1)
        g = 2 * sg - 1
        c = f * c + i * g
        return o * torch.tanh(c), c


CASES = [
    BlindCase(
        CHECK,
        "forget_gate_first",
        LSTMForgetFirst,
        "mistake",
        "I unpacked the chunks as f, i, g, o, forget gate first.",
    ),
    BlindCase(
        CHECK,
        "order_i_f_o_g",
        LSTMOutputBeforeCandidate,
        "mistake",
        "I unpacked the chunks as i, f, o, g, the candidate last.",
    ),
    BlindCase(
        CHECK,
        "sigmoid_on_everything",
        LSTMAllSigmoid,
        "mistake",
        "I applied the sigmoid to the whole z before chunking, so the candidate got a sigmoid "
        "instead of tanh.",
    ),
    BlindCase(
        CHECK,
        "no_forget_gate",
        LSTMNoForget,
        "mistake",
        "I wrote c' = c + i * g and never used the forget gate.",
    ),
    BlindCase(
        CHECK,
        "no_tanh_on_new_memory",
        LSTMNoTanhOnCell,
        "mistake",
        "I wrote h' = sigmoid(o) * c', without the tanh of the new memory.",
    ),
    BlindCase(
        CHECK,
        "cell_first",
        LSTMReturnsCellFirst,
        "mistake",
        "I used the order (c, h) for the state, both when unpacking and when returning.",
    ),
    BlindCase(
        CHECK,
        "old_memory_in_output",
        LSTMOldCellInOutput,
        "mistake",
        "I computed h' from tanh of the old memory c instead of the new c'.",
    ),
    BlindCase(
        CHECK,
        "split_along_batch",
        LSTMChunkBatchAxis,
        "mistake",
        "I reshaped z to (-1, 4, H) and unbound dim 0, which splits the batch, not the gates.",
    ),
    BlindCase(
        CHECK,
        "interleaved_gates",
        LSTMInterleavedGates,
        "mistake",
        "I viewed z as (B, H, 4) and unbound the last axis, so every gate takes every fourth "
        "number instead of one block.",
    ),
    BlindCase(
        CHECK,
        "one_minus_forget",
        LSTMOneMinusForget,
        "mistake",
        "I read f as how much to erase and kept (1 - f) * c.",
    ),
    BlindCase(
        CHECK,
        "state_proj_with_bias",
        LSTMStateBias,
        "mistake",
        "I gave state_proj a bias too, as PyTorch's LSTM has b_hh.",
    ),
    BlindCase(
        CHECK,
        "detached_state",
        LSTMDetachedState,
        "mistake",
        "I detached h and c at the start of the step, so no gradient flows back to the previous "
        "state.",
    ),
    BlindCase(
        CHECK,
        "returns_only_h",
        LSTMReturnsOnlyH,
        "mistake",
        "I returned only the new h, not the pair (h, c).",
    ),
    BlindCase(
        CHECK,
        "split_and_addcmul",
        LSTMSplitSizes,
        "correct",
        "torch.split with four sizes, torch.addcmul for the memory, and a zero state when none "
        "is given.",
    ),
    BlindCase(
        CHECK,
        "one_matrix_slices",
        LSTMOneMatrix,
        "correct",
        "One product of [x; h] with [W_in W_h], then the four gates taken by slicing.",
    ),
    BlindCase(
        CHECK,
        "tanh_from_sigmoid",
        LSTMSigmoidOnceTanhFromSigmoid,
        "correct",
        "One sigmoid over all of z (the candidate block doubled first), tanh(g) = 2 sigmoid(2g) - 1.",
    ),
]
