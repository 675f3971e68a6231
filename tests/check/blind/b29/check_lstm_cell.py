"""Blind set B29, check_lstm_cell (chapter 3): one LSTM step, gates in PyTorch's order i, f, g, o."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_lstm_cell"


class _Layers(nn.Module):
    """``in_proj`` (with the bias) and ``state_proj`` (no bias), four blocks each."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class LSTMForgetFirst(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        f, i, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)  # f_t comes first
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOrderIFOG(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, o, g = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)  # the three sigmoids
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMBlocksInterleaved(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)  # (B, 4H)
        i, f, g, o = z.view(z.shape[0], self.hidden_size, 4).unbind(dim=-1)  # 4 x (B, H)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMSigmoidCandidate(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = torch.sigmoid(self.in_proj(x) + self.state_proj(h))  # every gate through sigmoid
        i, f, g, o = z.chunk(4, dim=-1)
        c = f * c + i * g
        return o * torch.tanh(c), c


class LSTMNoForget(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = c + torch.sigmoid(i) * torch.tanh(g)  # the diary keeps everything
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMNoInputGate(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.tanh(g)  # f1 * c + candidate
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOutputOfOldDiary(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c_prev = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c_prev), c


class LSTMNoTanhOnDiary(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * c, c


class LSTMTanhOutputGate(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.tanh(o) * torch.tanh(c), c


class LSTMReturnsCH(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return c, torch.sigmoid(o) * torch.tanh(c)  # (c, h): the diary first


class LSTMStateDetached(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        h = h.detach()  # truncated backprop: do not go back through the old state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMStateProjBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size)  # two biases, like PyTorch

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMThreeArguments(_Layers):
    def forward(self, x: Tensor, h: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


# ---------------------------------------------------------------- correct variants


class LSTMBlockSlices(_Layers):
    """Each gate from its own slice of the weights, with F.linear."""

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        H = self.hidden_size
        W_in, b, W_h = self.in_proj.weight, self.in_proj.bias, self.state_proj.weight

        def pre(k: int) -> Tensor:
            rows = slice(k * H, (k + 1) * H)
            return F.linear(x, W_in[rows], b[rows]) + F.linear(h, W_h[rows])

        i, f, g, o = torch.sigmoid(pre(0)), torch.sigmoid(pre(1)), torch.tanh(pre(2)), pre(3)
        c_new = f * c + i * g
        return torch.sigmoid(o) * torch.tanh(c_new), c_new


class LSTMGatesView(_Layers):
    """(B, 4H) viewed as (B, 4, H): block k is row k; the optional state defaults to zeros."""

    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h, c = state
        gates = (self.in_proj(x) + self.state_proj(h)).view(-1, 4, self.hidden_size)
        ifo = torch.sigmoid(gates[:, [0, 1, 3]])  # (B, 3, H)
        g = torch.tanh(gates[:, 2])
        c_new = ifo[:, 1] * c + ifo[:, 0] * g
        return ifo[:, 2] * torch.tanh(c_new), c_new


class LSTMSplitAddcmul(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h_prev, c_prev = state
        z = torch.addmm(self.in_proj.bias, x, self.in_proj.weight.T)
        z = z + h_prev @ self.state_proj.weight.T
        i, f, g, o = torch.split(z, self.hidden_size, dim=1)
        c = torch.addcmul(torch.sigmoid(f) * c_prev, torch.sigmoid(i), torch.tanh(g))
        h = torch.sigmoid(o).mul(c.tanh())
        return h, c


CASES = [
    BlindCase(
        CHECK,
        "forget_block_first",
        LSTMForgetFirst,
        "mistake",
        "I read the blocks as f, i, g, o, since the forget gate is step 1 in the notes.",
    ),
    BlindCase(
        CHECK,
        "order_i_f_o_g",
        LSTMOrderIFOG,
        "mistake",
        "I put the three sigmoid gates first and the candidate last: i, f, o, g.",
    ),
    BlindCase(
        CHECK,
        "blocks_interleaved",
        LSTMBlocksInterleaved,
        "mistake",
        "I split the 4H pre-activations with view(B, H, 4).unbind(-1), which takes every "
        "fourth entry instead of four contiguous blocks.",
    ),
    BlindCase(
        CHECK,
        "sigmoid_on_candidate",
        LSTMSigmoidCandidate,
        "mistake",
        "I put one sigmoid over all 4H entries, so the candidate g went through a sigmoid too.",
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
        "no_input_gate",
        LSTMNoInputGate,
        "mistake",
        "I added the candidate tanh(g) to the diary without multiplying by the input gate.",
    ),
    BlindCase(
        CHECK,
        "output_reads_old_diary",
        LSTMOutputOfOldDiary,
        "mistake",
        "My h is o * tanh(c_prev): the output reads yesterday's diary instead of the new one.",
    ),
    BlindCase(
        CHECK,
        "no_tanh_on_diary",
        LSTMNoTanhOnDiary,
        "mistake",
        "I wrote h = o * c, without the tanh of the new memory.",
    ),
    BlindCase(
        CHECK,
        "tanh_output_gate",
        LSTMTanhOutputGate,
        "mistake",
        "I squashed the output gate with tanh instead of a sigmoid.",
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
        "previous_h_detached",
        LSTMStateDetached,
        "mistake",
        "I detached the previous h inside the step, as for truncated backpropagation, so no "
        "gradient reaches it.",
    ),
    BlindCase(
        CHECK,
        "state_proj_with_bias",
        LSTMStateProjBias,
        "mistake",
        "I gave state_proj a bias too, as PyTorch has b_ih and b_hh, so the step adds a second "
        "bias.",
    ),
    BlindCase(
        CHECK,
        "forward_x_h_c",
        LSTMThreeArguments,
        "mistake",
        "My forward takes (x, h, c) as three arguments instead of x and the pair (h, c).",
    ),
    BlindCase(
        CHECK,
        "per_gate_slices",
        LSTMBlockSlices,
        "correct",
        "Each gate computed from its own rows of the two weights with F.linear.",
    ),
    BlindCase(
        CHECK,
        "gates_view_b_4_h",
        LSTMGatesView,
        "correct",
        "The pre-activations viewed as (B, 4, H) and indexed by block; state optional, zeros "
        "by default.",
    ),
    BlindCase(
        CHECK,
        "split_addcmul",
        LSTMSplitAddcmul,
        "correct",
        "addmm for the input part, torch.split into blocks of H, addcmul for the diary.",
    ),
]
