"""Chapter 11, "Your turn": ``MyFeedForward(d_model, d_ff)``, ``linear2(relu(linear1(x)))``.

``linear1`` (d_model -> d_ff) and ``linear2`` (d_ff -> d_model), both with a bias; x ``(B, T, D)``.
"""

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


# --- mistakes ---------------------------------------------------------------------------------


class ReluOnOutputToo(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(torch.relu(self.linear1(x))))


class GeluLikeBert(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.gelu(self.linear1(x)))


class ReluBeforeFirstLayer(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(torch.relu(x)))


class ResidualInside(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return x + self.linear2(torch.relu(self.linear1(x)))  # the skip connection


class TimeMajorFlatten(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        rows = x.transpose(0, 1).reshape(B * T, D)  # one row per (t, b)
        out = self.linear2(torch.relu(self.linear1(rows)))
        return out.reshape(B, T, D)  # read back as one row per (b, t)


class SecondLayerWithoutBias(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class ArgumentsSwapped(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_ff, d_model)  # (out, in), I thought
        self.linear2 = nn.Linear(d_model, d_ff)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class NormalisedOutput(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        out = self.linear2(torch.relu(self.linear1(x)))
        return F.layer_norm(out, out.shape[-1:])  # a sublayer ends with a LayerNorm


class ReturnsHiddenToo(_Layers):
    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        hidden = torch.relu(self.linear1(x))
        return self.linear2(hidden), hidden  # the hidden activations, for plotting


class FunctionalDropoutAlwaysOn(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        hidden = F.dropout(torch.relu(self.linear1(x)), p=0.1)  # training=True by default
        return self.linear2(hidden)


# --- correct variants -------------------------------------------------------------------------


class ExplicitMatmuls(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        h = x @ self.linear1.weight.T + self.linear1.bias
        h = h.clamp(min=0)
        return h @ self.linear2.weight.T + self.linear2.bias


class SequentialInside(nn.Module):
    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.act = nn.ReLU()
        self.drop = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.drop(self.act(self.linear1(x))))


class PositionByPosition(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        outs = [self.linear2(F.relu(self.linear1(x[:, t]))) for t in range(x.shape[1])]
        return torch.stack(outs, dim=1)


CASES = [
    BlindCase(
        CHECK,
        "relu_on_output_too",
        ReluOnOutputToo,
        "mistake",
        "I also applied ReLU after linear2, so the output can never be negative.",
    ),
    BlindCase(
        CHECK,
        "gelu_like_bert",
        GeluLikeBert,
        "mistake",
        "I used GELU instead of ReLU between the two layers.",
    ),
    BlindCase(
        CHECK,
        "relu_before_first_layer",
        ReluBeforeFirstLayer,
        "mistake",
        "I applied the ReLU to the input before linear1 and none between the layers.",
    ),
    BlindCase(
        CHECK,
        "residual_inside",
        ResidualInside,
        "mistake",
        "I added the residual x inside the feed-forward module.",
    ),
    BlindCase(
        CHECK,
        "time_major_flatten",
        TimeMajorFlatten,
        "mistake",
        "I flattened x time-major with transpose(0, 1).reshape but reshaped back batch-major, "
        "which scrambles positions and sentences.",
    ),
    BlindCase(
        CHECK,
        "second_layer_without_bias",
        SecondLayerWithoutBias,
        "mistake",
        "I made linear2 bias-free.",
    ),
    BlindCase(
        CHECK,
        "arguments_swapped",
        ArgumentsSwapped,
        "mistake",
        "I gave nn.Linear its sizes in (out, in) order, so linear1 maps d_ff -> d_model.",
    ),
    BlindCase(
        CHECK,
        "normalised_output",
        NormalisedOutput,
        "mistake",
        "I ended the network with a LayerNorm of its output.",
    ),
    BlindCase(
        CHECK,
        "returns_hidden_too",
        ReturnsHiddenToo,
        "mistake",
        "My forward returns a pair (output, hidden activations) instead of the output alone.",
    ),
    BlindCase(
        CHECK,
        "functional_dropout_always_on",
        FunctionalDropoutAlwaysOn,
        "mistake",
        "I added F.dropout(hidden, p=0.1), which drops units on every call since F.dropout's "
        "training flag defaults to True.",
    ),
    BlindCase(
        CHECK,
        "explicit_matmuls",
        ExplicitMatmuls,
        "correct",
        "I multiplied by the layers' weights by hand and used clamp(min=0) as the ReLU.",
    ),
    BlindCase(
        CHECK,
        "sequential_inside",
        SequentialInside,
        "correct",
        "I used nn.ReLU and an nn.Dropout whose probability defaults to 0, as extra submodules.",
    ),
    BlindCase(
        CHECK,
        "position_by_position",
        PositionByPosition,
        "correct",
        "I applied the two layers to each position in a loop and stacked the results.",
    ),
]
