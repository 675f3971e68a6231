"""Blind cases for check_lstm_cell (chapter 3), written from the chapter's text only."""

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

    def _z(self, x: Tensor, h: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(h)


# ---- mistakes -------------------------------------------------------------------------------


class ForgetInputSwapped(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        f, i, g, o = self._z(x, h).chunk(4, dim=-1)  # I wrote the gates as f, i, g, o
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class SigmoidCandidate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = torch.sigmoid(self._z(x, h)).chunk(4, dim=-1)  # one sigmoid for all four
        c = f * c + i * g
        return o * torch.tanh(c), c


class NoForgetGate(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self._z(x, h).chunk(4, dim=-1)
        c = c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class NoTanhOnMemory(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self._z(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * c, c


class IfogOrder(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, o, g = self._z(x, h).chunk(4, dim=-1)  # the i, f, o, g order of an old tutorial
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class OutputFromOldMemory(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c_prev = state
        i, f, g, o = self._z(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c_prev), c


class ReturnsCellFirst(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self._z(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return c, h


class InputGateOnMemory(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self._z(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.tanh(g)  # forgot to gate the candidate with i
        return torch.sigmoid(o) * torch.tanh(c), c


# ---- reader's slip ------------------------------------------------------------------------------


class SeparateStateArguments(_Base):
    def forward(self, x: Tensor, h: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
        i, f, g, o = self._z(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


# ---- correct variants ---------------------------------------------------------------------------


class SplitAndSlices(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h_prev, c_prev = state
        H = self.hidden_size
        z = self._z(x, h_prev)
        i = torch.sigmoid(z[:, 0:H])
        f = torch.sigmoid(z[:, H : 2 * H])
        g = torch.tanh(z[:, 2 * H : 3 * H])
        o = torch.sigmoid(z[:, 3 * H :])
        c = f * c_prev + i * g
        h = o * torch.tanh(c)
        return h, c


class ConcatenatedWeights(_Base):
    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h_prev, c_prev = state
        W = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)  # (4H, D_in + H)
        z = torch.cat([x, h_prev], dim=1) @ W.T + self.in_proj.bias
        gates = z.view(x.shape[0], 4, self.hidden_size)
        i, f, o = gates[:, 0].sigmoid(), gates[:, 1].sigmoid(), gates[:, 3].sigmoid()
        g = gates[:, 2].tanh()
        c = torch.addcmul(f * c_prev, i, g)
        return o * c.tanh(), c


class StackedGateActivations(_Base):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h_prev, c_prev = state
        z = self._z(x, h_prev).unflatten(-1, (4, self.hidden_size))  # (B, 4, H)
        act = torch.where(
            torch.tensor([False, False, True, False]).view(1, 4, 1), z.tanh(), z.sigmoid()
        )
        i, f, g, o = act.unbind(dim=1)
        c = f * c_prev + i * g
        return o * torch.tanh(c), c


CASES = [
    BlindCase(
        CHECK,
        "forget_input_swapped",
        ForgetInputSwapped,
        "mistake",
        "I unpacked the four blocks as f, i, g, o instead of i, f, g, o",
    ),
    BlindCase(
        CHECK,
        "sigmoid_candidate",
        SigmoidCandidate,
        "mistake",
        "I applied one sigmoid to all four blocks, so the candidate g is a sigmoid instead of tanh",
    ),
    BlindCase(
        CHECK,
        "no_forget_gate",
        NoForgetGate,
        "mistake",
        "I kept the old memory as it is, c + i * g, without multiplying it by the forget gate",
    ),
    BlindCase(
        CHECK,
        "no_tanh_on_memory",
        NoTanhOnMemory,
        "mistake",
        "I computed h as o * c, forgetting the tanh of the new memory",
    ),
    BlindCase(
        CHECK,
        "ifog_order",
        IfogOrder,
        "mistake",
        "I unpacked the blocks in the order i, f, o, g from another tutorial instead of PyTorch's i, f, g, o",
    ),
    BlindCase(
        CHECK,
        "output_from_old_memory",
        OutputFromOldMemory,
        "mistake",
        "I computed h from tanh of the previous memory c_prev instead of the new one",
    ),
    BlindCase(
        CHECK,
        "returns_cell_first",
        ReturnsCellFirst,
        "mistake",
        "I returned the pair as (c, h) instead of (h, c)",
    ),
    BlindCase(
        CHECK,
        "input_gate_on_memory",
        InputGateOnMemory,
        "mistake",
        "I wrote the candidate into the memory without the input gate, c = f * c + tanh(g)",
    ),
    BlindCase(
        CHECK,
        "separate_state_arguments",
        SeparateStateArguments,
        "mistake",
        "my forward takes h and c as two separate arguments instead of one state tuple",
    ),
    BlindCase(
        CHECK,
        "split_and_slices",
        SplitAndSlices,
        "correct",
        "I cut the four blocks with explicit slices of width H",
    ),
    BlindCase(
        CHECK,
        "concatenated_weights",
        ConcatenatedWeights,
        "correct",
        "I concatenated [x, h] and the two weight matrices into one product, used addcmul, and allowed state=None",
    ),
    BlindCase(
        CHECK,
        "stacked_gate_activations",
        StackedGateActivations,
        "correct",
        "I reshaped the blocks to (B, 4, H) and chose tanh or sigmoid per block with torch.where",
    ),
]
