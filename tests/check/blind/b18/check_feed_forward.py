"""Blind set B18, check_feed_forward (chapter 11): the position-wise feed-forward network as
readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_feed_forward"


class _Layers(nn.Module):
    """The two layers of the skeleton, shared by the mistakes in ``forward``."""

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)


# ---------------------------------------------------------------- mistakes


class FFNoReLU(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(x))


class FFReLUOnOutputToo(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(torch.relu(self.linear1(x))))  # a ReLU after each layer


class FFReLUFirst(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(torch.relu(x)))


class FFGELU(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.gelu(self.linear1(x)))  # what BERT and GPT use


class FFTimeMajorFlatten(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        rows = x.transpose(0, 1).reshape(T * B, D)  # every position a row
        out = self.linear2(torch.relu(self.linear1(rows)))
        return out.view(B, T, D)


class FFWithResidual(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return x + self.linear2(torch.relu(self.linear1(x)))  # Add, as in the chapter's title


class FFDropoutAlways(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        hidden = F.dropout(torch.relu(self.linear1(x)), p=0.1)
        return self.linear2(hidden)


class FFNormAtTheEnd(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        out = self.linear2(torch.relu(self.linear1(x)))
        return F.layer_norm(out, out.shape[-1:])  # Add & Norm: the norm part


class FFSecondLayerNoBias(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model, bias=False)  # a bias in the first is enough

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFReLUInPlaceOnInput(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(x.relu_()))  # in place, to save memory


class FFSoftmaxHidden(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        hidden = torch.softmax(self.linear1(x), dim=1)  # activations over the sequence
        return self.linear2(hidden)


# ---------------------------------------------------------------- correct variants


class FFInPlaceReLUOnHidden(_Layers):
    """F.relu(inplace=True) on the hidden activations, which this module created itself."""

    def forward(self, x: Tensor) -> Tensor:
        hidden = self.linear1(x)
        F.relu(hidden, inplace=True)
        return self.linear2(hidden)


class FFModulesAndDropoutArg(nn.Module):
    """An nn.ReLU and an nn.Dropout as attributes; dropout as an extra argument, 0 by default."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.activation = nn.ReLU()
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(self.activation(self.linear1(x))))


class FFFlattenedRows(_Layers):
    """All positions flattened into rows with reshape, F.linear and clamp_min(0), reshaped back."""

    def forward(self, x: Tensor) -> Tensor:
        shape = x.shape
        rows = x.reshape(-1, shape[-1])  # (B * T, D)
        hidden = F.linear(rows, self.linear1.weight, self.linear1.bias).clamp_min(0)
        out = torch.addmm(self.linear2.bias, hidden, self.linear2.weight.T)
        return out.reshape(shape)


CASES = [
    BlindCase(
        CHECK,
        "no_relu",
        FFNoReLU,
        "mistake",
        "I chained linear1 and linear2 with no ReLU between them.",
    ),
    BlindCase(
        CHECK,
        "relu_on_output_too",
        FFReLUOnOutputToo,
        "mistake",
        "I put a ReLU after linear2 as well, so the output is never negative.",
    ),
    BlindCase(
        CHECK,
        "relu_before_linear1",
        FFReLUFirst,
        "mistake",
        "I applied the ReLU to the input, before linear1, instead of between the layers.",
    ),
    BlindCase(
        CHECK,
        "gelu",
        FFGELU,
        "mistake",
        "I used GELU instead of ReLU.",
    ),
    BlindCase(
        CHECK,
        "time_major_flatten",
        FFTimeMajorFlatten,
        "mistake",
        "I flattened the positions with transpose(0, 1).reshape and viewed the result back as "
        "(B, T, D), which scrambles positions across sentences.",
    ),
    BlindCase(
        CHECK,
        "adds_residual",
        FFWithResidual,
        "mistake",
        "I added the residual x inside the feed-forward network.",
    ),
    BlindCase(
        CHECK,
        "dropout_always_on",
        FFDropoutAlways,
        "mistake",
        "I used F.dropout(p=0.1) on the hidden layer, which drops even in eval mode.",
    ),
    BlindCase(
        CHECK,
        "layer_norm_at_the_end",
        FFNormAtTheEnd,
        "mistake",
        "I applied a LayerNorm to the output of the network.",
    ),
    BlindCase(
        CHECK,
        "linear2_without_bias",
        FFSecondLayerNoBias,
        "mistake",
        "I made linear2 without a bias.",
    ),
    BlindCase(
        CHECK,
        "relu_in_place_on_input",
        FFReLUInPlaceOnInput,
        "mistake",
        "I applied x.relu_() to the input before linear1, which also overwrites the caller's x.",
    ),
    BlindCase(
        CHECK,
        "softmax_hidden_over_positions",
        FFSoftmaxHidden,
        "mistake",
        "I used a softmax over dim=1 as the activation, which mixes the positions.",
    ),
    BlindCase(
        CHECK,
        "inplace_relu_on_hidden",
        FFInPlaceReLUOnHidden,
        "correct",
        "F.relu(inplace=True) on the hidden tensor the module made itself.",
    ),
    BlindCase(
        CHECK,
        "modules_dropout_argument",
        FFModulesAndDropoutArg,
        "correct",
        "nn.ReLU and nn.Dropout as attributes; dropout as an extra argument, 0 by default.",
    ),
    BlindCase(
        CHECK,
        "flattened_rows_addmm",
        FFFlattenedRows,
        "correct",
        "Positions flattened into rows; F.linear, clamp_min(0) and addmm; reshaped back.",
    ),
]
