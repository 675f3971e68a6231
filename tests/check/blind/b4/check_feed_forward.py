"""Blind cases for check_feed_forward (chapter 11), written from the chapter's text only."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .. import BlindCase

CHECK = "check_feed_forward"


class _Layers(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)


class ReluAtTheEndToo(_Layers):
    def forward(self, x):
        return torch.relu(self.linear2(torch.relu(self.linear1(x))))


class ReluFirst(_Layers):
    def forward(self, x):
        return self.linear2(self.linear1(torch.relu(x)))


class GeluInstead(_Layers):
    def forward(self, x):
        return self.linear2(F.gelu(self.linear1(x)))


class ResidualInside(_Layers):
    def forward(self, x):
        return x + self.linear2(torch.relu(self.linear1(x)))


class FlattenedPositions(_Layers):
    def forward(self, x):
        flat = x.reshape(-1, x.shape[-1])  # every position one row
        return self.linear2(torch.relu(self.linear1(flat)))


class SecondLayerNoBias(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x):
        return self.linear2(torch.relu(self.linear1(x)))


class FunctionalDropout(_Layers):
    def forward(self, x):
        hidden = F.dropout(torch.relu(self.linear1(x)), p=0.1)
        return self.linear2(hidden)


class WithDropoutModule(nn.Module):
    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.linear2(self.dropout(F.relu(self.linear1(x))))


class ByHandWithClamp(_Layers):
    def forward(self, x):
        B, T, D = x.shape
        flat = x.reshape(B * T, D)
        hidden = (flat @ self.linear1.weight.T + self.linear1.bias).clamp(min=0)
        out = F.linear(hidden, self.linear2.weight, self.linear2.bias)
        return out.reshape(B, T, D)


class SequentialInside(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.net = nn.Sequential(self.linear1, nn.ReLU(), self.linear2)

    def forward(self, x):
        return self.net(x)


CASES = [
    BlindCase(
        CHECK,
        "relu_at_the_end_too",
        ReluAtTheEndToo,
        "mistake",
        "I put a ReLU after linear2 as well",
    ),
    BlindCase(
        CHECK,
        "relu_first",
        ReluFirst,
        "mistake",
        "I applied the ReLU to the input, before linear1",
    ),
    BlindCase(
        CHECK,
        "gelu_instead",
        GeluInstead,
        "mistake",
        "I used GELU, as modern Transformers do, instead of ReLU",
    ),
    BlindCase(
        CHECK,
        "residual_inside",
        ResidualInside,
        "mistake",
        "I added the residual x + FFN(x) inside the feed-forward module",
    ),
    BlindCase(
        CHECK,
        "flattened_positions",
        FlattenedPositions,
        "mistake",
        "I flattened (B, T, D) to (B*T, D) and forgot to reshape the result back",
    ),
    BlindCase(
        CHECK,
        "second_layer_no_bias",
        SecondLayerNoBias,
        "mistake",
        "I made linear2 bias-free",
    ),
    BlindCase(
        CHECK,
        "functional_dropout",
        FunctionalDropout,
        "mistake",
        "I added F.dropout(p=0.1) on the hidden layer, which is on even in eval mode",
    ),
    BlindCase(
        CHECK,
        "with_dropout_module",
        WithDropoutModule,
        "correct",
        "an nn.Dropout on the hidden layer with an optional p that defaults to 0; F.relu",
    ),
    BlindCase(
        CHECK,
        "by_hand_with_clamp",
        ByHandWithClamp,
        "correct",
        "I flattened the positions, wrote the products by hand, clamp(min=0), and reshaped back",
    ),
    BlindCase(
        CHECK,
        "sequential_inside",
        SequentialInside,
        "correct",
        "I wrapped linear1, nn.ReLU and linear2 in an nn.Sequential",
    ),
]
