"""Blind set B12, check_feed_forward (chapter 11): the position-wise feed-forward network."""

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


class FFNNoRelu(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(x))


class FFNReluTwice(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(torch.relu(self.linear1(x))))  # ReLU after each layer


class FFNReluAtEnd(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(self.linear1(x)))


class FFNReluOnInput(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(torch.relu(x)))


class FFNGelu(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.gelu(self.linear1(x)))  # BERT's activation


class FFNResidual(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return x + self.linear2(torch.relu(self.linear1(x)))  # add & norm's residual inside


class FFNAlwaysDropout(_Base):
    def forward(self, x: Tensor) -> Tensor:
        hidden = F.dropout(torch.relu(self.linear1(x)), p=0.1)  # training=True by default
        return self.linear2(hidden)


class FFNNormInside(_Base):
    def forward(self, x: Tensor) -> Tensor:
        out = self.linear2(torch.relu(self.linear1(x)))
        return F.layer_norm(out, out.shape[-1:])  # the Add & Norm normalisation


class FFNMixesPositions(_Base):
    def forward(self, x: Tensor) -> Tensor:
        hidden = torch.relu(self.linear1(x))
        hidden = hidden - hidden.mean(dim=1, keepdim=True)  # centre the hidden units
        return self.linear2(hidden)


# ---------------------------------------------------------------- correct variants


class FFNSequential(nn.Module):
    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.act = nn.ReLU()
        self.drop = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.drop(self.act(self.linear1(x))))


class FFNFunctional(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = F.linear(x, self.linear1.weight, self.linear1.bias).clamp_min(0.0)
        return F.linear(h, self.linear2.weight, self.linear2.bias)


class FFNFlatInPlace(_Base):
    def forward(self, x: Tensor) -> Tensor:
        flat = x.reshape(-1, x.shape[-1])  # (B*T, D): every position is a row
        hidden = self.linear1(flat)
        hidden.relu_()  # in place on its own temporary
        return self.linear2(hidden).reshape(x.shape)


CASES = [
    BlindCase(CHECK, "no_relu", FFNNoRelu, "mistake", "I forgot the ReLU between the layers."),
    BlindCase(CHECK, "relu_twice", FFNReluTwice, "mistake", "I put a ReLU after linear2 as well."),
    BlindCase(
        CHECK,
        "relu_at_end",
        FFNReluAtEnd,
        "mistake",
        "I put the ReLU after linear2 instead of between the layers.",
    ),
    BlindCase(
        CHECK,
        "relu_on_input",
        FFNReluOnInput,
        "mistake",
        "I applied the ReLU to the input before linear1.",
    ),
    BlindCase(CHECK, "gelu", FFNGelu, "mistake", "I used GELU instead of ReLU."),
    BlindCase(
        CHECK,
        "residual_inside",
        FFNResidual,
        "mistake",
        "I added the input back (the residual) inside the feed-forward module.",
    ),
    BlindCase(
        CHECK,
        "always_dropout",
        FFNAlwaysDropout,
        "mistake",
        "I used F.dropout(h, 0.1) without training=self.training, so it always drops.",
    ),
    BlindCase(
        CHECK,
        "norm_inside",
        FFNNormInside,
        "mistake",
        "I layer-normalised the output inside the module.",
    ),
    BlindCase(
        CHECK,
        "mixes_positions",
        FFNMixesPositions,
        "mistake",
        "I centred the hidden units over dim 1, the positions, so positions influence each other.",
    ),
    BlindCase(
        CHECK,
        "sequential_parts",
        FFNSequential,
        "correct",
        "ReLU and Dropout modules as extra attributes, dropout 0 by default.",
    ),
    BlindCase(
        CHECK,
        "functional_clamp",
        FFNFunctional,
        "correct",
        "F.linear with the layers' weights and clamp_min(0) as the ReLU.",
    ),
    BlindCase(
        CHECK,
        "flat_rows_relu_",
        FFNFlatInPlace,
        "correct",
        "Flattened to (B*T, D) rows and back; relu_ in place on its own hidden tensor.",
    ),
]
