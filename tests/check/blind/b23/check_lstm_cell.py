"""Blind set B23, check_lstm_cell (chapter 3): one LSTM step (gates i, f, g, o) as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_lstm_cell"


class _Cell(nn.Module):
    """The two layers as the chapter names them; the subclasses write ``forward``."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)

    def blocks(self, x: Tensor, h: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        return (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)


# ---------------------------------------------------------------- mistakes


class LSTMInputForgetSwapped(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        f, i, g, o = self.blocks(x, h)  # forget first: erase, then write
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMSigmoidCandidate(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (torch.sigmoid(z) for z in self.blocks(x, h))  # all four through sigma
        c = f * c + i * g
        return o * torch.tanh(c), c


class LSTMNoForget(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.blocks(x, h)
        c = c + torch.sigmoid(i) * torch.tanh(g)  # the diary keeps everything and adds
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMNoTanhOnC(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.blocks(x, h)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * c, c


class LSTMOutputFromOldC(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c_prev = state
        i, f, g, o = self.blocks(x, h)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c_prev), c


class LSTMRawCandidate(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.blocks(x, h)
        i, f, o = torch.sigmoid(i), torch.sigmoid(f), torch.sigmoid(o)  # the three gates
        c = f * c + i * g
        return o * torch.tanh(c), c


class LSTMGatesIFOG(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, o, g = self.blocks(x, h)  # the three gates, then the candidate
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMReturnsCH(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.blocks(x, h)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return c, h  # the diary first


class LSTMCoupledGates(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.blocks(x, h)
        f = torch.sigmoid(f)
        c = f * c + (1 - f) * torch.tanh(g)  # what is not kept is written
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMStateBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size)  # b_ih and b_hh, as nn.LSTM

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMInterleavedSplit(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self.in_proj(x) + self.state_proj(h)  # (B, 4H)
        i, f, g, o = z.view(z.shape[0], -1, 4).unbind(-1)  # (B, H, 4) -> four (B, H)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMTanhAfterGate(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self.blocks(x, h)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.tanh(torch.sigmoid(o) * c), c


class LSTMStateUnpackedCH(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        c, h = state  # the long memory and the short one
        i, f, g, o = self.blocks(x, h)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


# ---------------------------------------------------------------- correct variants


class LSTMSliceAddcmul(_Cell):
    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        H = self.state_proj.in_features
        if state is None:
            zeros = x.new_zeros(x.shape[0], H)
            state = (zeros, zeros)
        h, c = state
        z = F.linear(x, self.in_proj.weight, self.in_proj.bias) + h @ self.state_proj.weight.T
        i, f = torch.sigmoid(z[:, :H]), torch.sigmoid(z[:, H : 2 * H])
        g, o = torch.tanh(z[:, 2 * H : 3 * H]), torch.sigmoid(z[:, 3 * H :])
        c_new = torch.addcmul(f * c, i, g)
        return o * c_new.tanh(), c_new


class LSTMTorchKernel(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = torch.lstm_cell(
            x, state, self.in_proj.weight, self.state_proj.weight, self.in_proj.bias
        )  # PyTorch's fused step, same i, f, g, o order
        return h, c


class LSTMConcatSplit(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        W = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)  # (4H, D_in + H)
        z = torch.cat([x, h], dim=1) @ W.T + self.in_proj.bias
        gates = z.split(self.state_proj.in_features, dim=1)
        i, f, o = (torch.sigmoid(gates[k]) for k in (0, 1, 3))
        g = torch.tanh(gates[2])
        c = f * c + i * g
        h = o * torch.tanh(c)
        return h, c


class LSTMStackedGates(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h_prev, c_prev = state
        z = self.in_proj(x) + self.state_proj(h_prev)
        z = z.view(z.shape[0], 4, -1)  # (B, 4, H): one row per block
        i, f, g, o = z.sigmoid()[:, 0], z.sigmoid()[:, 1], z[:, 2].tanh(), z.sigmoid()[:, 3]
        c = f * c_prev + i * g
        return o * torch.tanh(c), c


CASES = [
    BlindCase(
        CHECK,
        "input_forget_swapped",
        LSTMInputForgetSwapped,
        "mistake",
        "I unpacked the blocks as f, i, g, o (forget first)",
    ),
    BlindCase(
        CHECK,
        "sigmoid_candidate",
        LSTMSigmoidCandidate,
        "mistake",
        "I put all four blocks through a sigmoid, the candidate too",
    ),
    BlindCase(
        CHECK,
        "no_forget",
        LSTMNoForget,
        "mistake",
        "I added the new writing to c without multiplying c by the forget gate",
    ),
    BlindCase(
        CHECK,
        "no_tanh_on_c",
        LSTMNoTanhOnC,
        "mistake",
        "I wrote h = o * c, without the tanh of the new memory",
    ),
    BlindCase(
        CHECK,
        "output_from_old_c",
        LSTMOutputFromOldC,
        "mistake",
        "I made h from the old memory c_{t-1} instead of the new c_t",
    ),
    BlindCase(
        CHECK,
        "raw_candidate",
        LSTMRawCandidate,
        "mistake",
        "I applied the sigmoids to the gates and forgot the tanh on the candidate",
    ),
    BlindCase(
        CHECK,
        "gates_ifog",
        LSTMGatesIFOG,
        "mistake",
        "I took the blocks in the order i, f, o, g (gates first, candidate last)",
    ),
    BlindCase(
        CHECK, "returns_c_h", LSTMReturnsCH, "mistake", "I returned (c, h) instead of (h, c)"
    ),
    BlindCase(
        CHECK,
        "coupled_gates",
        LSTMCoupledGates,
        "mistake",
        "I wrote c = f * c + (1 - f) * g, using 1 - f as the input gate",
    ),
    BlindCase(
        CHECK,
        "state_bias",
        LSTMStateBias,
        "mistake",
        "I gave state_proj a bias too, like nn.LSTM's b_hh",
    ),
    BlindCase(
        CHECK,
        "interleaved_split",
        LSTMInterleavedSplit,
        "mistake",
        "I split z with view(B, H, 4).unbind(-1) instead of four consecutive blocks",
    ),
    BlindCase(
        CHECK,
        "tanh_after_gate",
        LSTMTanhAfterGate,
        "mistake",
        "I wrote h = tanh(o * c): the gate inside the tanh",
    ),
    BlindCase(
        CHECK,
        "state_unpacked_c_h",
        LSTMStateUnpackedCH,
        "mistake",
        "I unpacked the incoming state as (c, h)",
    ),
    BlindCase(
        CHECK,
        "slice_addcmul",
        LSTMSliceAddcmul,
        "correct",
        "slices of z by H, torch.addcmul for c; state optional (zeros)",
    ),
    BlindCase(
        CHECK,
        "torch_lstm_cell",
        LSTMTorchKernel,
        "correct",
        "torch.lstm_cell with my two weight matrices and the one bias",
    ),
    BlindCase(
        CHECK,
        "concat_split",
        LSTMConcatSplit,
        "correct",
        "one product of [x; h] with the concatenated weights, split by H",
    ),
    BlindCase(
        CHECK,
        "stacked_gates",
        LSTMStackedGates,
        "correct",
        "view(B, 4, H) and the gates read from its rows",
    ),
]
