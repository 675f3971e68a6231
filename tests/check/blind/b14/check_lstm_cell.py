"""Blind set B14, check_lstm_cell (chapter 3): one LSTM step with gates in PyTorch's order."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_lstm_cell"


class _Base(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)

    def gates(self, x: Tensor, h: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        return (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)


# ---------------------------------------------------------------- mistakes


class LSTMForgetFirst(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        f, i, g, o = self.gates(x, h)  # f first, as the forget gate comes first in the diary
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMIfogOrder(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, o, g = self.gates(x, h)  # the three sigmoid gates together, the candidate last
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMSigmoidCandidate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = torch.sigmoid(torch.cat(self.gates(x, h), dim=-1)).chunk(4, dim=-1)
        c = f * c + i * g  # one sigmoid over all four blocks
        return o * torch.tanh(c), c


class LSTMNoForget(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.gates(x, h)
        c = c + torch.sigmoid(i) * torch.tanh(g)  # the diary only accumulates
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMNoTanhOnMemory(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.gates(x, h)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * c, c  # show the diary as it is


class LSTMCoupledForget(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.gates(x, h)
        f = torch.sigmoid(f)
        c = (1 - f) * c + torch.sigmoid(i) * torch.tanh(g)  # f = how much to forget
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOldMemoryOut(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c_prev = state
        i, f, g, o = self.gates(x, h)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c_prev), c  # h from the old diary


class LSTMReturnsCH(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.gates(x, h)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return c, torch.sigmoid(o) * torch.tanh(c)  # (c, h)


class LSTMUnpacksCH(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        c, h = state  # the memory first
        i, f, g, o = self.gates(x, h)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMDetachedH(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.gates(x, h.detach())  # truncate backprop through the hidden state
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMChunkBatchAxis(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)  # (B, 4H)
        i, f, g, o = z.view(4, -1, self.hidden_size)  # four blocks of H
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


# ---------------------------------------------------------------- correct variants


class LSTMSplitUnbind(_Base):
    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)
        i, f, g, o = z.view(x.shape[0], 4, self.hidden_size).unbind(dim=1)
        c_new = torch.addcmul(torch.sigmoid(f) * c, torch.sigmoid(i), torch.tanh(g))
        return torch.sigmoid(o) * c_new.tanh(), c_new


class LSTMWeightSlices(_Base):
    """Each gate from its own slice of the weights, with a helper method."""

    def _gate(self, k: int, x: Tensor, h: Tensor) -> Tensor:
        H = self.hidden_size
        rows = slice(k * H, (k + 1) * H)
        w_x, b = self.in_proj.weight[rows], self.in_proj.bias[rows]
        return x @ w_x.T + b + h @ self.state_proj.weight[rows].T

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i = torch.sigmoid(self._gate(0, x, h))
        f = torch.sigmoid(self._gate(1, x, h))
        g = torch.tanh(self._gate(2, x, h))
        o = torch.sigmoid(self._gate(3, x, h))
        c = f * c + i * g
        return o * torch.tanh(c), c


class LSTMSplitWithGates(_Base):
    def forward_with_gates(self, x: Tensor, state: tuple[Tensor, Tensor]):
        h, c = state
        i, f, g, o = torch.split(self.in_proj(x) + self.state_proj(h), self.hidden_size, dim=1)
        i, f, o = i.sigmoid(), f.sigmoid(), o.sigmoid()
        g = g.tanh()
        c_new = f * c
        c_new += i * g  # in place on my own temporary
        return o * c_new.tanh(), c_new, (i, f, g, o)

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c, _ = self.forward_with_gates(x, state)
        return h, c


CASES = [
    BlindCase(
        CHECK,
        "forget_first",
        LSTMForgetFirst,
        "mistake",
        "I unpacked the blocks as f, i, g, o, swapping the input and forget gates.",
    ),
    BlindCase(
        CHECK,
        "ifog_order",
        LSTMIfogOrder,
        "mistake",
        "I unpacked i, f, o, g (the sigmoid gates together), not PyTorch's i, f, g, o.",
    ),
    BlindCase(
        CHECK,
        "sigmoid_candidate",
        LSTMSigmoidCandidate,
        "mistake",
        "I applied one sigmoid to all four blocks, so the candidate is a sigmoid too.",
    ),
    BlindCase(
        CHECK,
        "no_forget_gate",
        LSTMNoForget,
        "mistake",
        "I added the new write to the old memory without multiplying by the forget gate.",
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
        "one_minus_forget",
        LSTMCoupledForget,
        "mistake",
        "I read f as 'how much to forget' and kept (1 - f) * c.",
    ),
    BlindCase(
        CHECK,
        "output_from_old_memory",
        LSTMOldMemoryOut,
        "mistake",
        "I computed h from tanh of the previous memory instead of the new one.",
    ),
    BlindCase(
        CHECK, "returns_c_h", LSTMReturnsCH, "mistake", "I returned (c, h) instead of (h, c)."
    ),
    BlindCase(
        CHECK,
        "unpacks_c_h",
        LSTMUnpacksCH,
        "mistake",
        "I unpacked the incoming state as (c, h) instead of (h, c).",
    ),
    BlindCase(
        CHECK,
        "detached_h",
        LSTMDetachedH,
        "mistake",
        "I detached h before state_proj to truncate backprop, so no gradient reaches h.",
    ),
    BlindCase(
        CHECK,
        "chunk_with_view",
        LSTMChunkBatchAxis,
        "mistake",
        "I split z with z.view(4, -1, H), which cuts across the batch rather than the 4H features.",
    ),
    BlindCase(
        CHECK,
        "split_unbind",
        LSTMSplitUnbind,
        "correct",
        "view(B, 4, H).unbind(1) and addcmul; the state may be None.",
    ),
    BlindCase(
        CHECK,
        "weight_slices",
        LSTMWeightSlices,
        "correct",
        "Each gate computed from its own slice of the weights, in a helper method.",
    ),
    BlindCase(
        CHECK,
        "split_with_gates",
        LSTMSplitWithGates,
        "correct",
        "torch.split by H, plus a forward_with_gates helper; += on a temporary.",
    ),
]
