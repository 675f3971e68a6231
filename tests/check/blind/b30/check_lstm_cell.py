"""Blind set B30, check_lstm_cell (chapter 3): one LSTM step with the diary c_t, as readers write
it."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_lstm_cell"


class _Layers(nn.Module):
    """The two stacked layers under the book's names; the mistakes change forward only."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class LSTMInputForgetSwapped(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        f, i, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOrderIFOG(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, o, g = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)  # the paper's figure
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMSigmoidCandidate(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = torch.sigmoid(self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = f * c + i * g
        return o * torch.tanh(c), c


class LSTMNoForgetGate(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = c + torch.sigmoid(i) * torch.tanh(g)  # the diary only adds
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMNoTanhOnMemory(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * c, c


class LSTMOutputFromOldMemory(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c_prev = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c_prev), c


class LSTMForgetsHiddenInDiary(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * h + torch.sigmoid(i) * torch.tanh(g)  # h where c belongs
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMReturnsCFirst(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return c, torch.sigmoid(o) * torch.tanh(c)


class LSTMReturnsOnlyH(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> Tensor:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c)


class LSTMForgetBiasOne(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        f = torch.sigmoid(f + 1.0)  # forget bias 1, as the chapter recommends
        c = f * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMDetachedState(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        h = h.detach()  # truncated backprop: no gradient into the previous step
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMChunkOverBatch(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)  # (B, 4H)
        i, f, g, o = z.view(4, -1, self.hidden_size)  # 4 blocks of H
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMFourLayers(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.gates = nn.ModuleList(nn.Linear(input_size + hidden_size, hidden_size) for _ in "ifgo")

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        xh = torch.cat([x, h], dim=-1)
        i, f, g, o = (layer(xh) for layer in self.gates)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


# ---------------------------------------------------------------- correct variants


class LSTMViewUnbind(_Layers):
    """The four blocks as a (B, 4, H) view, unbound along the block axis."""

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h_prev, c_prev = state
        z = self.in_proj(x) + self.state_proj(h_prev)
        i, f, g, o = z.view(z.shape[0], 4, self.hidden_size).unbind(dim=1)
        c = torch.addcmul(torch.sigmoid(f) * c_prev, torch.sigmoid(i), torch.tanh(g))
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMTanhFromSigmoid(_Layers):
    """One sigmoid over all blocks; the candidate's tanh written as 2 sigmoid(2g) - 1."""

    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)
        H = self.hidden_size
        z = torch.cat([z[:, : 2 * H], 2 * z[:, 2 * H : 3 * H], z[:, 3 * H :]], dim=-1)
        i, f, g2, o = torch.sigmoid(z).split(H, dim=-1)
        c_new = f * c + i * (2 * g2 - 1)
        return o * torch.tanh(c_new), c_new


class LSTMSlices(_Layers):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        H = self.hidden_size
        z = torch.nn.functional.linear(x, self.in_proj.weight, self.in_proj.bias)
        z = z + h @ self.state_proj.weight.T
        gate = {name: z[:, k * H : (k + 1) * H] for k, name in enumerate("ifgo")}
        c_new = gate["f"].sigmoid() * c + gate["i"].sigmoid() * gate["g"].tanh()
        h_new = gate["o"].sigmoid() * c_new.tanh()
        return h_new, c_new


CASES = [
    BlindCase(
        CHECK,
        "input_forget_swapped",
        LSTMInputForgetSwapped,
        "mistake",
        "I unpacked the chunks as f, i, g, o: forget gate first.",
    ),
    BlindCase(
        CHECK,
        "order_i_f_o_g",
        LSTMOrderIFOG,
        "mistake",
        "I took the blocks in the order i, f, o, g, with the candidate last.",
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
        LSTMNoForgetGate,
        "mistake",
        "My diary only adds: c = c_prev + i * g, the forget gate is never used.",
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
        "output_from_old_memory",
        LSTMOutputFromOldMemory,
        "mistake",
        "My h uses tanh of the previous memory c_{t-1} instead of the new c_t.",
    ),
    BlindCase(
        CHECK,
        "hidden_in_the_diary",
        LSTMForgetsHiddenInDiary,
        "mistake",
        "I multiplied the forget gate with h_{t-1} instead of c_{t-1}.",
    ),
    BlindCase(
        CHECK,
        "returns_c_then_h",
        LSTMReturnsCFirst,
        "mistake",
        "I return (c, h) instead of (h, c).",
    ),
    BlindCase(
        CHECK,
        "returns_only_h",
        LSTMReturnsOnlyH,
        "mistake",
        "I return only the new h, not the pair (h, c).",
    ),
    BlindCase(
        CHECK,
        "forget_bias_in_forward",
        LSTMForgetBiasOne,
        "mistake",
        "I added 1 to the forget gate inside forward, for the forget-gate bias of 1 the "
        "chapter talks about.",
    ),
    BlindCase(
        CHECK,
        "previous_h_detached",
        LSTMDetachedState,
        "mistake",
        "I detached h_{t-1} (truncated backprop), so no gradient flows back to it.",
    ),
    BlindCase(
        CHECK,
        "blocks_split_over_batch",
        LSTMChunkOverBatch,
        "mistake",
        "I split z with view(4, -1, H), which cuts the batch rows into four instead of the "
        "features of each row.",
    ),
    BlindCase(
        CHECK,
        "four_separate_layers",
        LSTMFourLayers,
        "mistake",
        "I wrote one linear layer per gate on [x; h] instead of in_proj and state_proj.",
    ),
    BlindCase(
        CHECK,
        "view_unbind_addcmul",
        LSTMViewUnbind,
        "correct",
        "z viewed as (B, 4, H) and unbound; the diary with torch.addcmul.",
    ),
    BlindCase(
        CHECK,
        "tanh_as_sigmoid",
        LSTMTanhFromSigmoid,
        "correct",
        "One sigmoid for all blocks, with tanh(g) written as 2 sigmoid(2g) - 1; state may be None.",
    ),
    BlindCase(
        CHECK,
        "slices_by_name",
        LSTMSlices,
        "correct",
        "F.linear and h @ W^T by hand, the four gates as named slices of z.",
    ),
]
