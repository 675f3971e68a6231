"""Blind set B34, check_feed_forward (chapter 11): the position-wise feed-forward network."""

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


class FFReluBeforeFirst(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(torch.relu(x)))


class FFGelu(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.gelu(self.linear1(x)))  # GELU, as in BERT


class FFResidual(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return x + self.linear2(torch.relu(self.linear1(x)))  # the residual belongs here


class FFMixesPositions(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = torch.relu(self.linear1(x))
        h = h.mean(dim=1, keepdim=True).expand_as(h)  # pool over the sequence
        return self.linear2(h)


class FFFlattensSequence(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        h = torch.relu(self.linear1(x)).transpose(1, 2).reshape(B, T, -1)  # (B, T, d_ff)?
        return self.linear2(h)


class FFSoftmaxHidden(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.softmax(self.linear1(x), dim=-1))


class FFNoBias(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff, bias=False)  # biases are redundant with LayerNorm
        self.linear2 = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFInplaceRelu(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu_(x @ self.linear1.weight + self.linear1.bias))


class FFDropoutTrain(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = F.dropout(torch.relu(self.linear1(x)), p=0.1)  # training=True by default
        return self.linear2(h)


class FFTanh(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.tanh(self.linear1(x)))


# ---------------------------------------------------------------- correct variants


class FFSequential(nn.Module):
    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.relu = nn.ReLU()
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(self.relu(self.linear1(x))))


class FFFunctional(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = F.linear(x, self.linear1.weight, self.linear1.bias).clamp(min=0)
        return F.linear(h, self.linear2.weight, self.linear2.bias)


class FFPerPositionLoop(_Base):
    def forward(self, x: Tensor) -> Tensor:
        outs = [self.linear2(F.relu(self.linear1(x[:, t]))) for t in range(x.shape[1])]
        return torch.stack(outs, dim=1)


class FFInplaceOwnHidden(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = self.linear1(x)
        h.relu_()  # in place on my own hidden tensor
        return self.linear2(h)


CASES = [
    BlindCase(CHECK, "no_relu", FFNoRelu, "mistake", "I forgot the ReLU between the layers"),
    BlindCase(
        CHECK,
        "relu_at_end",
        FFReluAtEnd,
        "mistake",
        "I put the ReLU after linear2 instead of between",
    ),
    BlindCase(CHECK, "relu_twice", FFReluTwice, "mistake", "I applied a ReLU after both layers"),
    BlindCase(
        CHECK,
        "relu_on_input",
        FFReluBeforeFirst,
        "mistake",
        "I applied the ReLU to the input before linear1",
    ),
    BlindCase(CHECK, "gelu", FFGelu, "mistake", "I used GELU instead of ReLU"),
    BlindCase(
        CHECK,
        "residual_inside",
        FFResidual,
        "mistake",
        "I added the input back inside the feed-forward network",
    ),
    BlindCase(
        CHECK,
        "mean_over_positions",
        FFMixesPositions,
        "mistake",
        "I averaged the hidden vectors over the sequence",
    ),
    BlindCase(
        CHECK,
        "transpose_reshape",
        FFFlattensSequence,
        "mistake",
        "I transposed the hidden to (B, d_ff, T) and reshaped it back wrongly",
    ),
    BlindCase(
        CHECK,
        "softmax_hidden",
        FFSoftmaxHidden,
        "mistake",
        "I used a softmax as the activation of the hidden layer",
    ),
    BlindCase(CHECK, "no_biases", FFNoBias, "mistake", "I made both layers bias-free"),
    BlindCase(
        CHECK,
        "weight_not_transposed",
        FFInplaceRelu,
        "mistake",
        "I wrote x @ linear1.weight + bias myself, without transposing the weight",
    ),
    BlindCase(
        CHECK,
        "functional_dropout",
        FFDropoutTrain,
        "mistake",
        "I added F.dropout(p=0.1) on the hidden layer, which drops even in eval",
    ),
    BlindCase(CHECK, "tanh", FFTanh, "mistake", "I used tanh as the activation"),
    BlindCase(
        CHECK,
        "sequential_with_dropout",
        FFSequential,
        "correct",
        "I added nn.ReLU and nn.Dropout modules with dropout 0 by default",
    ),
    BlindCase(
        CHECK,
        "functional_clamp",
        FFFunctional,
        "correct",
        "I used F.linear with the layers' weights and clamp(min=0) as the ReLU",
    ),
    BlindCase(
        CHECK,
        "loop_positions",
        FFPerPositionLoop,
        "correct",
        "I ran the network on each position in a loop and stacked",
    ),
    BlindCase(
        CHECK,
        "inplace_relu_own",
        FFInplaceOwnHidden,
        "correct",
        "I applied relu_ in place on the hidden tensor I had just made",
    ),
]
