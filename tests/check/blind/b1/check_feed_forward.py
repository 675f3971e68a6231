"""Blind cases for check_feed_forward (chapter 11)."""

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


class FFNoReLU(_Base):
    def forward(self, x):
        return self.linear2(self.linear1(x))


class FFReLUAfter(_Base):
    def forward(self, x):
        return torch.relu(self.linear2(self.linear1(x)))


class FFReLUBoth(_Base):
    def forward(self, x):
        return torch.relu(self.linear2(torch.relu(self.linear1(x))))


class FFGelu(_Base):
    def forward(self, x):
        return self.linear2(F.gelu(self.linear1(x)))


class FFMixesPositions(_Base):
    def forward(self, x):
        h = torch.relu(self.linear1(x))
        h = h + h.mean(dim=1, keepdim=True)  # "context" from the other positions
        return self.linear2(h)


class FFFlattenTime(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        B, T, D = x.shape
        h = torch.relu(self.linear1(x))  # (B, T, d_ff)
        h = h.transpose(1, 2).reshape(B, T, -1)  # reshape after a transpose: mixes positions
        return self.linear2(h)


class FFResidual(_Base):
    def forward(self, x):
        return x + self.linear2(torch.relu(self.linear1(x)))  # adds the residual inside


class FFNoBias(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff, bias=False)
        self.linear2 = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x):
        return self.linear2(torch.relu(self.linear1(x)))


class FFInPlaceReLU(_Base):
    def forward(self, x):
        h = self.linear1(x)
        return self.linear2(h.clamp_(max=0))  # clamp max instead of min


class FFSequential(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        return self.net(x)


class FFLoopPositions(_Base):
    def forward(self, x: Tensor) -> Tensor:
        outs = [self.linear2(F.relu(self.linear1(x[:, t]))) for t in range(x.shape[1])]
        return torch.stack(outs, dim=1)


class FFInPlaceDropout(nn.Module):
    def __init__(
        self, d_model: int, d_ff: int, dropout: float = 0.0, activation: str = "relu"
    ) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.act = nn.ReLU(inplace=True) if activation == "relu" else nn.GELU()
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(self.act(self.linear1(x))))


class FFConv1d(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x: Tensor) -> Tensor:
        # a kernel-size-1 convolution over time is the same map at every position
        h = F.conv1d(x.transpose(1, 2), self.linear1.weight[:, :, None], self.linear1.bias)
        h = torch.clamp(h, min=0)
        y = F.conv1d(h, self.linear2.weight[:, :, None], self.linear2.bias)
        return y.transpose(1, 2)


CASES = [
    BlindCase(
        CHECK, "no_relu", FFNoReLU, "mistake", "forgets the ReLU between the two linear layers"
    ),
    BlindCase(
        CHECK,
        "relu_after_linear2",
        FFReLUAfter,
        "mistake",
        "puts the ReLU after linear2 instead of between the layers",
    ),
    BlindCase(CHECK, "relu_twice", FFReLUBoth, "mistake", "applies a ReLU after both layers"),
    BlindCase(
        CHECK, "gelu_not_relu", FFGelu, "mistake", "uses GELU (as in GPT/BERT) instead of ReLU"
    ),
    BlindCase(
        CHECK,
        "adds_mean_over_positions",
        FFMixesPositions,
        "mistake",
        "adds the mean over the positions to each hidden vector, so positions influence each other",
    ),
    BlindCase(
        CHECK,
        "transpose_reshape_mixes",
        FFFlattenTime,
        "mistake",
        "transposes the hidden tensor and reshapes it back, scrambling features across positions",
    ),
    BlindCase(
        CHECK,
        "residual_inside",
        FFResidual,
        "mistake",
        "adds the residual x inside the feed-forward module",
    ),
    BlindCase(
        CHECK, "no_biases", FFNoBias, "mistake", "creates both linear layers with bias=False"
    ),
    BlindCase(
        CHECK,
        "clamp_max_instead_of_min",
        FFInPlaceReLU,
        "mistake",
        "writes the ReLU as clamp_(max=0) instead of clamp(min=0)",
    ),
    BlindCase(
        CHECK,
        "slip_sequential_without_names",
        FFSequential,
        "mistake",
        "builds an nn.Sequential called net, so there are no linear1 and linear2 layers",
    ),
    BlindCase(
        CHECK,
        "loop_over_positions",
        FFLoopPositions,
        "correct",
        "applies the two layers to one position at a time in a loop and stacks the results",
    ),
    BlindCase(
        CHECK,
        "inplace_relu_dropout_defaults",
        FFInPlaceDropout,
        "correct",
        "uses nn.ReLU(inplace=True) and adds optional dropout and activation arguments",
    ),
    BlindCase(
        CHECK,
        "conv1d_kernel_one",
        FFConv1d,
        "correct",
        "applies the layers' weights as kernel-size-1 conv1d over time",
    ),
]
