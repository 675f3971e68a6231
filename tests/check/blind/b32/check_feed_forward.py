"""Blind set B32, check_feed_forward (chapter 11): the position-wise feed-forward network."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_feed_forward"


class _Base(nn.Module):
    """The two layers under the book's names; forward differs from class to class."""

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)


# ---------------------------------------------------------------- mistakes


class FFNGelu(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.gelu(self.linear1(x)))  # what BERT and GPT use


class FFNSigmoid(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.sigmoid(self.linear1(x)))


class FFNLeakyRelu(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.leaky_relu(self.linear1(x)))  # "avoids dead units"


class FFNReluAtEnd(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(self.linear1(x)))  # ReLU after the second layer


class FFNReluTwice(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(torch.relu(self.linear1(x))))


class FFNReluOnInput(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(torch.relu(x)))


class FFNResidualInside(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return x + self.linear2(torch.relu(self.linear1(x)))  # the Add of Add & Norm


class FFNLayerNormInside(_Base):
    def forward(self, x: Tensor) -> Tensor:
        y = self.linear2(torch.relu(self.linear1(x)))
        return F.layer_norm(y, y.shape[-1:])  # normalize as the sublayer does


class FFNTransposeReshape(_Base):
    def forward(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        flat = x.transpose(1, 2).reshape(B * T, D)  # meant to flatten the positions
        out = self.linear2(torch.relu(self.linear1(flat)))
        return out.reshape(B, D, T).transpose(1, 2)


class FFNMeanOverPositions(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = torch.relu(self.linear1(x))
        h = h - h.mean(dim=1, keepdim=True)  # center the hidden units over the sentence
        return self.linear2(h)


class FFNNoSecondBias(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model, bias=False)  # a bias after the ReLU is redundant

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFNReturnsHidden(_Base):
    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        h = torch.relu(self.linear1(x))
        return self.linear2(h), h  # the hidden activations, to look at


class FFNTrainingDropout(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = F.dropout(torch.relu(self.linear1(x)), p=0.1)  # F.dropout defaults to training=True
        return self.linear2(h)


class FFNReluInPlaceOnInput(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = self.linear1(x)
        x.relu_()  # slip: meant h.relu_()
        return self.linear2(torch.relu(h))


# ---------------------------------------------------------------- correct variants


class FFNInPlaceRelu(nn.Module):
    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        h = self.linear1(x)
        F.relu(h, inplace=True)  # on my own hidden tensor
        return self.linear2(self.dropout(h))


class FFNManualClamp(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = (x @ self.linear1.weight.T + self.linear1.bias).clamp(min=0)
        return torch.addmm(
            self.linear2.bias, h.reshape(-1, h.shape[-1]), self.linear2.weight.T
        ).reshape(*x.shape[:-1], -1)


class FFNConv1x1(_Base):
    def forward(self, x: Tensor) -> Tensor:
        xc = x.transpose(1, 2)  # (B, D, T): positions as the length axis
        h = F.conv1d(xc, self.linear1.weight.unsqueeze(-1), self.linear1.bias).relu()
        out = F.conv1d(h, self.linear2.weight.unsqueeze(-1), self.linear2.bias)
        return out.transpose(1, 2)


class FFNPerPositionLoop(_Base):
    def forward(self, x: Tensor) -> Tensor:
        outs = [self.linear2(torch.relu(self.linear1(x[:, t]))) for t in range(x.shape[1])]
        return torch.stack(outs, dim=1)


CASES = [
    BlindCase(CHECK, "gelu", FFNGelu, "mistake", "I used GELU instead of ReLU."),
    BlindCase(CHECK, "sigmoid", FFNSigmoid, "mistake", "I used a sigmoid as the activation."),
    BlindCase(
        CHECK,
        "leaky_relu",
        FFNLeakyRelu,
        "mistake",
        "I used leaky_relu to avoid dead units.",
    ),
    BlindCase(
        CHECK,
        "relu_at_end",
        FFNReluAtEnd,
        "mistake",
        "I put the ReLU after linear2 instead of between the layers.",
    ),
    BlindCase(
        CHECK,
        "relu_twice",
        FFNReluTwice,
        "mistake",
        "I put a ReLU after both layers.",
    ),
    BlindCase(
        CHECK,
        "relu_on_input",
        FFNReluOnInput,
        "mistake",
        "I applied the ReLU to the input before linear1.",
    ),
    BlindCase(
        CHECK,
        "residual_inside",
        FFNResidualInside,
        "mistake",
        "I added x back inside the FFN (the residual belongs to the sublayer wrapper).",
    ),
    BlindCase(
        CHECK,
        "layer_norm_inside",
        FFNLayerNormInside,
        "mistake",
        "I applied a LayerNorm to the FFN's output inside the module.",
    ),
    BlindCase(
        CHECK,
        "transpose_reshape",
        FFNTransposeReshape,
        "mistake",
        "I flattened with x.transpose(1, 2).reshape(B * T, D), mixing features of different "
        "positions.",
    ),
    BlindCase(
        CHECK,
        "centered_over_positions",
        FFNMeanOverPositions,
        "mistake",
        "I subtracted the mean over the positions from the hidden units.",
    ),
    BlindCase(
        CHECK,
        "no_second_bias",
        FFNNoSecondBias,
        "mistake",
        "I made linear2 bias-free.",
    ),
    BlindCase(
        CHECK,
        "returns_hidden_too",
        FFNReturnsHidden,
        "mistake",
        "I returned (output, hidden) instead of the output alone.",
    ),
    BlindCase(
        CHECK,
        "functional_dropout_always_on",
        FFNTrainingDropout,
        "mistake",
        "I used F.dropout(p=0.1) without training=self.training, so it drops units in eval too.",
    ),
    BlindCase(
        CHECK,
        "relu_in_place_on_input",
        FFNReluInPlaceOnInput,
        "mistake",
        "I called x.relu_() where I meant the hidden tensor, modifying the caller's input.",
    ),
    BlindCase(
        CHECK,
        "in_place_relu_with_dropout",
        FFNInPlaceRelu,
        "correct",
        "F.relu(inplace=True) on my own hidden tensor; an extra dropout argument (default 0).",
    ),
    BlindCase(
        CHECK,
        "manual_clamp_addmm",
        FFNManualClamp,
        "correct",
        "The weights used directly, clamp(min=0) as the ReLU, addmm over flattened positions.",
    ),
    BlindCase(
        CHECK,
        "conv1x1",
        FFNConv1x1,
        "correct",
        "Two 1x1 convolutions over (B, D, T) with the linear layers' weights.",
    ),
    BlindCase(
        CHECK,
        "loop_over_positions",
        FFNPerPositionLoop,
        "correct",
        "A loop over the positions, each through the same two layers, then stacked.",
    ),
]
