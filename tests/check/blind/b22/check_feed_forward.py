"""Blind set B22, check_feed_forward (chapter 11): the position-wise feed-forward network as
readers write it."""

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


class FFNoRelu(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(x))


class FFReluTwice(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(torch.relu(self.linear1(x))))


class FFReluAtEnd(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(self.linear1(x)))


class FFGelu(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.gelu(self.linear1(x)))


class FFSigmoid(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.sigmoid(self.linear1(x)))


class FFReluOnInput(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(torch.relu(x)))


class FFDropout(_Base):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__(d_model, d_ff)
        self.dropout = nn.Dropout(0.1)  # the paper's rate

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(torch.relu(self.linear1(x))))


class FFResidualInside(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return x + self.linear2(torch.relu(self.linear1(x)))  # the residual belongs here, I thought


class FFAddNormInside(_Base):
    def forward(self, x: Tensor) -> Tensor:
        out = self.linear2(torch.relu(self.linear1(x)))
        return F.layer_norm(x + out, (x.shape[-1],))


class FFLinear1NoBias(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff, bias=False)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFSwappedSizes(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_ff, d_model)  # (out, in) order, I thought
        self.linear2 = nn.Linear(d_model, d_ff)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFMixesPositions(_Base):
    def forward(self, x: Tensor) -> Tensor:
        hidden = torch.relu(self.linear1(x))
        hidden = hidden - hidden.mean(dim=1, keepdim=True)  # centre the hidden features
        return self.linear2(hidden)


class FFReturnsHidden(_Base):
    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        hidden = torch.relu(self.linear1(x))
        return self.linear2(hidden), hidden


# ---------------------------------------------------------------- correct variants


class FFFlatten(_Base):
    def forward(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        flat = x.reshape(B * T, D)
        return self.linear2(F.relu(self.linear1(flat))).view(B, T, D)


class FFClampInPlace(nn.Module):
    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        hidden = self.linear1(x).clamp_(min=0)  # relu in place on a fresh tensor
        return self.linear2(self.dropout(hidden))


class FFFunctionalPerPosition(_Base):
    def forward(self, x: Tensor) -> Tensor:
        outs = []
        for t in range(x.shape[1]):
            h = F.linear(x[:, t], self.linear1.weight, self.linear1.bias).relu()
            outs.append(F.linear(h, self.linear2.weight, self.linear2.bias))
        return torch.stack(outs, dim=1)


CASES = [
    BlindCase(CHECK, "no_relu", FFNoRelu, "mistake", "I forgot the ReLU between the layers."),
    BlindCase(CHECK, "relu_twice", FFReluTwice, "mistake", "I also put a ReLU after linear2."),
    BlindCase(
        CHECK,
        "relu_at_end",
        FFReluAtEnd,
        "mistake",
        "I put the ReLU after linear2 instead of between the layers.",
    ),
    BlindCase(CHECK, "gelu", FFGelu, "mistake", "I used GELU (as in BERT) instead of ReLU."),
    BlindCase(CHECK, "sigmoid", FFSigmoid, "mistake", "I used a sigmoid as the activation."),
    BlindCase(
        CHECK,
        "relu_on_input",
        FFReluOnInput,
        "mistake",
        "I applied the ReLU to the input, before linear1.",
    ),
    BlindCase(
        CHECK,
        "dropout_0_1",
        FFDropout,
        "mistake",
        "I added the paper's dropout of 0.1, so training-mode outputs are random.",
    ),
    BlindCase(
        CHECK,
        "residual_inside",
        FFResidualInside,
        "mistake",
        "I added the residual x inside the feed-forward block.",
    ),
    BlindCase(
        CHECK,
        "add_norm_inside",
        FFAddNormInside,
        "mistake",
        "I did Add & Norm inside the feed-forward block.",
    ),
    BlindCase(
        CHECK, "linear1_no_bias", FFLinear1NoBias, "mistake", "I made linear1 without a bias."
    ),
    BlindCase(
        CHECK,
        "swapped_sizes",
        FFSwappedSizes,
        "mistake",
        "I wrote nn.Linear(d_ff, d_model) for linear1 (out, in order).",
    ),
    BlindCase(
        CHECK,
        "mixes_positions",
        FFMixesPositions,
        "mistake",
        "I centered the hidden features over the positions.",
    ),
    BlindCase(CHECK, "returns_hidden", FFReturnsHidden, "mistake", "I returned (output, hidden)."),
    BlindCase(CHECK, "flatten", FFFlatten, "correct", "Flatten (B*T, D), apply, view back."),
    BlindCase(
        CHECK,
        "clamp_in_place",
        FFClampInPlace,
        "correct",
        "clamp_(min=0) on linear1's output; optional dropout defaulting to 0.",
    ),
    BlindCase(
        CHECK,
        "functional_per_position",
        FFFunctionalPerPosition,
        "correct",
        "A loop over positions with F.linear.",
    ),
]
