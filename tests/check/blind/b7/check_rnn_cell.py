"""Blind set B7, check_rnn_cell (chapter 2): one step s_t = tanh(W_in x_t + W_s s_{t-1} + b)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_rnn_cell"


class _Base(nn.Module):
    """The two layers as the chapter names them; each mistake changes one thing."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)


# ---------------------------------------------------------------- mistakes


class RNNCellSigmoid(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.sigmoid(self.in_proj(x) + self.state_proj(s_prev))


class RNNCellReLU(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.relu(self.in_proj(x) + self.state_proj(s_prev))  # relu is allowed too


class RNNCellStateBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(hidden_size, hidden_size)  # default bias=True

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNCellNoBias(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size, bias=False)
        self.state_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNCellTanhOnInputOnly(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x)) + self.state_proj(s_prev)


class RNNCellReturnsPair(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> tuple[Tensor, Tensor]:
        s = torch.tanh(self.in_proj(x) + self.state_proj(s_prev))
        return s, s  # (output, state), like nn.RNN


class RNNCellUntransposedWs(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        W_s = self.state_proj.weight  # (H, H)
        return torch.tanh(self.in_proj(x) + s_prev @ W_s)  # square, so no shape error


class RNNCellResidual(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return s_prev + torch.tanh(self.in_proj(x) + self.state_proj(s_prev))  # keeps the past


class RNNCellOrDefault(_Base):
    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        s_prev = s_prev or x.new_zeros(x.shape[0], self.state_proj.in_features)
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNCellStateProjTypo(nn.Module):
    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(input_size, hidden_size)
        self.state_proj = nn.Linear(input_size, hidden_size, bias=False)

    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        return torch.tanh(self.in_proj(x) + self.state_proj(s_prev))


class RNNCellWritesIntoState(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        with torch.no_grad():
            s_prev.copy_(torch.tanh(self.in_proj(x) + self.state_proj(s_prev)))  # reuse memory
        return s_prev


# ---------------------------------------------------------------- correct variants


class RNNCellFunctional(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        pre = F.linear(x, self.in_proj.weight, self.in_proj.bias)
        pre = pre + F.linear(s_prev, self.state_proj.weight)
        return pre.tanh()


class RNNCellConcat(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        W = torch.cat([self.in_proj.weight, self.state_proj.weight], dim=1)  # (H, D_in + H)
        xs = torch.cat([x, s_prev], dim=-1)  # (B, D_in + H): the "one shared MLP" view
        return torch.tanh(xs @ W.T + self.in_proj.bias)


class RNNCellInPlaceSafe(_Base):
    def forward(self, x: Tensor, s_prev: Tensor | None = None) -> Tensor:
        if s_prev is None:
            s_prev = x.new_zeros(x.shape[0], self.state_proj.out_features)
        pre = self.in_proj(x)  # a fresh tensor, so adding in place is safe
        pre += self.state_proj(s_prev)
        return torch.tanh_(pre)


class RNNCellAddmm(_Base):
    def forward(self, x: Tensor, s_prev: Tensor) -> Tensor:
        pre = torch.addmm(self.in_proj.bias, x, self.in_proj.weight.t())
        return torch.tanh(torch.addmm(pre, s_prev, self.state_proj.weight.t()))


CASES = [
    BlindCase(
        check=CHECK,
        name="sigmoid_not_tanh",
        code=RNNCellSigmoid,
        kind="mistake",
        what="I squashed the new state with a sigmoid instead of tanh.",
    ),
    BlindCase(
        check=CHECK,
        name="relu_not_tanh",
        code=RNNCellReLU,
        kind="mistake",
        what="I used ReLU as the nonlinearity (the chapter's RNNCell allows it as an option), "
        "but the exercise asks for tanh.",
    ),
    BlindCase(
        check=CHECK,
        name="bias_on_state_proj_too",
        code=RNNCellStateBias,
        kind="mistake",
        what="I left nn.Linear's default bias on state_proj, so the cell adds two biases, like "
        "PyTorch's b_ih and b_hh, and the second is not the book's.",
    ),
    BlindCase(
        check=CHECK,
        name="no_bias_anywhere",
        code=RNNCellNoBias,
        kind="mistake",
        what="I made both linear layers bias-free, so the cell has no b at all.",
    ),
    BlindCase(
        check=CHECK,
        name="tanh_only_on_input_term",
        code=RNNCellTanhOnInputOnly,
        kind="mistake",
        what="I closed the bracket too early: tanh(W_in x + b) + W_s s, so the state term is "
        "not squashed.",
    ),
    BlindCase(
        check=CHECK,
        name="returns_output_and_state",
        code=RNNCellReturnsPair,
        kind="mistake",
        what="I returned a pair (output, state) like nn.RNN instead of the new state alone.",
    ),
    BlindCase(
        check=CHECK,
        name="state_weight_not_transposed",
        code=RNNCellUntransposedWs,
        kind="mistake",
        what="I wrote the state term by hand as s_prev @ state_proj.weight, forgetting the .T "
        "(no shape error since W_s is square).",
    ),
    BlindCase(
        check=CHECK,
        name="residual_state_update",
        code=RNNCellResidual,
        kind="mistake",
        what="I added the previous state to the result, s_prev + tanh(...), to keep the memory "
        "longer.",
    ),
    BlindCase(
        check=CHECK,
        name="s_prev_or_zeros",
        code=RNNCellOrDefault,
        kind="mistake",
        what="I defaulted the state with `s_prev = s_prev or zeros`, which raises 'Boolean "
        "value of Tensor is ambiguous' as soon as a real state is passed.",
    ),
    BlindCase(
        check=CHECK,
        name="state_proj_sized_by_input",
        code=RNNCellStateProjTypo,
        kind="mistake",
        what="I declared state_proj as nn.Linear(input_size, hidden_size), copying the line "
        "above, so it only works when input_size == hidden_size.",
    ),
    BlindCase(
        check=CHECK,
        name="writes_into_s_prev",
        code=RNNCellWritesIntoState,
        kind="mistake",
        what="I wrote the new state into s_prev with copy_ under no_grad to save memory; the "
        "caller's state is overwritten and no gradient flows.",
    ),
    BlindCase(
        check=CHECK,
        name="functional_linear",
        code=RNNCellFunctional,
        kind="correct",
        what="I called F.linear with the layers' weight and bias instead of calling the layers.",
    ),
    BlindCase(
        check=CHECK,
        name="one_matrix_on_concat",
        code=RNNCellConcat,
        kind="correct",
        what="I concatenated [x, s_prev] and multiplied by [W_in W_s], the 'shared MLP' view of "
        "the chapter.",
    ),
    BlindCase(
        check=CHECK,
        name="in_place_on_fresh_tensor",
        code=RNNCellInPlaceSafe,
        kind="correct",
        what="I added the state term in place to the fresh in_proj output and used tanh_, and "
        "let s_prev default to zeros.",
    ),
    BlindCase(
        check=CHECK,
        name="addmm",
        code=RNNCellAddmm,
        kind="correct",
        what="I wrote both terms with torch.addmm on the layers' weights.",
    ),
]
