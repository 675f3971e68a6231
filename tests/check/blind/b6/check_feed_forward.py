"""Blind set B6, check_feed_forward (chapter 11): the position-wise feed-forward network."""

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


class FFNNoReLU(_Layers):
    def forward(self, x):
        return self.linear2(self.linear1(x))


class FFNReLUOnOutput(_Layers):
    def forward(self, x):
        return torch.relu(self.linear2(torch.relu(self.linear1(x))))  # a ReLU after each layer


class FFNReLUFirst(_Layers):
    def forward(self, x):
        return self.linear2(self.linear1(torch.relu(x)))


class FFNGELU(_Layers):
    def forward(self, x):
        return self.linear2(F.gelu(self.linear1(x)))  # as in BERT and GPT


class FFNNoBias(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff, bias=False)  # the paper's matrices W_1, W_2
        self.linear2 = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x):
        return self.linear2(torch.relu(self.linear1(x)))


class FFNConvViewMixesPositions(_Layers):
    def forward(self, x):
        B, T, D = x.shape
        channels = x.view(B, D, T)  # (B, D, T) for a 1x1 convolution
        h = F.conv1d(channels, self.linear1.weight.unsqueeze(-1), self.linear1.bias)
        out = F.conv1d(torch.relu(h), self.linear2.weight.unsqueeze(-1), self.linear2.bias)
        return out.view(B, T, D)


class FFNWithResidual(_Layers):
    def forward(self, x):
        return x + self.linear2(torch.relu(self.linear1(x)))  # Add is part of the sublayer


class FFNFunctionalDropout(_Layers):
    def forward(self, x):
        h = F.dropout(torch.relu(self.linear1(x)), p=0.1)  # as nn.TransformerEncoderLayer does
        return self.linear2(h)


class FFNTorchMax(_Layers):
    def forward(self, x):
        h = self.linear1(x)
        h = torch.max(h, 0)[0]  # max(0, x W_1 + b_1), as in the paper's formula
        return self.linear2(h)


# ---------------------------------------------------------------- correct variants


class FFNFunctional(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        h = F.linear(x, self.linear1.weight, self.linear1.bias).clamp(min=0)
        return F.linear(h, self.linear2.weight, self.linear2.bias)


class FFNRowsWithDropout(nn.Module):
    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        rows = x.reshape(-1, x.shape[-1])  # every position is one row
        out = self.linear2(self.dropout(F.relu(self.linear1(rows))))
        return out.reshape(x.shape)


class FFNEinsum(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        h = torch.einsum("btd,fd->btf", x, self.linear1.weight) + self.linear1.bias
        h = torch.maximum(h, torch.zeros_like(h))
        return torch.einsum("btf,df->btd", h, self.linear2.weight) + self.linear2.bias


CASES = [
    BlindCase(
        CHECK,
        "no_relu",
        FFNNoReLU,
        "mistake",
        "I forgot the ReLU between the two layers.",
    ),
    BlindCase(
        CHECK,
        "relu_after_linear2_too",
        FFNReLUOnOutput,
        "mistake",
        "I put a ReLU after linear2 as well, so the output is never negative.",
    ),
    BlindCase(
        CHECK,
        "relu_before_linear1",
        FFNReLUFirst,
        "mistake",
        "I applied the ReLU to the input before linear1 instead of between the two layers.",
    ),
    BlindCase(
        CHECK,
        "gelu_instead_of_relu",
        FFNGELU,
        "mistake",
        "I used GELU, as BERT and GPT do, instead of ReLU.",
    ),
    BlindCase(
        CHECK,
        "linear_layers_without_bias",
        FFNNoBias,
        "mistake",
        "I built both layers with bias=False, though the exercise asks for biases.",
    ),
    BlindCase(
        CHECK,
        "conv_view_mixes_positions",
        FFNConvViewMixesPositions,
        "mistake",
        "I wrote it as a 1x1 convolution and used x.view(B, D, T) instead of a transpose, which "
        "scrambles features and positions.",
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
        "functional_dropout_always_on",
        FFNFunctionalDropout,
        "mistake",
        "I used F.dropout(h, p=0.1) on the hidden layer, which drops units even in eval mode.",
    ),
    BlindCase(
        CHECK,
        "torch_max_reduces_batch",
        FFNTorchMax,
        "mistake",
        "I wrote max(0, h) as torch.max(h, 0)[0], which takes the maximum over the batch axis "
        "instead of clipping at zero.",
    ),
    BlindCase(
        CHECK,
        "functional_clamp",
        FFNFunctional,
        "correct",
        "F.linear with the layers' weights and clamp(min=0) for the ReLU.",
    ),
    BlindCase(
        CHECK,
        "rows_with_dropout_option",
        FFNRowsWithDropout,
        "correct",
        "Positions flattened to rows and reshaped back; an optional dropout (default 0).",
    ),
    BlindCase(
        CHECK,
        "einsum",
        FFNEinsum,
        "correct",
        "Both layers as einsums with the weights, torch.maximum with zeros for the ReLU.",
    ),
]
