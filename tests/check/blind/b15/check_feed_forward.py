"""Blind set B15, check_feed_forward (chapter 11): the position-wise feed-forward network."""

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


class FFReluAtEnd(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(self.linear1(x)))


class FFReluTwice(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(torch.relu(self.linear1(x))))


class FFReluFirst(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(torch.relu(x)))


class FFGelu(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.gelu(self.linear1(x)))  # as in BERT


class FFResidual(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return x + self.linear2(torch.relu(self.linear1(x)))


class FFAlwaysDropout(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.dropout(torch.relu(self.linear1(x)), p=0.1))  # training=True


class FFNoBias1(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff, bias=False)
        self.linear2 = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFMixesPositions(_Base):
    def forward(self, x: Tensor) -> Tensor:
        hidden = torch.relu(self.linear1(x))
        hidden = hidden.softmax(dim=1)  # normalise the hidden units... over dim 1
        return self.linear2(hidden)


class FFTimeAxis(_Base):
    def forward(self, x: Tensor) -> Tensor:
        flat = x.transpose(0, 1).reshape(-1, x.shape[-1])  # (T*B, D)
        out = self.linear2(torch.relu(self.linear1(flat)))
        return out.reshape(x.shape)  # back as (B, T, D), rows in the wrong order


# ---------------------------------------------------------------- correct variants


class FFFunctional(_Base):
    """F.linear with the layers' weights and clamp_min(0) as the ReLU."""

    def forward(self, x: Tensor) -> Tensor:
        h = F.linear(x, self.linear1.weight, self.linear1.bias).clamp_min(0)
        return F.linear(h, self.linear2.weight, self.linear2.bias)


class FFFlatten(_Base):
    """Flattens (B, T) into rows and back; an extra dropout argument with default 0."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__(d_model, d_ff)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        rows = x.reshape(-1, x.shape[-1])
        out = self.linear2(self.dropout(F.relu(self.linear1(rows))))
        return out.view(*x.shape[:-1], -1)


class FFMatmul(_Base):
    """Explicit matmuls with the transposed weights; nn.ReLU module; a hidden() helper."""

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__(d_model, d_ff)
        self.act = nn.ReLU()

    def hidden(self, x: Tensor) -> Tensor:
        return self.act(x @ self.linear1.weight.T + self.linear1.bias)

    def forward(self, x: Tensor) -> Tensor:
        return self.hidden(x) @ self.linear2.weight.T + self.linear2.bias


CASES = [
    BlindCase(CHECK, "no_relu", FFNoRelu, "mistake", "I forgot the ReLU."),
    BlindCase(
        CHECK,
        "relu_at_end",
        FFReluAtEnd,
        "mistake",
        "I put the ReLU after linear2 instead of between the layers.",
    ),
    BlindCase(CHECK, "relu_twice", FFReluTwice, "mistake", "I put a ReLU after both layers."),
    BlindCase(
        CHECK,
        "relu_on_input",
        FFReluFirst,
        "mistake",
        "I applied the ReLU to the input before linear1.",
    ),
    BlindCase(CHECK, "gelu", FFGelu, "mistake", "I used GELU instead of ReLU."),
    BlindCase(
        CHECK,
        "residual_inside",
        FFResidual,
        "mistake",
        "I added the residual x inside the feed-forward module.",
    ),
    BlindCase(
        CHECK,
        "dropout_always_on",
        FFAlwaysDropout,
        "mistake",
        "I used F.dropout(p=0.1) without training=self.training, so it is always on.",
    ),
    BlindCase(CHECK, "no_biases", FFNoBias1, "mistake", "I built both layers with bias=False."),
    BlindCase(
        CHECK,
        "softmax_over_positions",
        FFMixesPositions,
        "mistake",
        "I normalised the hidden layer with a softmax over dim=1, the positions.",
    ),
    BlindCase(
        CHECK,
        "time_major_flatten",
        FFTimeAxis,
        "mistake",
        "I flattened time-major and reshaped back batch-major, mixing positions.",
    ),
    BlindCase(
        CHECK,
        "functional_clamp",
        FFFunctional,
        "correct",
        "F.linear with the layers' weights; clamp_min(0) as the ReLU.",
    ),
    BlindCase(
        CHECK,
        "flatten_rows",
        FFFlatten,
        "correct",
        "Rows flattened and reshaped back; extra dropout argument, default 0.",
    ),
    BlindCase(
        CHECK,
        "explicit_matmul",
        FFMatmul,
        "correct",
        "x @ W^T + b by hand; nn.ReLU module; a hidden() helper.",
    ),
]
