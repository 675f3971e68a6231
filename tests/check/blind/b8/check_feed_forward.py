"""Blind set B8, check_feed_forward (chapter 11): the position-wise feed-forward network."""

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


# ---------------------------------------------------------------- mistakes


class NoActivation(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(x))


class ReluAtTheEndToo(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(torch.relu(self.linear1(x))))


class ReluOnInput(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(torch.relu(x)))


class GeluInsteadOfRelu(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.gelu(self.linear1(x)))  # BERT's activation


class SecondLinearWithoutBias(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class ResidualInside(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return x + self.linear2(torch.relu(self.linear1(x)))  # the "add" of add & norm


class FunctionalDropoutOn(_Base):
    def forward(self, x: Tensor) -> Tensor:
        hidden = F.dropout(torch.relu(self.linear1(x)), p=0.1)  # training=True by default
        return self.linear2(hidden)


class ClampMaxInsteadOfMin(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(x).clamp(max=0))


class LinearArgumentsSwapped(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_ff, d_model)  # thought nn.Linear takes (out, in)
        self.linear2 = nn.Linear(d_model, d_ff)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class MixesPositionsByTranspose(_Base):
    def forward(self, x: Tensor) -> Tensor:
        # I wanted "each position", so I put the positions last like a Conv1d input
        h = torch.relu(self.linear1(x.transpose(1, 2)))  # only runs when T == d_model
        return self.linear2(h).transpose(1, 2)


class LeakyRelu(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.leaky_relu(self.linear1(x), 0.01))


# ---------------------------------------------------------------- correct variants


class FunctionalLinear(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = F.linear(x, self.linear1.weight, self.linear1.bias).clamp(min=0)
        return F.linear(h, self.linear2.weight, self.linear2.bias)


class FlattenPositions(_Base):
    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__(d_model, d_ff)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        shape = x.shape
        rows = x.reshape(-1, shape[-1])  # every position is its own row
        out = self.linear2(self.dropout(F.relu(self.linear1(rows))))
        return out.reshape(shape)


class WhereRelu(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = self.linear1(x)
        h = torch.where(h > 0, h, torch.zeros_like(h))
        out = self.linear2(h)
        return out


CASES = [
    BlindCase(
        CHECK, "no_activation", NoActivation, "mistake", "I forgot the ReLU: linear2(linear1(x))"
    ),
    BlindCase(
        CHECK,
        "relu_at_the_end_too",
        ReluAtTheEndToo,
        "mistake",
        "I put a second ReLU after linear2",
    ),
    BlindCase(
        CHECK,
        "relu_on_input",
        ReluOnInput,
        "mistake",
        "I applied the ReLU to the input before linear1 instead of between the layers",
    ),
    BlindCase(
        CHECK,
        "gelu_instead_of_relu",
        GeluInsteadOfRelu,
        "mistake",
        "I used GELU, as in BERT, instead of ReLU",
    ),
    BlindCase(
        CHECK,
        "second_linear_without_bias",
        SecondLinearWithoutBias,
        "mistake",
        "I created linear2 with bias=False",
    ),
    BlindCase(
        CHECK,
        "residual_inside",
        ResidualInside,
        "mistake",
        "I added the residual x inside the feed-forward module",
    ),
    BlindCase(
        CHECK,
        "functional_dropout_on",
        FunctionalDropoutOn,
        "mistake",
        "I added F.dropout(p=0.1) on the hidden layer, which is on even in eval mode",
    ),
    BlindCase(
        CHECK,
        "clamp_max_instead_of_min",
        ClampMaxInsteadOfMin,
        "mistake",
        "I wrote the ReLU as clamp(max=0) instead of clamp(min=0)",
    ),
    BlindCase(
        CHECK,
        "linear_arguments_swapped",
        LinearArgumentsSwapped,
        "mistake",
        "I gave nn.Linear its sizes as (out, in): linear1 = Linear(d_ff, d_model)",
    ),
    BlindCase(
        CHECK,
        "mixes_positions_by_transpose",
        MixesPositionsByTranspose,
        "mistake",
        "I transposed x to (B, D, T) before linear1 as for a Conv1d; the layers then mix "
        "positions (it only runs when T == d_model)",
    ),
    BlindCase(CHECK, "leaky_relu", LeakyRelu, "mistake", "I used leaky_relu(0.01) instead of relu"),
    BlindCase(
        CHECK,
        "functional_linear",
        FunctionalLinear,
        "correct",
        "F.linear with the layers' weights and clamp(min=0) as the ReLU",
    ),
    BlindCase(
        CHECK,
        "flatten_positions",
        FlattenPositions,
        "correct",
        "positions flattened to rows and reshaped back; dropout argument with default 0",
    ),
    BlindCase(
        CHECK, "where_relu", WhereRelu, "correct", "ReLU written as torch.where(h > 0, h, 0)"
    ),
]
