"""Blind set B15, check_lstm_cell (chapter 3): one LSTM step, as readers write it."""

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

    def _z(self, x: Tensor, h: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(h)


# ---------------------------------------------------------------- mistakes


class LSTMSwapIF(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        f, i, g, o = self._z(x, h).chunk(4, dim=-1)  # forget first, I thought
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMSigmoidCandidate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = torch.sigmoid(self._z(x, h)).chunk(4, dim=-1)  # one sigmoid for all four
        c = f * c + i * g
        return o * torch.tanh(c), c


class LSTMNoForget(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self._z(x, h).chunk(4, dim=-1)
        c = c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMNoTanhOut(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self._z(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * c, c


class LSTMOrderIFOG(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, o, g = self._z(x, h).chunk(4, dim=-1)  # the three gates first, then g
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMReturnsCH(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self._z(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return c, torch.sigmoid(o) * torch.tanh(c)


class LSTMInterleavedView(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self._z(x, h).view(x.shape[0], self.hidden_size, 4)  # (B, H, 4)
        i, f, g, o = z.unbind(-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOldMemoryOut(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c_prev = state
        i, f, g, o = self._z(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c_prev), c  # h from the old diary


class LSTMCoupled(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self._z(x, h).chunk(4, dim=-1)
        f = torch.sigmoid(f)
        c = f * c + (1 - f) * torch.tanh(g)  # write what was forgotten
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMHiddenMix(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(c)  # the diary as the recurrent input
        i, f, g, o = z.chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


# ---------------------------------------------------------------- correct variants


class LSTMViewBlocks(_Base):
    """view(B, 4, H) then unbind; the state defaults to zeros."""

    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h, c = state
        i, f, g, o = self._z(x, h).view(x.shape[0], 4, self.hidden_size).unbind(1)
        c_new = f.sigmoid() * c + i.sigmoid() * g.tanh()
        return o.sigmoid() * c_new.tanh(), c_new


class LSTMSliceWeights(_Base):
    """Each gate from its own slice of the weights with F.linear."""

    def gate(self, k: int, x: Tensor, h: Tensor) -> Tensor:
        H = self.hidden_size
        rows = slice(k * H, (k + 1) * H)
        w_in, b, w_h = (
            self.in_proj.weight[rows],
            self.in_proj.bias[rows],
            self.state_proj.weight[rows],
        )
        return F.linear(x, w_in, b) + F.linear(h, w_h)

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i = torch.sigmoid(self.gate(0, x, h))
        f = torch.sigmoid(self.gate(1, x, h))
        g = torch.tanh(self.gate(2, x, h))
        o = torch.sigmoid(self.gate(3, x, h))
        c = torch.addcmul(f * c, i, g)
        return o * torch.tanh(c), c


class LSTMSplitAllSigmoid(_Base):
    """torch.split; tanh(g) written as 2 sigmoid(2g) - 1; returns a list-free tuple."""

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = torch.split(self._z(x, h), self.hidden_size, dim=-1)
        g = 2 * torch.sigmoid(2 * g) - 1
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * g
        return torch.sigmoid(o) * torch.tanh(c), c


CASES = [
    BlindCase(
        CHECK,
        "input_forget_swapped",
        LSTMSwapIF,
        "mistake",
        "I unpacked the chunks as f, i, g, o: input and forget gates swapped.",
    ),
    BlindCase(
        CHECK,
        "sigmoid_on_candidate",
        LSTMSigmoidCandidate,
        "mistake",
        "I applied one sigmoid to all four blocks, so the candidate g is a sigmoid too.",
    ),
    BlindCase(
        CHECK,
        "no_forget_gate",
        LSTMNoForget,
        "mistake",
        "I wrote c = c_prev + i * g, leaving out the forget gate.",
    ),
    BlindCase(
        CHECK,
        "no_tanh_of_memory",
        LSTMNoTanhOut,
        "mistake",
        "I wrote h = o * c without the tanh of the new memory.",
    ),
    BlindCase(
        CHECK,
        "order_ifog",
        LSTMOrderIFOG,
        "mistake",
        "I took the blocks in the order i, f, o, g (gates first), not PyTorch's i, f, g, o.",
    ),
    BlindCase(CHECK, "returns_c_h", LSTMReturnsCH, "mistake", "I return (c, h) instead of (h, c)."),
    BlindCase(
        CHECK,
        "interleaved_view",
        LSTMInterleavedView,
        "mistake",
        "I split z with view(B, H, 4).unbind(-1), which interleaves the four blocks.",
    ),
    BlindCase(
        CHECK,
        "h_from_old_memory",
        LSTMOldMemoryOut,
        "mistake",
        "I computed h from tanh(c_prev), the old memory, not the new one.",
    ),
    BlindCase(
        CHECK,
        "coupled_gates",
        LSTMCoupled,
        "mistake",
        "I used (1 - f) as the input gate, like a GRU, ignoring i.",
    ),
    BlindCase(
        CHECK,
        "memory_as_recurrent_input",
        LSTMHiddenMix,
        "mistake",
        "I fed the memory c to state_proj instead of h.",
    ),
    BlindCase(
        CHECK,
        "view_blocks_default_state",
        LSTMViewBlocks,
        "correct",
        "view(B, 4, H).unbind(1) and tensor methods; state defaults to zeros.",
    ),
    BlindCase(
        CHECK,
        "per_gate_weight_slices",
        LSTMSliceWeights,
        "correct",
        "Each gate from its slice of the weights with F.linear; torch.addcmul for c.",
    ),
    BlindCase(
        CHECK,
        "split_tanh_as_sigmoid",
        LSTMSplitAllSigmoid,
        "correct",
        "torch.split, and tanh(g) written as 2 sigmoid(2g) - 1.",
    ),
]
