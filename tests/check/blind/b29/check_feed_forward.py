"""Blind set B29, check_feed_forward (chapter 11): the position-wise network linear2(relu(linear1))."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_feed_forward"


class _Layers(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)


# ---------------------------------------------------------------- mistakes


class FFNoRelu(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(x))


class FFReluAtTheEnd(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(self.linear1(x)))  # max(0, ...) around everything


class FFReluTwice(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(torch.relu(self.linear1(x))))


class FFGelu(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.gelu(self.linear1(x)))  # what BERT and GPT use


class FFWithResidual(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return x + self.linear2(torch.relu(self.linear1(x)))  # Add belongs to the sublayer


class FFHiddenWidthDModel(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_model)  # keep the width d everywhere
        self.linear2 = nn.Linear(d_model, d_model)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFArgumentsSwapped(nn.Module):
    def __init__(self, d_ff: int, d_model: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFWeightNotTransposed(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        h = torch.relu(x @ self.linear1.weight + self.linear1.bias)  # x W_1 + b_1
        return h @ self.linear2.weight + self.linear2.bias


class FFBatchNormHidden(_Layers):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__(d_model, d_ff)
        self.norm = nn.BatchNorm1d(d_ff)  # keeps the hidden layer well scaled

    def forward(self, x: Tensor) -> Tensor:
        h = self.linear1(x)  # (B, T, d_ff)
        h = self.norm(h.transpose(1, 2)).transpose(1, 2)
        return self.linear2(torch.relu(h))


class FFReluInPlaceOnInput(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(F.relu(x, inplace=True)))  # saves memory


class FFReshapeBackWrong(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        flat = x.reshape(B * T, D)  # one row per position
        out = self.linear2(torch.relu(self.linear1(flat)))
        return out.reshape(T, B, D).transpose(0, 1)  # back to (B, T, D)


# ---------------------------------------------------------------- correct variants


class FFFunctional(_Layers):
    """F.linear with the layers' weights; the ReLU in place on the hidden layer only."""

    def forward(self, x: Tensor) -> Tensor:
        hidden = F.linear(x, self.linear1.weight, self.linear1.bias)
        hidden.clamp_(min=0.0)
        return F.linear(hidden, self.linear2.weight, self.linear2.bias)


class FFEinsum(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        h = torch.einsum("btd,fd->btf", x, self.linear1.weight) + self.linear1.bias
        h = torch.maximum(h, torch.zeros_like(h))
        return torch.einsum("btf,df->btd", h, self.linear2.weight) + self.linear2.bias


class FFLoopOverPositions(_Layers):
    """Position by position with the same layers; an optional dropout, 0 by default."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__(d_model, d_ff)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        outs = [
            self.linear2(self.dropout(torch.relu(self.linear1(x[:, t])))) for t in range(x.shape[1])
        ]
        return torch.stack(outs, dim=1)


class FFConv1d(_Layers):
    """The paper's other view: two convolutions with kernel size 1, with the layers' weights."""

    def forward(self, x: Tensor) -> Tensor:
        h = F.conv1d(x.transpose(1, 2), self.linear1.weight.unsqueeze(-1), self.linear1.bias)
        out = F.conv1d(F.relu(h), self.linear2.weight.unsqueeze(-1), self.linear2.bias)
        return out.transpose(1, 2)


CASES = [
    BlindCase(CHECK, "no_relu", FFNoRelu, "mistake", "I left out the ReLU between the layers."),
    BlindCase(
        CHECK,
        "relu_at_the_end",
        FFReluAtTheEnd,
        "mistake",
        "I read max(0, ...) as wrapping the whole expression and put the ReLU after linear2.",
    ),
    BlindCase(
        CHECK,
        "relu_twice",
        FFReluTwice,
        "mistake",
        "I put a ReLU after both layers.",
    ),
    BlindCase(
        CHECK,
        "gelu",
        FFGelu,
        "mistake",
        "I used GELU, as BERT and GPT do, instead of ReLU.",
    ),
    BlindCase(
        CHECK,
        "residual_inside",
        FFWithResidual,
        "mistake",
        "I returned x + FFN(x), putting the residual Add inside the network.",
    ),
    BlindCase(
        CHECK,
        "hidden_width_d_model",
        FFHiddenWidthDModel,
        "mistake",
        "I kept every layer d_model wide, so the hidden layer is not d_ff.",
    ),
    BlindCase(
        CHECK,
        "init_arguments_swapped",
        FFArgumentsSwapped,
        "mistake",
        "My __init__ takes (d_ff, d_model), the other order.",
    ),
    BlindCase(
        CHECK,
        "weights_not_transposed",
        FFWeightNotTransposed,
        "mistake",
        "I wrote x W_1 + b_1 with linear1.weight as it is, though nn.Linear stores it (out, in).",
    ),
    BlindCase(
        CHECK,
        "batch_norm_hidden",
        FFBatchNormHidden,
        "mistake",
        "I put a BatchNorm1d on the hidden layer, which averages over the positions of the batch.",
    ),
    BlindCase(
        CHECK,
        "relu_in_place_on_input",
        FFReluInPlaceOnInput,
        "mistake",
        "I applied F.relu(x, inplace=True) to the input before linear1, which also changes the "
        "caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "reshape_back_time_first",
        FFReshapeBackWrong,
        "mistake",
        "I flattened to (B*T, D) and reshaped the result as (T, B, D) before transposing, which "
        "mixes up positions and sentences.",
    ),
    BlindCase(
        CHECK,
        "functional_in_place_relu",
        FFFunctional,
        "correct",
        "F.linear with the layers' weights and clamp_(min=0) in place on the hidden layer.",
    ),
    BlindCase(
        CHECK,
        "einsum",
        FFEinsum,
        "correct",
        "einsum for both layers and torch.maximum with zeros for the ReLU.",
    ),
    BlindCase(
        CHECK,
        "loop_over_positions",
        FFLoopOverPositions,
        "correct",
        "The layers applied position by position and stacked; an optional dropout, 0 by default.",
    ),
    BlindCase(
        CHECK,
        "conv1d_kernel_1",
        FFConv1d,
        "correct",
        "Two F.conv1d with kernel size 1 built from linear1's and linear2's weights.",
    ),
]
