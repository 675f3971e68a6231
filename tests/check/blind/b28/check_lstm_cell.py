"""Blind set B28, check_lstm_cell (chapter 3): one LSTM step as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_lstm_cell"


class _Layers(nn.Module):
    """in_proj (D_in -> 4H, with the bias) and state_proj (H -> 4H, no bias)."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)

    def blocks(self, x: Tensor, h: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        return (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)


# ---------------------------------------------------------------- mistakes


class LSTMGateOrderIFOG(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, o, g = self.blocks(x, h)  # input, forget, output, then the candidate
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOutputFromOldCell(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c_prev = state
        i, f, g, o = self.blocks(x, h)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c_prev)  # read the diary as it was
        return h, c


class LSTMReturnsCellFirst(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.blocks(x, h)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return c, h  # the diary first, it is the important one


class LSTMStateIsCellFirst(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        c, h = state  # (c, h), the diary first
        i, f, g, o = self.blocks(x, h)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMForgetComplement(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.blocks(x, h)
        f = torch.sigmoid(f)
        c = (1 - f) * c + torch.sigmoid(i) * torch.tanh(g)  # the forget gate says what to erase
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOutputGateOnCellToo(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.blocks(x, h)
        o = torch.sigmoid(o)
        c = o * (torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g))
        return torch.tanh(c), c


class LSTMCandidateNotGated(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.blocks(x, h)
        c = torch.sigmoid(f) * c + torch.tanh(g)  # f_2 is the new information
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMSplitWrongAxis(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)  # (B, 4H)
        i, f, g, o = z.view(-1, self.hidden_size, 4).unbind(-1)  # four gates per unit
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMStateProjWithBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size)  # like nn.LSTM's b_hh

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMForgetBiasInForward(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.blocks(x, h)
        f = f + 1.0  # forget-gate bias 1, which kept the symbol for 40 steps
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMCellInPlace(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.blocks(x, h)
        c.mul_(torch.sigmoid(f)).add_(torch.sigmoid(i) * torch.tanh(g))  # update the diary
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMReturnsOnlyH(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> Tensor:
        h, c = state
        i, f, g, o = self.blocks(x, h)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c)  # h is the output of the cell


# ---------------------------------------------------------------- correct variants


class LSTMBlockByBlock(_Layers):
    """Each gate from its own slice of the stacked weights, as in the chapter's formula check."""

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h_prev, c_prev = state
        H = self.hidden_size
        W_in, b, W_h = self.in_proj.weight, self.in_proj.bias, self.state_proj.weight

        def pre(k: int) -> Tensor:
            s = slice(k * H, (k + 1) * H)
            return x @ W_in[s].T + h_prev @ W_h[s].T + b[s]

        i, f, g, o = torch.sigmoid(pre(0)), torch.sigmoid(pre(1)), torch.tanh(pre(2)), pre(3)
        c = f * c_prev + i * g
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOptionalState(nn.Module):
    """state may be None (zeros); sigmoid on three blocks at once; bias argument with default."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size, bias=bias)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)

    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h, c = state
        H = self.hidden_size
        z = self.in_proj(x) + self.state_proj(h)
        sig = torch.sigmoid(torch.cat([z[:, : 2 * H], z[:, 3 * H :]], dim=-1))  # i, f, o
        i, f, o = sig.split(H, dim=-1)
        g = torch.tanh(z[:, 2 * H : 3 * H])
        c_new = torch.addcmul(f * c, i, g)
        return o * c_new.tanh(), c_new


class LSTMFunctionalLinear(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = F.linear(x, self.in_proj.weight, self.in_proj.bias) + F.linear(
            h, self.state_proj.weight
        )
        i, f, g, o = z.unflatten(-1, (4, self.hidden_size)).unbind(-2)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        h = o.sigmoid() * c.tanh()
        return h, c


class LSTMViaTorchCell(_Layers):
    """Compute the step with torch's LSTM cell function on my weights (same i, f, g, o order)."""

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        zero_bias = torch.zeros_like(self.in_proj.bias)
        h_new, c_new = torch.lstm_cell(
            x,
            (h, c),
            self.in_proj.weight,
            self.state_proj.weight,
            self.in_proj.bias,
            zero_bias,
        )
        return h_new, c_new


CASES = [
    BlindCase(
        CHECK,
        "gate_order_ifog",
        LSTMGateOrderIFOG,
        "mistake",
        "I unpacked the four blocks as i, f, o, g, with the candidate last.",
    ),
    BlindCase(
        CHECK,
        "output_reads_old_cell",
        LSTMOutputFromOldCell,
        "mistake",
        "I computed h from tanh(c_{t-1}), the diary before today's update.",
    ),
    BlindCase(
        CHECK,
        "returns_c_then_h",
        LSTMReturnsCellFirst,
        "mistake",
        "I return (c, h) instead of (h, c).",
    ),
    BlindCase(
        CHECK,
        "state_unpacked_c_h",
        LSTMStateIsCellFirst,
        "mistake",
        "I unpacked the state as c, h = state, the diary first.",
    ),
    BlindCase(
        CHECK,
        "forget_gate_complement",
        LSTMForgetComplement,
        "mistake",
        "I read the forget gate as 'how much to erase' and multiplied c_{t-1} by 1 - f.",
    ),
    BlindCase(
        CHECK,
        "output_gate_on_cell",
        LSTMOutputGateOnCellToo,
        "mistake",
        "I applied the output gate to the new diary itself and returned tanh of it as h.",
    ),
    BlindCase(
        CHECK,
        "candidate_not_gated",
        LSTMCandidateNotGated,
        "mistake",
        "I added the candidate tanh(g) to the diary without multiplying it by the input gate.",
    ),
    BlindCase(
        CHECK,
        "split_per_unit",
        LSTMSplitWrongAxis,
        "mistake",
        "I split the 4H pre-activations with view(B, H, 4), so the gates are interleaved "
        "instead of four blocks.",
    ),
    BlindCase(
        CHECK,
        "state_proj_with_bias",
        LSTMStateProjWithBias,
        "mistake",
        "I gave state_proj a bias too, as nn.LSTM has b_hh.",
    ),
    BlindCase(
        CHECK,
        "forget_bias_in_forward",
        LSTMForgetBiasInForward,
        "mistake",
        "I added 1 to the forget-gate pre-activation in forward, for the forget-gate bias 1.",
    ),
    BlindCase(
        CHECK,
        "cell_updated_in_place",
        LSTMCellInPlace,
        "mistake",
        "I updated the diary in place with c.mul_(f).add_(i * g), which overwrites the caller's c.",
    ),
    BlindCase(
        CHECK,
        "returns_only_h",
        LSTMReturnsOnlyH,
        "mistake",
        "I return only h, the output, not the pair (h, c).",
    ),
    BlindCase(
        CHECK,
        "block_by_block",
        LSTMBlockByBlock,
        "correct",
        "Each gate from its own slice of the stacked weights and bias.",
    ),
    BlindCase(
        CHECK,
        "optional_state_addcmul",
        LSTMOptionalState,
        "correct",
        "state defaults to None (zeros); one sigmoid over i, f, o together; torch.addcmul for "
        "the diary; a bias argument with a default.",
    ),
    BlindCase(
        CHECK,
        "functional_unflatten",
        LSTMFunctionalLinear,
        "correct",
        "F.linear on the layers' weights and unflatten(-1, (4, H)) to get the blocks.",
    ),
    BlindCase(
        CHECK,
        "torch_lstm_cell_on_my_weights",
        LSTMViaTorchCell,
        "correct",
        "torch.lstm_cell called with my two weight matrices, my bias and a zero second bias.",
    ),
]
