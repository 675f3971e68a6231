"""Blind set B33, check_feed_forward (chapter 11): the position-wise feed-forward network as
readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_feed_forward"


class _Base(nn.Module):
    """The two layers as the skeleton asks; each mistake overrides only forward."""

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
        return torch.relu(self.linear2(torch.relu(self.linear1(x))))  # a ReLU after each layer


class FFNReluFirst(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(torch.relu(x)))


class FFNGelu(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.gelu(self.linear1(x)))  # what BERT and GPT use


class FFNScrambledReshape(_Base):
    def forward(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        flat = x.reshape(B * T, D)  # every position a row
        out = self.linear2(torch.relu(self.linear1(flat)))
        return out.reshape(T, B, D).transpose(0, 1)  # back to (B, T, D)


class FFNWithResidual(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return x + self.linear2(torch.relu(self.linear1(x)))  # Add


class FFNWithLayerNorm(_Base):
    def forward(self, x: Tensor) -> Tensor:
        y = x + self.linear2(torch.relu(self.linear1(x)))
        return F.layer_norm(y, y.shape[-1:])  # Add & Norm


class FFNNoBiasSecond(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model, bias=False)  # the next LayerNorm recentres

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFNDropout(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(0.1)  # as in the paper

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(torch.relu(self.linear1(x))))


class FFNSwappedSizes(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_ff, d_model)
        self.linear2 = nn.Linear(d_model, d_ff)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFNReturnsHidden(_Base):
    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        hidden = torch.relu(self.linear1(x))
        return self.linear2(hidden), hidden  # the hidden layer too, to look at


class FFNMeanOverPositions(_Base):
    def forward(self, x: Tensor) -> Tensor:
        hidden = torch.relu(self.linear1(x))
        hidden = hidden - hidden.mean(dim=1, keepdim=True)  # centre the hidden features
        return self.linear2(hidden)


# ---------------------------------------------------------------- correct variants


class FFNInplaceRelu(_Base):
    """ReLU in place on linear1's fresh output."""

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.relu(self.linear1(x), inplace=True))


class FFNClampFunctional(_Base):
    """F.linear with the layers' weights, and clamp(min=0) as the ReLU."""

    def forward(self, x: Tensor) -> Tensor:
        h = F.linear(x, self.linear1.weight, self.linear1.bias).clamp(min=0)
        return F.linear(h, self.linear2.weight, self.linear2.bias)


class FFNWithOptionalDropout(nn.Module):
    """A dropout argument that defaults to 0, and an nn.ReLU module between the layers."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.act = nn.ReLU()
        self.drop = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.drop(self.act(self.linear1(x))))


class FFNFlattenPositions(_Base):
    """Positions flattened to rows and the shape restored with view_as."""

    def forward(self, x: Tensor) -> Tensor:
        rows = x.reshape(-1, x.shape[-1])
        return self.linear2(torch.relu(self.linear1(rows))).view_as(x)


CASES = [
    BlindCase(CHECK, "no_relu", FFNNoRelu, "mistake", "I forgot the ReLU between the two layers."),
    BlindCase(
        CHECK,
        "relu_at_end",
        FFNReluAtEnd,
        "mistake",
        "I put a ReLU after each of the two layers.",
    ),
    BlindCase(
        CHECK,
        "relu_first",
        FFNReluFirst,
        "mistake",
        "I applied the ReLU to the input before linear1.",
    ),
    BlindCase(
        CHECK, "gelu", FFNGelu, "mistake", "I used GELU instead of ReLU, as BERT and GPT do."
    ),
    BlindCase(
        CHECK,
        "scrambled_reshape",
        FFNScrambledReshape,
        "mistake",
        "I flattened to (B*T, D) and came back with reshape(T, B, D).transpose(0, 1).",
    ),
    BlindCase(
        CHECK,
        "with_residual",
        FFNWithResidual,
        "mistake",
        "I added the input back (the residual) inside the feed-forward module.",
    ),
    BlindCase(
        CHECK,
        "with_layer_norm",
        FFNWithLayerNorm,
        "mistake",
        "I did the whole Add & Norm inside the module: layer_norm(x + FFN(x)).",
    ),
    BlindCase(
        CHECK,
        "no_bias_second",
        FFNNoBiasSecond,
        "mistake",
        "I made linear2 bias-free, since a LayerNorm follows anyway.",
    ),
    BlindCase(
        CHECK,
        "dropout",
        FFNDropout,
        "mistake",
        "I added dropout 0.1 on the hidden layer, as in the paper.",
    ),
    BlindCase(
        CHECK,
        "swapped_sizes",
        FFNSwappedSizes,
        "mistake",
        "I wrote nn.Linear(d_ff, d_model) for linear1 and nn.Linear(d_model, d_ff) for linear2.",
    ),
    BlindCase(
        CHECK,
        "returns_hidden",
        FFNReturnsHidden,
        "mistake",
        "My forward returns the output and the hidden activations.",
    ),
    BlindCase(
        CHECK,
        "mean_over_positions",
        FFNMeanOverPositions,
        "mistake",
        "I centred the hidden activations by subtracting their mean over dim=1.",
    ),
    BlindCase(
        CHECK,
        "inplace_relu",
        FFNInplaceRelu,
        "correct",
        "F.relu(..., inplace=True) on the output of linear1.",
    ),
    BlindCase(
        CHECK,
        "clamp_functional",
        FFNClampFunctional,
        "correct",
        "F.linear with the layers' own weights, and clamp(min=0) for the ReLU.",
    ),
    BlindCase(
        CHECK,
        "optional_dropout",
        FFNWithOptionalDropout,
        "correct",
        "An nn.ReLU module and a dropout argument with default 0.",
    ),
    BlindCase(
        CHECK,
        "flatten_positions",
        FFNFlattenPositions,
        "correct",
        "The positions flattened to rows of D and the output viewed back as x's shape.",
    ),
]
