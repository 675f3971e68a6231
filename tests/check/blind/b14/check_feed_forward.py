"""Blind set B14, check_feed_forward (chapter 11): the position-wise feed-forward network."""

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


class FFNoReLU(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(x))


class FFReLUAtEnd(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(torch.relu(self.linear1(x))))  # a ReLU after each layer


class FFReLUFirst(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(torch.relu(x)))


class FFReLUOutputOnly(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(self.linear1(x)))


class FFGelu(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.gelu(self.linear1(x)))  # GELU, as in BERT


class FFResidual(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return x + self.linear2(torch.relu(self.linear1(x)))  # the residual belongs here


class FFDropoutAlwaysOn(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.dropout(torch.relu(self.linear1(x)), p=0.1))  # as in the paper


class FFNoBias(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff, bias=False)  # the paper writes W x
        self.linear2 = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFMixesPositions(_Base):
    def forward(self, x: Tensor) -> Tensor:
        hidden = torch.relu(self.linear1(x))  # (B, T, d_ff)
        hidden = hidden - hidden.mean(dim=1, keepdim=True)  # centre the hidden units
        return self.linear2(hidden)


class FFTransposedWeights(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = torch.relu(x @ self.linear1.weight.T + self.linear1.bias)
        return h @ self.linear2.weight.T  # forgot linear2's bias when writing it out


# ---------------------------------------------------------------- correct variants


class FFFunctional(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = F.linear(x, self.linear1.weight, self.linear1.bias).clamp_min(0.0)
        return F.linear(h, self.linear2.weight, self.linear2.bias)


class FFWithDropout(nn.Module):
    """An extra dropout argument defaulting to 0, as in the book's module; in-place ReLU."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        h = self.linear1(x)
        F.relu(h, inplace=True)
        return self.linear2(self.dropout(h))


class FFFlattened(_Base):
    def forward(self, x: Tensor) -> Tensor:
        shape = x.shape
        flat = x.reshape(-1, shape[-1])  # every position as its own row
        h = torch.where(self.linear1(flat) > 0, self.linear1(flat), 0.0)
        return self.linear2(h).reshape(shape)


CASES = [
    BlindCase(CHECK, "no_relu", FFNoReLU, "mistake", "I forgot the ReLU between the layers."),
    BlindCase(
        CHECK,
        "relu_after_each",
        FFReLUAtEnd,
        "mistake",
        "I put a ReLU after each linear layer, the output too.",
    ),
    BlindCase(
        CHECK,
        "relu_first",
        FFReLUFirst,
        "mistake",
        "I applied the ReLU to the input before linear1.",
    ),
    BlindCase(
        CHECK,
        "relu_on_output_only",
        FFReLUOutputOnly,
        "mistake",
        "I applied the ReLU only at the end, after linear2.",
    ),
    BlindCase(CHECK, "gelu", FFGelu, "mistake", "I used GELU instead of ReLU."),
    BlindCase(
        CHECK,
        "adds_residual",
        FFResidual,
        "mistake",
        "I added the residual x inside the feed-forward network.",
    ),
    BlindCase(
        CHECK,
        "dropout_always_on",
        FFDropoutAlwaysOn,
        "mistake",
        "I called F.dropout(p=0.1), which drops units even in eval mode.",
    ),
    BlindCase(CHECK, "no_bias", FFNoBias, "mistake", "I made both linear layers bias-free."),
    BlindCase(
        CHECK,
        "centres_over_positions",
        FFMixesPositions,
        "mistake",
        "I subtracted the mean over positions from the hidden units, so positions mix.",
    ),
    BlindCase(
        CHECK,
        "forgot_second_bias",
        FFTransposedWeights,
        "mistake",
        "I wrote the layers out with the weights and forgot linear2's bias.",
    ),
    BlindCase(CHECK, "functional", FFFunctional, "correct", "F.linear and clamp_min(0)."),
    BlindCase(
        CHECK,
        "with_dropout",
        FFWithDropout,
        "correct",
        "An extra dropout argument defaulting to 0; F.relu in place on the hidden layer.",
    ),
    BlindCase(
        CHECK,
        "flattened",
        FFFlattened,
        "correct",
        "Positions flattened into rows, torch.where for the ReLU, reshaped back.",
    ),
]
