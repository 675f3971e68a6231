"""Blind set B13, check_feed_forward (chapter 11): the position-wise feed-forward network."""

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


class FFNReluAtEnd(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(self.linear1(x)))


class FFNReluTwice(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return F.relu(self.linear2(F.relu(self.linear1(x))))


class FFNGelu(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.gelu(self.linear1(x)))  # what BERT uses


class FFNReluOnInput(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(torch.relu(x)))


class FFNFlattenAfterTranspose(_Base):
    def forward(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        flat = x.transpose(1, 2).reshape(B * T, D)  # rows for nn.Linear
        out = self.linear2(torch.relu(self.linear1(flat)))
        return out.reshape(B, T, D)


class FFNResidualInside(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return x + self.linear2(torch.relu(self.linear1(x)))  # the Add of Add & Norm


class FFNLayerNormInside(_Base):
    def forward(self, x: Tensor) -> Tensor:
        out = self.linear2(torch.relu(self.linear1(x)))
        return F.layer_norm(out, out.shape[-1:])


class FFNNoBias(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff, bias=False)  # like the attention projections
        self.linear2 = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFNMixesPositions(_Base):
    def forward(self, x: Tensor) -> Tensor:
        hidden = torch.relu(self.linear1(x))
        hidden = hidden - hidden.mean(dim=1, keepdim=True)  # centre each feature
        return self.linear2(hidden)


class FFNSigmoid(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.sigmoid(self.linear1(x)))


# ---------------------------------------------------------------- correct variants


class FFNSequential(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.net = nn.Sequential(self.linear1, nn.ReLU(), self.linear2)  # the same modules

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)


class FFNFunctional(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = F.linear(x, self.linear1.weight, self.linear1.bias).clamp(min=0)
        return F.linear(h, self.linear2.weight, self.linear2.bias)


class FFNWithOptions(nn.Module):
    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0, activation=F.relu) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)
        self.activation = activation

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(self.activation(self.linear1(x))))


class FFNInPlaceRelu(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = self.linear1(x)
        h.relu_()  # in place on my own temporary
        return self.linear2(h)


CASES = [
    BlindCase(CHECK, "no_relu", FFNNoRelu, "mistake", "I forgot the ReLU between the layers."),
    BlindCase(
        CHECK,
        "relu_at_end",
        FFNReluAtEnd,
        "mistake",
        "I put the ReLU after linear2 instead of between.",
    ),
    BlindCase(CHECK, "relu_twice", FFNReluTwice, "mistake", "I applied a ReLU after both layers."),
    BlindCase(CHECK, "gelu", FFNGelu, "mistake", "I used GELU instead of ReLU."),
    BlindCase(
        CHECK, "relu_on_input", FFNReluOnInput, "mistake", "I applied the ReLU to x before linear1."
    ),
    BlindCase(
        CHECK,
        "flatten_after_transpose",
        FFNFlattenAfterTranspose,
        "mistake",
        "I flattened with x.transpose(1, 2).reshape(B * T, D), mixing positions and features.",
    ),
    BlindCase(
        CHECK,
        "residual_inside",
        FFNResidualInside,
        "mistake",
        "I added the residual x inside the feed-forward module.",
    ),
    BlindCase(
        CHECK,
        "layer_norm_inside",
        FFNLayerNormInside,
        "mistake",
        "I normalised the output with a LayerNorm inside the module.",
    ),
    BlindCase(CHECK, "no_bias", FFNNoBias, "mistake", "I made both linear layers bias=False."),
    BlindCase(
        CHECK,
        "centred_over_positions",
        FFNMixesPositions,
        "mistake",
        "I centred the hidden features over the positions (dim=1) before linear2.",
    ),
    BlindCase(CHECK, "sigmoid", FFNSigmoid, "mistake", "I used a sigmoid as the activation."),
    BlindCase(
        CHECK,
        "sequential_shared",
        FFNSequential,
        "correct",
        "An nn.Sequential built from the same linear1 and linear2 modules.",
    ),
    BlindCase(
        CHECK,
        "functional_clamp",
        FFNFunctional,
        "correct",
        "F.linear with the layers' weights and clamp(min=0) as the ReLU.",
    ),
    BlindCase(
        CHECK,
        "options",
        FFNWithOptions,
        "correct",
        "Extra dropout (0) and activation (relu) arguments with defaults.",
    ),
    BlindCase(
        CHECK,
        "in_place_relu",
        FFNInPlaceRelu,
        "correct",
        "relu_ in place on the hidden activations.",
    ),
]
