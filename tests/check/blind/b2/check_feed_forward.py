"""Blind cases for check_feed_forward (chapter 11), written from the chapter's text only."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_feed_forward"


class _Base(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)


# ---- mistakes -------------------------------------------------------------------------------


class NoRelu(_Base):
    def forward(self, x):
        return self.linear2(self.linear1(x))


class ReluOnOutput(_Base):
    def forward(self, x):
        return torch.relu(self.linear2(torch.relu(self.linear1(x))))


class ReluBeforeFirstLayer(_Base):
    def forward(self, x):
        return self.linear2(self.linear1(torch.relu(x)))


class ReluAfterSecondOnly(_Base):
    def forward(self, x):
        return torch.relu(self.linear2(self.linear1(x)))


class ResidualInside(_Base):
    def forward(self, x):
        return x + self.linear2(torch.relu(self.linear1(x)))


class GeluInstead(_Base):
    def forward(self, x):
        return self.linear2(F.gelu(self.linear1(x)))


class MixesPositions(_Base):
    def forward(self, x):
        B, T, D = x.shape
        # I flattened to (B*T, D) ... then reshaped the hidden layer with the wrong axis order
        h = torch.relu(self.linear1(x.reshape(B * T, D)))
        h = h.reshape(T, B, -1).transpose(0, 1).reshape(B * T, -1)
        return self.linear2(h).reshape(B, T, D)


class SoftmaxOverPositions(_Base):
    def forward(self, x):
        return self.linear2(torch.softmax(self.linear1(x), dim=1))  # a "smooth" activation


class LayersWithoutBias(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff, bias=False)
        self.linear2 = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x):
        return self.linear2(torch.relu(self.linear1(x)))


# ---- reader's slip ------------------------------------------------------------------------------


class _RightFFN(_Base):
    def forward(self, x):
        return self.linear2(torch.relu(self.linear1(x)))


_built_instance = _RightFFN(16, 64)


# ---- correct variants ---------------------------------------------------------------------------


class InPlaceRelu(_Base):
    def forward(self, x: Tensor) -> Tensor:
        hidden = self.linear1(x)
        hidden.relu_()
        return self.linear2(hidden)


class FunctionalWithDropoutArgument(nn.Module):
    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.p = dropout

    def forward(self, x: Tensor) -> Tensor:
        h = F.linear(x, self.linear1.weight, self.linear1.bias).clamp(min=0)
        h = F.dropout(h, self.p, self.training)
        return F.linear(h, self.linear2.weight, self.linear2.bias)


class FlattenedPositions(_Base):
    def forward(self, x: Tensor) -> Tensor:
        shape = x.shape
        flat = x.reshape(-1, shape[-1])  # every position is one row
        out = self.linear2(torch.maximum(self.linear1(flat), torch.zeros((), dtype=x.dtype)))
        return out.reshape(shape)


CASES = [
    BlindCase(CHECK, "no_relu", NoRelu, "mistake", "I forgot the ReLU between the two layers"),
    BlindCase(
        CHECK, "relu_on_output", ReluOnOutput, "mistake", "I put a ReLU after linear2 as well"
    ),
    BlindCase(
        CHECK,
        "relu_before_first_layer",
        ReluBeforeFirstLayer,
        "mistake",
        "I applied the ReLU to the input before linear1",
    ),
    BlindCase(
        CHECK,
        "relu_after_second_only",
        ReluAfterSecondOnly,
        "mistake",
        "I put the ReLU after linear2 instead of between the layers",
    ),
    BlindCase(
        CHECK,
        "residual_inside",
        ResidualInside,
        "mistake",
        "I added the input x to the output inside the feed-forward network",
    ),
    BlindCase(CHECK, "gelu_instead", GeluInstead, "mistake", "I used GELU instead of ReLU"),
    BlindCase(
        CHECK,
        "mixes_positions",
        MixesPositions,
        "mistake",
        "I flattened to (B*T, D) but reshaped the hidden layer as (T, B), which shuffles positions between sentences",
    ),
    BlindCase(
        CHECK,
        "softmax_over_positions",
        SoftmaxOverPositions,
        "mistake",
        "I used a softmax over dim 1 as the activation, which mixes the positions",
    ),
    BlindCase(
        CHECK,
        "layers_without_bias",
        LayersWithoutBias,
        "mistake",
        "I made both linear layers without a bias",
    ),
    BlindCase(
        CHECK,
        "built_instance",
        _built_instance,
        "mistake",
        "I passed my built module MyFeedForward(16, 64) instead of the class",
    ),
    BlindCase(
        CHECK,
        "in_place_relu",
        InPlaceRelu,
        "correct",
        "I applied the ReLU in place with relu_ on the hidden layer",
    ),
    BlindCase(
        CHECK,
        "functional_with_dropout_argument",
        FunctionalWithDropoutArgument,
        "correct",
        "I used F.linear and clamp(min=0), with an optional dropout argument that defaults to 0",
    ),
    BlindCase(
        CHECK,
        "flattened_positions",
        FlattenedPositions,
        "correct",
        "I flattened all positions to rows, used torch.maximum with 0, and reshaped back",
    ),
]
