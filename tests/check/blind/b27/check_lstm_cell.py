"""Blind set B27, check_lstm_cell (chapter 3): one LSTM step as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_lstm_cell"


class _Cell(nn.Module):
    """The two layers as the chapter names them; the mistakes below differ in forward."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)

    def _z(self, x: Tensor, h: Tensor) -> Tensor:
        return self.in_proj(x) + self.state_proj(h)  # (B, 4H)


# ---------------------------------------------------------------- mistakes


class LSTMGatesIFOG(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, o, g = self._z(x, h).chunk(4, dim=-1)  # input, forget, output, then the candidate
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMForgetBiasInForward(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self._z(x, h).chunk(4, dim=-1)
        f = torch.sigmoid(f + 1.0)  # forget-gate bias 1, as the chapter recommends
        c = f * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMOutputFromOldMemory(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c_prev = state
        i, f, g, o = self._z(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c_prev)  # show what the diary held
        return h, c


class LSTMInterleavedSplit(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = self._z(x, h)
        i, f, g, o = z.view(z.shape[0], self.hidden_size, 4).unbind(-1)  # four gates per unit
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMReturnsCellFirst(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self._z(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return c, h  # the diary, then what it shows


class LSTMCoupledGates(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self._z(x, h).chunk(4, dim=-1)
        i = torch.sigmoid(i)
        c = (1 - i) * c + i * torch.tanh(g)  # erase exactly what is written
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMSquashedMemory(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self._z(x, h).chunk(4, dim=-1)
        c = torch.tanh(torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g))  # keep c bounded
        return torch.sigmoid(o) * c, c


class LSTMStateProjBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size)  # nn.LSTM has bias_hh too

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMInPlaceMemory(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self._z(x, h).chunk(4, dim=-1)
        c.mul_(torch.sigmoid(f)).add_(torch.sigmoid(i) * torch.tanh(g))  # update the diary
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMCandidateFromInputOnly(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        gates = self._z(x, h)
        i, f, _, o = gates.chunk(4, dim=-1)
        H = self.hidden_size
        g = torch.tanh(self.in_proj(x)[:, 2 * H : 3 * H])  # the new content comes from the input
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * g
        return torch.sigmoid(o) * torch.tanh(c), c


class LSTMStateAsOneTensor(_Cell):
    def forward(self, x: Tensor, state: Tensor) -> Tensor:
        h, c = state.chunk(2, dim=-1)  # h and c side by side
        i, f, g, o = self._z(x, h).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.cat([torch.sigmoid(o) * torch.tanh(c), c], dim=-1)


class LSTMChunkOverBatch(_Cell):
    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        i, f, g, o = self._z(x, h).chunk(4)  # four blocks
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


# ---------------------------------------------------------------- correct variants


class LSTMSplitSizes(nn.Module):
    """split(H) instead of chunk; the state optional (zeros)."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size, bias=True)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)

    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h_prev, c_prev = state
        z = self.in_proj(x) + self.state_proj(h_prev)
        zi, zf, zg, zo = z.split(self.hidden_size, dim=-1)
        c = torch.addcmul(zf.sigmoid() * c_prev, zi.sigmoid(), zg.tanh())
        h = zo.sigmoid() * c.tanh()
        return h, c


class LSTMViewBlocks(nn.Module):
    """The four blocks as a (B, 4, H) view; sigmoid on all of them, then g redone with tanh."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        z = (self.in_proj(x) + self.state_proj(h)).view(-1, 4, self.hidden_size)
        gates = torch.sigmoid(z)
        i, f, o = gates[:, 0], gates[:, 1], gates[:, 3]
        g = torch.tanh(z[:, 2])
        c_new = f * c + i * g
        return o * torch.tanh(c_new), c_new


class LSTMFunctionalSlices(nn.Module):
    """F.linear with the layers' weights and explicit slices of the four blocks."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.H = hidden_size
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        H = self.H
        z = F.linear(x, self.in_proj.weight, self.in_proj.bias) + F.linear(
            h, self.state_proj.weight
        )
        input_gate = torch.sigmoid(z[..., 0:H])
        forget_gate = torch.sigmoid(z[..., H : 2 * H])
        candidate = torch.tanh(z[..., 2 * H : 3 * H])
        output_gate = torch.sigmoid(z[..., 3 * H :])
        c_next = forget_gate * c + input_gate * candidate
        h_next = output_gate * torch.tanh(c_next)
        return h_next, c_next


CASES = [
    BlindCase(
        CHECK,
        "gate_order_ifog",
        LSTMGatesIFOG,
        "mistake",
        "I split the blocks as i, f, o, g, so the output gate and the candidate are swapped.",
    ),
    BlindCase(
        CHECK,
        "forget_bias_one_in_forward",
        LSTMForgetBiasInForward,
        "mistake",
        "I added the forget-gate bias 1 inside forward, sigmoid(f + 1), instead of leaving the "
        "gates as computed.",
    ),
    BlindCase(
        CHECK,
        "output_reads_old_memory",
        LSTMOutputFromOldMemory,
        "mistake",
        "I computed h from tanh(c_prev), the old diary, instead of the new c.",
    ),
    BlindCase(
        CHECK,
        "interleaved_split",
        LSTMInterleavedSplit,
        "mistake",
        "I split z with view(B, H, 4), so the four gates are interleaved instead of four blocks.",
    ),
    BlindCase(
        CHECK,
        "returns_c_then_h",
        LSTMReturnsCellFirst,
        "mistake",
        "I returned (c, h) instead of (h, c).",
    ),
    BlindCase(
        CHECK,
        "coupled_input_forget",
        LSTMCoupledGates,
        "mistake",
        "I used 1 - i as the forget gate, so what is erased is what is written.",
    ),
    BlindCase(
        CHECK,
        "tanh_on_new_memory_stored",
        LSTMSquashedMemory,
        "mistake",
        "I stored tanh of the new memory as c, so the diary is squashed at every step.",
    ),
    BlindCase(
        CHECK,
        "state_proj_with_bias",
        LSTMStateProjBias,
        "mistake",
        "I kept nn.Linear's default bias on state_proj too, a second bias on every gate.",
    ),
    BlindCase(
        CHECK,
        "memory_updated_in_place",
        LSTMInPlaceMemory,
        "mistake",
        "I updated c in place with mul_ and add_, which changes the caller's c.",
    ),
    BlindCase(
        CHECK,
        "candidate_without_state",
        LSTMCandidateFromInputOnly,
        "mistake",
        "I took the candidate g from in_proj(x) alone, leaving h out of it.",
    ),
    BlindCase(
        CHECK,
        "state_as_one_tensor",
        LSTMStateAsOneTensor,
        "mistake",
        "I kept h and c side by side in one tensor and return one tensor, not a pair.",
    ),
    BlindCase(
        CHECK,
        "chunk_without_dim",
        LSTMChunkOverBatch,
        "mistake",
        "I wrote z.chunk(4) without dim=-1, which splits the batch instead of the gates.",
    ),
    BlindCase(
        CHECK,
        "split_and_addcmul",
        LSTMSplitSizes,
        "correct",
        "z.split(H) into the blocks, torch.addcmul for the diary; the state optional.",
    ),
    BlindCase(
        CHECK,
        "view_blocks_sigmoid_all",
        LSTMViewBlocks,
        "correct",
        "A (B, 4, H) view of the blocks, sigmoid on all four and tanh for g taken again.",
    ),
    BlindCase(
        CHECK,
        "functional_slices",
        LSTMFunctionalSlices,
        "correct",
        "F.linear with the layers' weights and explicit slices for i, f, g, o.",
    ),
]
