"""Blind set B16, check_feed_forward (chapter 11): the position-wise feed-forward network as
readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_feed_forward"


class _Layers(nn.Module):
    """The two layers under the book's names; subclasses write their forward."""

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)


# ---------------------------------------------------------------- mistakes


class FFNNoRelu(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(x))


class FFNReluOnOutput(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(self.linear1(x)))  # max(0, ...) around the whole thing


class FFNReluTwice(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return F.relu(self.linear2(F.relu(self.linear1(x))))  # every layer gets its ReLU


class FFNReluFirst(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(torch.relu(x)))


class FFNGelu(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.gelu(self.linear1(x)))  # GELU, as BERT and GPT use


class FFNNoBias(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff, bias=False)  # the paper's W_1, W_2
        self.linear2 = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFNNarrowHidden(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_model)  # every sublayer keeps d_model
        self.linear2 = nn.Linear(d_model, d_model)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFNWithResidual(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return x + self.linear2(torch.relu(self.linear1(x)))  # Add


class FFNWithAddNorm(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x: Tensor) -> Tensor:
        return self.norm(x + self.linear2(torch.relu(self.linear1(x))))  # the whole sublayer


class FFNDropoutAlwaysOn(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        hidden = F.dropout(torch.relu(self.linear1(x)), p=0.1)  # dropout as in the paper
        return self.linear2(hidden)


class FFNOverTime(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        flat = x.reshape(B * T, D)  # every position is a row
        out = self.linear2(torch.relu(self.linear1(flat)))
        return out.reshape(T, B, D).transpose(0, 1)  # back to (B, T, D)


# ---------------------------------------------------------------- correct variants


class FFNConv1d(_Layers):
    """Two convolutions of width 1 with the linear layers' weights."""

    def forward(self, x: Tensor) -> Tensor:
        h = F.conv1d(x.transpose(1, 2), self.linear1.weight.unsqueeze(-1), self.linear1.bias)
        y = F.conv1d(F.relu(h), self.linear2.weight.unsqueeze(-1), self.linear2.bias)
        return y.transpose(1, 2)


class FFNEinsumInPlace(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        h = torch.einsum("btd,fd->btf", x, self.linear1.weight) + self.linear1.bias
        h.clamp_(min=0)  # ReLU in place on our own hidden tensor
        return torch.einsum("btf,df->btd", h, self.linear2.weight) + self.linear2.bias


class FFNWithDropoutArg(nn.Module):
    """A dropout argument (default 0), an nn.ReLU module, and rows flattened and restored."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.activation = nn.ReLU()
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x: Tensor) -> Tensor:
        shape = x.shape
        rows = x.reshape(-1, shape[-1])
        out = self.linear2(self.dropout(self.activation(self.linear1(rows))))
        return out.reshape(shape)


CASES = [
    BlindCase(
        CHECK,
        "no_relu",
        FFNNoRelu,
        "mistake",
        "I wrote linear2(linear1(x)) and forgot the ReLU between them.",
    ),
    BlindCase(
        CHECK,
        "relu_on_output",
        FFNReluOnOutput,
        "mistake",
        "I put the ReLU around the output of linear2 instead of between the layers.",
    ),
    BlindCase(
        CHECK,
        "relu_after_both",
        FFNReluTwice,
        "mistake",
        "I put a ReLU after each of the two layers.",
    ),
    BlindCase(
        CHECK,
        "relu_before_linear1",
        FFNReluFirst,
        "mistake",
        "I applied the ReLU to the input before linear1.",
    ),
    BlindCase(
        CHECK,
        "gelu",
        FFNGelu,
        "mistake",
        "I used GELU instead of ReLU, as in BERT and GPT.",
    ),
    BlindCase(
        CHECK,
        "linear_layers_without_bias",
        FFNNoBias,
        "mistake",
        "I made both layers bias-free, reading only W_1 and W_2 in the formula.",
    ),
    BlindCase(
        CHECK,
        "hidden_layer_d_model_wide",
        FFNNarrowHidden,
        "mistake",
        "I made the hidden layer d_model wide, since every sublayer keeps d_model, and ignored "
        "d_ff.",
    ),
    BlindCase(
        CHECK,
        "residual_inside",
        FFNWithResidual,
        "mistake",
        "I added the residual x inside the feed-forward module.",
    ),
    BlindCase(
        CHECK,
        "add_and_norm_inside",
        FFNWithAddNorm,
        "mistake",
        "I put the whole sublayer, LayerNorm(x + FFN(x)), inside the module.",
    ),
    BlindCase(
        CHECK,
        "dropout_always_on",
        FFNDropoutAlwaysOn,
        "mistake",
        "I added F.dropout(p=0.1) on the hidden layer; F.dropout drops even in eval mode.",
    ),
    BlindCase(
        CHECK,
        "rows_restored_time_first",
        FFNOverTime,
        "mistake",
        "I flattened to (B*T, D) and restored with reshape(T, B, D).transpose(0, 1), which "
        "puts the outputs at other positions and in other sentences.",
    ),
    BlindCase(
        CHECK,
        "conv1d_kernel_1",
        FFNConv1d,
        "correct",
        "F.conv1d with kernel size 1 on the transposed input, using the linear weights.",
    ),
    BlindCase(
        CHECK,
        "einsum_clamp_in_place",
        FFNEinsumInPlace,
        "correct",
        "einsum with the weights plus the biases; ReLU as clamp_(min=0) on its own tensor.",
    ),
    BlindCase(
        CHECK,
        "dropout_argument_and_rows",
        FFNWithDropoutArg,
        "correct",
        "A dropout argument defaulting to 0, nn.ReLU and nn.Dropout modules, the positions "
        "flattened to rows and the shape restored.",
    ),
]
