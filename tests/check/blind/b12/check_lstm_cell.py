"""Blind set B12, check_lstm_cell (chapter 3): one LSTM step with blocks i, f, g, o."""

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

    def gates(self, x: Tensor, h: Tensor) -> tuple[Tensor, ...]:
        return (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)


# ---------------------------------------------------------------- mistakes


class LSTMGatesSwapped(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        f, i, g, o = self.gates(x, h)  # forget first
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMSigmoidCandidate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (torch.sigmoid(z) for z in self.gates(x, h))  # all four are gates
        c = f * c + i * g
        return o * torch.tanh(c), c


class LSTMNoForget(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.gates(x, h)
        c = c + torch.sigmoid(i) * torch.tanh(g)  # keep the whole diary
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMNoTanhOut(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.gates(x, h)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * c, c


class LSTMReturnsCH(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.gates(x, h)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return c, torch.sigmoid(o) * torch.tanh(c)  # (c, h)


class LSTMTensorFlowOrder(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, g, f, o = self.gates(x, h)  # i, j, f, o as in TensorFlow
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMCellIntoGates(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.gates(x, c)  # the memory feeds the gates
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMDetachedMemory(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.gates(x, h)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c.detach())  # the diary is carried, not learned
        return h, c


class LSTMInPlaceMemory(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.gates(x, h)
        c.mul_(torch.sigmoid(f)).add_(torch.sigmoid(i) * torch.tanh(g))  # update the diary
        return torch.sigmoid(o) * torch.tanh(c), c


# ---------------------------------------------------------------- correct variants


class LSTMSliced(_Base):
    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        H = self.hidden_size
        if state is None:
            zeros = x.new_zeros(x.shape[0], H)
            state = (zeros, zeros)
        h, c = state
        z = F.linear(x, self.in_proj.weight, self.in_proj.bias) + h @ self.state_proj.weight.T
        i, f = torch.sigmoid(z[:, :H]), torch.sigmoid(z[:, H : 2 * H])
        g, o = torch.tanh(z[:, 2 * H : 3 * H]), torch.sigmoid(z[:, 3 * H :])
        c_new = f * c + i * g
        return o * torch.tanh(c_new), c_new


class LSTMViewUnbind(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)
        i, f, g, o = z.view(x.shape[0], 4, self.hidden_size).unbind(dim=1)
        c_new = torch.addcmul(torch.sigmoid(f) * c, torch.sigmoid(i), torch.tanh(g))
        return torch.sigmoid(o) * torch.tanh(c_new), c_new


class LSTMOneSigmoid(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        H = self.hidden_size
        z = self.in_proj(x) + self.state_proj(h)
        scale = torch.ones_like(z)
        scale[:, 2 * H : 3 * H] = 2.0  # tanh(g) = 2 sigmoid(2g) - 1
        s = torch.sigmoid(z * scale)
        i, f, g, o = s.chunk(4, dim=-1)
        c_new = f * c + i * (2 * g - 1)
        return o * torch.tanh(c_new), c_new


CASES = [
    BlindCase(
        CHECK,
        "input_forget_swapped",
        LSTMGatesSwapped,
        "mistake",
        "I unpacked the chunks as f, i, g, o, swapping the input and forget gates.",
    ),
    BlindCase(
        CHECK,
        "sigmoid_candidate",
        LSTMSigmoidCandidate,
        "mistake",
        "I applied a sigmoid to all four blocks, the candidate included.",
    ),
    BlindCase(
        CHECK,
        "no_forget_gate",
        LSTMNoForget,
        "mistake",
        "I added the new memory to c without multiplying c by the forget gate.",
    ),
    BlindCase(
        CHECK,
        "no_tanh_on_c",
        LSTMNoTanhOut,
        "mistake",
        "I wrote h = o * c, without the tanh of the new memory.",
    ),
    BlindCase(
        CHECK, "returns_c_h", LSTMReturnsCH, "mistake", "I returned (c, h) instead of (h, c)."
    ),
    BlindCase(
        CHECK,
        "tensorflow_order",
        LSTMTensorFlowOrder,
        "mistake",
        "I took the blocks in TensorFlow's order i, g, f, o instead of PyTorch's i, f, g, o.",
    ),
    BlindCase(
        CHECK,
        "memory_into_gates",
        LSTMCellIntoGates,
        "mistake",
        "I fed the memory c instead of h into state_proj.",
    ),
    BlindCase(
        CHECK,
        "detached_memory",
        LSTMDetachedMemory,
        "mistake",
        "I detached c before the tanh of the output, so no gradient flows through it.",
    ),
    BlindCase(
        CHECK,
        "in_place_memory",
        LSTMInPlaceMemory,
        "mistake",
        "I updated c in place with mul_ and add_, which changes the caller's state.",
    ),
    BlindCase(
        CHECK,
        "sliced_functional",
        LSTMSliced,
        "correct",
        "Blocks cut by slicing with H, F.linear and an explicit matmul; state optional.",
    ),
    BlindCase(
        CHECK,
        "view_unbind_addcmul",
        LSTMViewUnbind,
        "correct",
        "z viewed as (B, 4, H) and unbound; the memory update with torch.addcmul.",
    ),
    BlindCase(
        CHECK,
        "one_sigmoid",
        LSTMOneSigmoid,
        "correct",
        "One sigmoid for all four blocks, the candidate as 2 sigmoid(2g) - 1.",
    ),
]
