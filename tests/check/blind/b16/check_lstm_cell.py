"""Blind set B16, check_lstm_cell (chapter 3): one LSTM step as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_lstm_cell"


class _Layers(nn.Module):
    """The two layers under the book's names; the subclasses write their own forward."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class LSTMGatesIFOG(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)
        i, f, o, g = z.chunk(4, dim=-1)  # input, forget, output, candidate
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMChunkDefaultDim(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)
        i, f, g, o = z.chunk(4)  # four blocks
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMViewInterleaved(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)  # (B, 4H)
        i, f, g, o = z.view(-1, self.hidden_size, 4).unbind(-1)  # (B, H, 4) -> four (B, H)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMGatesSwapped(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(i) * c + torch.sigmoid(f) * torch.tanh(g)  # keep with i, write with f
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMSigmoidCandidate(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = torch.sigmoid(self.in_proj(x) + self.state_proj(h))  # every block through sigmoid
        i, f, g, o = z.chunk(4, dim=-1)
        c = f * c + i * g
        return o * torch.tanh(c), c


class LSTMNoTanhOnMemory(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * c, c  # the output gate reads the diary as it is


class LSTMOutputFromOldMemory(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c_prev = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c_prev)  # o_t * tanh(c_{t-1})
        return h, c


class LSTMNoInputGate(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.tanh(g)  # erase, then write the candidate
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMForgetBiasInForward(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        f = torch.sigmoid(f + 1.0)  # forget bias 1, as section 3.5 recommends
        c = f * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMReturnsCH(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return c, h  # the memory first, then the output


class LSTMDetachedH(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h.detach())  # gradients go through c only
        i, f, g, o = z.chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


# ---------------------------------------------------------------- correct variants


class LSTMSlices(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h_prev, c_prev = state
        H = self.hidden_size
        z = self.in_proj(x) + self.state_proj(h_prev)
        i = torch.sigmoid(z[:, 0:H])
        f = torch.sigmoid(z[:, H : 2 * H])
        g = torch.tanh(z[:, 2 * H : 3 * H])
        o = torch.sigmoid(z[:, 3 * H : 4 * H])
        c = f * c_prev + i * g
        h = o * torch.tanh(c)
        return h, c


class LSTMViewBlocks(_Layers):
    """The blocks through view(B, 4, H); a None state means zeros."""

    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h, c = state
        z = (self.in_proj(x) + self.state_proj(h)).view(x.shape[0], 4, self.hidden_size)
        gates = torch.sigmoid(z)  # i, f, o are read from here
        i, f, o = gates[:, 0], gates[:, 1], gates[:, 3]
        g = torch.tanh(z[:, 2])
        c_new = torch.addcmul(f * c, i, g)
        return o * c_new.tanh(), c_new


class LSTMConcatWithGates(nn.Module):
    """One product on [x; h]; an extra method returns the gates too."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size, bias=bias)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)

    def gates(self, x: Tensor, h: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        W = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)  # (4H, D_in + H)
        z = F.linear(torch.cat([x, h], dim=-1), W, self.in_proj.bias)
        i, f, g, o = torch.split(z, self.hidden_size, dim=-1)
        return i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.gates(x, h)
        c = f * c + i * g
        return o * torch.tanh(c), c


CASES = [
    BlindCase(
        CHECK,
        "block_order_ifog",
        LSTMGatesIFOG,
        "mistake",
        "I read the four blocks in the order i, f, o, g (as in the course notes I learned "
        "from), not PyTorch's i, f, g, o.",
    ),
    BlindCase(
        CHECK,
        "chunk_without_dim",
        LSTMChunkDefaultDim,
        "mistake",
        "I wrote z.chunk(4) without dim=-1, so it splits the batch instead of the 4H features.",
    ),
    BlindCase(
        CHECK,
        "view_b_h_4",
        LSTMViewInterleaved,
        "mistake",
        "I split z with view(B, H, 4).unbind(-1), which takes every fourth feature instead of "
        "four consecutive blocks.",
    ),
    BlindCase(
        CHECK,
        "input_forget_swapped",
        LSTMGatesSwapped,
        "mistake",
        "I multiplied the old memory by the input gate and the candidate by the forget gate.",
    ),
    BlindCase(
        CHECK,
        "sigmoid_on_all_blocks",
        LSTMSigmoidCandidate,
        "mistake",
        "I applied the sigmoid to all 4H pre-activations at once, the candidate included.",
    ),
    BlindCase(
        CHECK,
        "no_tanh_on_new_memory",
        LSTMNoTanhOnMemory,
        "mistake",
        "I wrote h = o * c, without the tanh of the new memory.",
    ),
    BlindCase(
        CHECK,
        "output_reads_old_memory",
        LSTMOutputFromOldMemory,
        "mistake",
        "I computed h from tanh(c_prev), the memory before this step's update.",
    ),
    BlindCase(
        CHECK,
        "input_gate_left_out",
        LSTMNoInputGate,
        "mistake",
        "I added the candidate to the memory without the input gate: c = f * c + tanh(g).",
    ),
    BlindCase(
        CHECK,
        "forget_bias_in_forward",
        LSTMForgetBiasInForward,
        "mistake",
        "I added the forget bias of 1 inside forward (sigmoid(f + 1)) instead of initializing "
        "the bias with it.",
    ),
    BlindCase(
        CHECK,
        "returns_c_then_h",
        LSTMReturnsCH,
        "mistake",
        "I returned (c, h) instead of (h, c).",
    ),
    BlindCase(
        CHECK,
        "previous_h_detached",
        LSTMDetachedH,
        "mistake",
        "I detached h_prev before state_proj, thinking the memory c carries the gradient.",
    ),
    BlindCase(
        CHECK,
        "explicit_slices",
        LSTMSlices,
        "correct",
        "Slices z[:, k*H:(k+1)*H] for the four blocks instead of chunk.",
    ),
    BlindCase(
        CHECK,
        "view_b_4_h_and_addcmul",
        LSTMViewBlocks,
        "correct",
        "view(B, 4, H), one sigmoid over all blocks with the candidate taken from the raw "
        "block, torch.addcmul for the memory; the state may be None.",
    ),
    BlindCase(
        CHECK,
        "concatenated_product_with_gates_method",
        LSTMConcatWithGates,
        "correct",
        "One F.linear on [x; h] with the concatenated weights, torch.split, a gates() helper "
        "and a bias argument defaulting to True.",
    ),
]
