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


class NoRelu(_Layers):
    def forward(self, x):
        return self.linear2(self.linear1(x))


class ReluAtTheEnd(_Layers):
    def forward(self, x):
        return torch.relu(self.linear2(self.linear1(x)))


class ReluTwice(_Layers):
    def forward(self, x):
        return F.relu(self.linear2(F.relu(self.linear1(x))))


class GeluInstead(_Layers):
    def forward(self, x):
        return self.linear2(F.gelu(self.linear1(x)))


class FunctionalDropout(_Layers):
    def forward(self, x):
        return self.linear2(F.dropout(F.relu(self.linear1(x)), p=0.1))


class ResidualInside(_Layers):
    def forward(self, x):
        return x + self.linear2(torch.relu(self.linear1(x)))


class FlattenedTimeFirst(_Layers):
    def forward(self, x):
        B, T, D = x.shape
        flat = x.transpose(0, 1).reshape(B * T, D)  # (T*B, D) rows
        out = self.linear2(torch.relu(self.linear1(flat)))
        return out.view(B, T, D)  # put back as if rows were batch-major


class HiddenSizeIgnored(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_model)
        self.linear2 = nn.Linear(d_model, d_model)

    def forward(self, x):
        return self.linear2(torch.relu(self.linear1(x)))


class MixesPositions(_Layers):
    def forward(self, x):
        hidden = torch.relu(self.linear1(x))  # (B, T, d_ff)
        hidden = hidden.softmax(dim=1) * hidden.shape[1]  # I "normalized" over the positions
        return self.linear2(hidden)


class SequentialWithNames(nn.Module):
    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.net = nn.Sequential(self.linear1, nn.ReLU(), nn.Dropout(dropout), self.linear2)

    def forward(self, x):
        return self.net(x)


class ClampAndAddmm(_Layers):
    def forward(self, x):
        h = F.linear(x, self.linear1.weight, self.linear1.bias).clamp(min=0)
        shape = h.shape[:-1]
        h = h.reshape(-1, h.shape[-1])
        out = torch.addmm(self.linear2.bias, h, self.linear2.weight.t())
        return out.reshape(*shape, -1)


class EinsumInPlaceRelu(_Layers):
    def forward(self, x):
        h = torch.einsum("btd,fd->btf", x, self.linear1.weight) + self.linear1.bias
        h.relu_()
        return torch.einsum("btf,df->btd", h, self.linear2.weight) + self.linear2.bias


CASES = [
    BlindCase(CHECK, "no_relu", NoRelu, "mistake", "I forgot the ReLU between the two layers"),
    BlindCase(
        CHECK,
        "relu_at_the_end",
        ReluAtTheEnd,
        "mistake",
        "I put the ReLU after linear2 instead of between the layers",
    ),
    BlindCase(
        CHECK,
        "relu_twice",
        ReluTwice,
        "mistake",
        "I put a ReLU after both layers, so the output is never negative",
    ),
    BlindCase(
        CHECK,
        "gelu_instead",
        GeluInstead,
        "mistake",
        "I used GELU (as in BERT and GPT) instead of ReLU",
    ),
    BlindCase(
        CHECK,
        "functional_dropout",
        FunctionalDropout,
        "mistake",
        "I added F.dropout(p=0.1) on the hidden layer, which drops even in eval mode because "
        "F.dropout's training argument defaults to True",
    ),
    BlindCase(
        CHECK,
        "residual_inside",
        ResidualInside,
        "mistake",
        "I added the residual x inside the feed-forward network: x + linear2(relu(linear1(x)))",
    ),
    BlindCase(
        CHECK,
        "flattened_time_first",
        FlattenedTimeFirst,
        "mistake",
        "I flattened x with transpose(0, 1).reshape(B*T, D) but put it back with view(B, T, D), "
        "so outputs land at other positions and sequences (fine only when B or T is 1)",
    ),
    BlindCase(
        CHECK,
        "hidden_size_ignored",
        HiddenSizeIgnored,
        "mistake",
        "I made both layers d_model -> d_model and never used d_ff",
    ),
    BlindCase(
        CHECK,
        "mixes_positions",
        MixesPositions,
        "mistake",
        "I normalized the hidden activations with a softmax over the positions, so positions "
        "influence each other",
    ),
    BlindCase(
        CHECK,
        "sequential_with_names",
        SequentialWithNames,
        "correct",
        "an nn.Sequential of the two named layers, nn.ReLU and nn.Dropout (p=0 by default)",
    ),
    BlindCase(
        CHECK,
        "clamp_and_addmm",
        ClampAndAddmm,
        "correct",
        "F.linear, clamp(min=0) for the ReLU, and torch.addmm for the second layer on "
        "flattened positions",
    ),
    BlindCase(
        CHECK,
        "einsum_in_place_relu",
        EinsumInPlaceRelu,
        "correct",
        "both layers as einsum with their weights and biases, and an in-place relu_()",
    ),
]
