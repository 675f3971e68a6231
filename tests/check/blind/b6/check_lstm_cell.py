"""Blind set B6, check_lstm_cell (chapter 3): one LSTM step, gates and diary, as readers write."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_lstm_cell"


class _Base(nn.Module):
    """The two layers every variant below builds the same way."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class LSTMGatesIFOG(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)
        i, f, o, g = z.chunk(4, dim=-1)  # the "ifog" order of char-rnn
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMInputForgetSwapped(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
        c = i * c + f * g  # keep with i, write with f
        return o * torch.tanh(c), c


class LSTMSigmoidCandidate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = torch.sigmoid(self.in_proj(x) + self.state_proj(h))  # all four blocks are gates
        i, f, g, o = z.chunk(4, dim=-1)
        c = f * c + i * g
        return o * torch.tanh(c), c


class LSTMNoTanhOnMemory(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * c, c  # the diary is already squashed by the gates


class LSTMReturnsCH(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return c, h  # the diary first


class LSTMNoForgetGate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = c + torch.sigmoid(i) * torch.tanh(g)  # the diary is additive
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMGatesInterleaved(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)  # (B, 4H)
        i, f, g, o = z.view(z.shape[0], self.hidden_size, 4).unbind(-1)  # one column per gate
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOutputFromOldMemory(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c_prev = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        h = torch.sigmoid(o) * torch.tanh(c_prev)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        return h, c


class LSTMTwoBiases(_Base):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size)  # b_hh, as in nn.LSTMCell

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMInPlaceDiary(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c.mul_(torch.sigmoid(f)).add_(torch.sigmoid(i) * torch.tanh(g))  # update the diary in place
        return torch.sigmoid(o) * torch.tanh(c), c


# ---------------------------------------------------------------- correct variants


class LSTMSlices(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        H = self.hidden_size
        z = self.in_proj(x) + self.state_proj(h)
        gates = torch.sigmoid(z)
        i, f, o = gates[:, :H], gates[:, H : 2 * H], gates[:, 3 * H :]
        g = torch.tanh(z[:, 2 * H : 3 * H])
        c_new = f * c + i * g
        return o * torch.tanh(c_new), c_new


class LSTMOptionalStateAddcmul(_Base):
    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h, c = state
        i, f, g, o = torch.split(self.in_proj(x) + self.state_proj(h), self.hidden_size, dim=1)
        c_new = torch.addcmul(torch.sigmoid(f) * c, torch.sigmoid(i), torch.tanh(g))
        h_new = torch.sigmoid(o) * torch.tanh(c_new)
        return h_new, c_new


class LSTMViewGatesFirst(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)  # (B, 4H)
        z = z.view(z.shape[0], 4, self.hidden_size)  # (B, gate, H): blocks stay whole
        i, f, g, o = z.unbind(1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


CASES = [
    BlindCase(
        CHECK,
        "gate_order_ifog",
        LSTMGatesIFOG,
        "mistake",
        "I split the blocks in the order i, f, o, g (as in char-rnn) instead of PyTorch's "
        "i, f, g, o.",
    ),
    BlindCase(
        CHECK,
        "input_forget_swapped",
        LSTMInputForgetSwapped,
        "mistake",
        "In the diary I multiplied the old memory by the input gate and the candidate by the "
        "forget gate.",
    ),
    BlindCase(
        CHECK,
        "sigmoid_on_candidate",
        LSTMSigmoidCandidate,
        "mistake",
        "I applied the sigmoid to all four blocks, the candidate g included, instead of tanh on g.",
    ),
    BlindCase(
        CHECK,
        "no_tanh_on_memory",
        LSTMNoTanhOnMemory,
        "mistake",
        "I computed h = o * c without the tanh of the new memory.",
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
        "no_forget_gate",
        LSTMNoForgetGate,
        "mistake",
        "I left the forget gate out: c = c_prev + i * g.",
    ),
    BlindCase(
        CHECK,
        "gates_interleaved_view",
        LSTMGatesInterleaved,
        "mistake",
        "I reshaped z to (B, H, 4) and took the last axis apart, so each gate gets every "
        "fourth feature instead of one contiguous block.",
    ),
    BlindCase(
        CHECK,
        "output_from_old_memory",
        LSTMOutputFromOldMemory,
        "mistake",
        "I computed h from tanh of the previous memory c_prev, before updating the diary.",
    ),
    BlindCase(
        CHECK,
        "bias_on_state_proj",
        LSTMTwoBiases,
        "mistake",
        "I gave state_proj a bias as well, like nn.LSTMCell's b_hh, although it should have none.",
    ),
    BlindCase(
        CHECK,
        "in_place_diary",
        LSTMInPlaceDiary,
        "mistake",
        "I updated the memory in place with c.mul_(f).add_(i * g), overwriting the caller's c.",
    ),
    BlindCase(
        CHECK,
        "explicit_slices",
        LSTMSlices,
        "correct",
        "One sigmoid over all of z, then slices by H for i, f, o, and tanh of the third block.",
    ),
    BlindCase(
        CHECK,
        "optional_state_addcmul",
        LSTMOptionalStateAddcmul,
        "correct",
        "The state defaults to zeros; torch.split by hidden_size and addcmul for the diary.",
    ),
    BlindCase(
        CHECK,
        "view_gate_axis_first",
        LSTMViewGatesFirst,
        "correct",
        "I view z as (B, 4, H) and unbind the gate axis.",
    ),
]
