"""Blind set B18, check_lstm_cell (chapter 3): one LSTM step as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_lstm_cell"


class _Layers(nn.Module):
    """The two stacked layers of the skeleton, shared by the mistakes that are in ``forward``."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class LSTMGatesIFSwapped(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        f, i, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)  # forget first
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMSigmoidCandidate(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        gates = torch.sigmoid(self.in_proj(x) + self.state_proj(h))  # all four through sigmoid
        i, f, g, o = gates.chunk(4, dim=-1)
        c = f * c + i * g
        return o * torch.tanh(c), c


class LSTMNoForgetGate(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = c + torch.sigmoid(i) * torch.tanh(g)  # keep the whole diary, add what is new
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMNoTanhOnMemory(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * c  # the output gate shows the diary as it is
        return h, c


class LSTMOrderIFOG(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)
        i, f, o, g = z.chunk(4, dim=-1)  # the three sigmoid gates, then the candidate
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOutputFromOldMemory(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h_prev, c_prev = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h_prev)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c_prev)
        return h, c


class LSTMReturnsCH(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return c, h  # the memory first, then the output


class LSTMStateUnpackedCH(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        c, h = state  # (cell, hidden)
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return h, c


class LSTMGatesInterleaved(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)  # (B, 4H)
        i, f, g, o = z.view(z.shape[0], self.hidden_size, 4).unbind(-1)  # four gates per unit
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMUpdatesMemoryInPlace(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c *= torch.sigmoid(f)  # erase ...
        c += torch.sigmoid(i) * torch.tanh(g)  # ... then write
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMForgetBiasInForward(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        f = torch.sigmoid(f + 1.0)  # forget bias 1, so the diary is kept at the start
        c = f * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


# ---------------------------------------------------------------- correct variants


class LSTMSlices(nn.Module):
    """Explicit slices of the pre-activations; the state may be None (zeros)."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size, bias=True)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)

    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        H = self.hidden_size
        if state is None:
            zeros = x.new_zeros(x.shape[0], H)
            state = (zeros, zeros)
        h_prev, c_prev = state
        z = self.in_proj(x) + self.state_proj(h_prev)
        i = torch.sigmoid(z[:, 0:H])
        f = torch.sigmoid(z[:, H : 2 * H])
        g = torch.tanh(z[:, 2 * H : 3 * H])
        o = torch.sigmoid(z[:, 3 * H : 4 * H])
        c = f * c_prev + i * g
        h = o * torch.tanh(c)
        return h, c


class LSTMUnflattenAddcmul(_Layers):
    """The gates from an unflatten to (B, 4, H); addcmul for the diary."""

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h_prev, c_prev = state
        z = (self.in_proj(x) + self.state_proj(h_prev)).unflatten(-1, (4, self.hidden_size))
        i, f, g, o = z.unbind(dim=-2)
        c = torch.addcmul(f.sigmoid() * c_prev, i.sigmoid(), g.tanh())
        return o.sigmoid() * c.tanh(), c


class LSTMSigmoidAllThenCandidate(_Layers):
    """One sigmoid over all four blocks, the candidate taken again through tanh; gate helper."""

    def gates(self, x: Tensor, h: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        z = self.in_proj(x) + self.state_proj(h)
        s = torch.sigmoid(z)
        H = self.hidden_size
        return s[..., :H], s[..., H : 2 * H], torch.tanh(z[..., 2 * H : 3 * H]), s[..., 3 * H :]

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        i, f, g, o = self.gates(x, state[0])
        c = f * state[1] + i * g
        return o * torch.tanh(c), c


CASES = [
    BlindCase(
        CHECK,
        "input_forget_swapped",
        LSTMGatesIFSwapped,
        "mistake",
        "I unpacked the blocks as f, i, g, o: forget gate first, then the input gate.",
    ),
    BlindCase(
        CHECK,
        "sigmoid_candidate",
        LSTMSigmoidCandidate,
        "mistake",
        "I put all four blocks through one sigmoid, the candidate too, instead of tanh for g.",
    ),
    BlindCase(
        CHECK,
        "no_forget_gate",
        LSTMNoForgetGate,
        "mistake",
        "I wrote c = c_prev + i * g (the notes' 'add'), leaving the forget gate out.",
    ),
    BlindCase(
        CHECK,
        "no_tanh_on_memory",
        LSTMNoTanhOnMemory,
        "mistake",
        "I returned h = o * c, without the tanh of the new memory.",
    ),
    BlindCase(
        CHECK,
        "order_i_f_o_g",
        LSTMOrderIFOG,
        "mistake",
        "I took the blocks in the order i, f, o, g (the three gates first, then the candidate).",
    ),
    BlindCase(
        CHECK,
        "output_from_old_memory",
        LSTMOutputFromOldMemory,
        "mistake",
        "I computed h from tanh(c_prev), the old diary, instead of the new one.",
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
        "state_unpacked_c_h",
        LSTMStateUnpackedCH,
        "mistake",
        "I unpacked the incoming state as c, h = state, so the two are swapped on the way in.",
    ),
    BlindCase(
        CHECK,
        "gates_interleaved",
        LSTMGatesInterleaved,
        "mistake",
        "I split the 4H pre-activations with view(B, H, 4), which interleaves the gates "
        "instead of taking four blocks.",
    ),
    BlindCase(
        CHECK,
        "memory_updated_in_place",
        LSTMUpdatesMemoryInPlace,
        "mistake",
        "I updated c with *= and += in place, which changes (or fails on) the caller's c_prev.",
    ),
    BlindCase(
        CHECK,
        "forget_bias_in_forward",
        LSTMForgetBiasInForward,
        "mistake",
        "I added 1 to the forget gate's pre-activation in forward, to keep the diary early on.",
    ),
    BlindCase(
        CHECK,
        "explicit_slices",
        LSTMSlices,
        "correct",
        "Four explicit slices of z; the state may be None (zeros).",
    ),
    BlindCase(
        CHECK,
        "unflatten_addcmul",
        LSTMUnflattenAddcmul,
        "correct",
        "unflatten to (B, 4, H) and unbind; the diary with torch.addcmul.",
    ),
    BlindCase(
        CHECK,
        "sigmoid_all_then_tanh_g",
        LSTMSigmoidAllThenCandidate,
        "correct",
        "A sigmoid over all of z, the candidate recomputed as tanh of its block; an extra "
        "gates method.",
    ),
]
