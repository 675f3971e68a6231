"""Blind set B25, check_feed_forward (chapter 11): the position-wise feed-forward network."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_feed_forward"


class _Layers(nn.Module):
    """The two layers under the book's names; the mistakes change forward."""

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)


# ---------------------------------------------------------------- mistakes


class FFNoReLU(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(x))


class FFReLUAtTheEnd(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(self.linear1(x)))


class FFReLUTwice(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(torch.relu(self.linear1(x))))  # a ReLU after each layer


class FFReLUOnInput(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(torch.relu(x)))


class FFGelu(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.gelu(self.linear1(x)))  # as in BERT and GPT


class FFResidualInside(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return x + self.linear2(torch.relu(self.linear1(x)))  # the sublayer's residual


class FFNormInside(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        y = self.linear2(torch.relu(self.linear1(x)))
        return F.layer_norm(y, y.shape[-1:])  # Add & Norm's norm


class FFDropoutDefault(nn.Module):
    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.1) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)  # the paper's 0.1

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(torch.relu(self.linear1(x))))


class FFFourTimesModel(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, 4 * d_model)  # the paper's 2048 = 4 x 512
        self.linear2 = nn.Linear(4 * d_model, d_model)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFBatchNorm(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.norm = nn.BatchNorm1d(d_ff)  # to keep the hidden layer in range
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x: Tensor) -> Tensor:
        h = torch.relu(self.linear1(x))  # (B, T, d_ff)
        h = self.norm(h.transpose(1, 2)).transpose(1, 2)
        return self.linear2(h)


class FFNoBias(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff, bias=False)
        self.linear2 = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFSoftmaxOverPositions(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        h = torch.relu(self.linear1(x))
        return self.linear2(h * torch.softmax(h, dim=1))  # weigh the positions


class FFMeanPooled(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        y = self.linear2(torch.relu(self.linear1(x)))
        return y - y.mean(dim=1, keepdim=True)  # centre each feature over the sentence


class FFInPlaceReLUOnInput(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        h = self.linear1(x)
        F.relu(x, inplace=True)  # meant h
        return self.linear2(h)


# ---------------------------------------------------------------- correct variants


class FFFunctional(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        h = F.linear(x, self.linear1.weight, self.linear1.bias).clamp_min(0.0)
        return F.linear(h, self.linear2.weight, self.linear2.bias)


class FFLoopOverPositions(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        outs = [self.linear2(torch.relu(self.linear1(x[:, t]))) for t in range(x.shape[1])]
        return torch.stack(outs, dim=1)


class FFAddmmFlat(_Layers):
    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__(d_model, d_ff)
        self.act = nn.ReLU()
        self.drop = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        flat = x.reshape(-1, x.shape[-1])  # (B T, D)
        h = torch.addmm(self.linear1.bias, flat, self.linear1.weight.T)
        h = self.drop(self.act(h))
        y = torch.addmm(self.linear2.bias, h, self.linear2.weight.T)
        return y.reshape(x.shape)


class FFReluInPlaceOnHidden(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        h = self.linear1(x)
        h.relu_()  # h is new, so in place is safe
        return self.linear2(h)


CASES = [
    BlindCase(CHECK, "no_relu", FFNoReLU, "mistake", "I left out the ReLU between the layers."),
    BlindCase(
        CHECK,
        "relu_at_the_end",
        FFReLUAtTheEnd,
        "mistake",
        "I put the ReLU after linear2 instead of between the layers.",
    ),
    BlindCase(
        CHECK,
        "relu_after_both",
        FFReLUTwice,
        "mistake",
        "I put a ReLU after each of the two layers.",
    ),
    BlindCase(
        CHECK,
        "relu_on_input",
        FFReLUOnInput,
        "mistake",
        "I applied the ReLU to x before linear1.",
    ),
    BlindCase(
        CHECK, "gelu", FFGelu, "mistake", "I used GELU, as BERT and GPT do, instead of ReLU."
    ),
    BlindCase(
        CHECK,
        "residual_inside",
        FFResidualInside,
        "mistake",
        "I added x back inside the network, the residual of Add & Norm.",
    ),
    BlindCase(
        CHECK,
        "layer_norm_inside",
        FFNormInside,
        "mistake",
        "I ended the network with a LayerNorm, which belongs to Add & Norm.",
    ),
    BlindCase(
        CHECK,
        "dropout_default_0_1",
        FFDropoutDefault,
        "mistake",
        "I added dropout with the paper's default 0.1, which is active in training mode.",
    ),
    BlindCase(
        CHECK,
        "hidden_four_times_d_model",
        FFFourTimesModel,
        "mistake",
        "I made the hidden layer 4 * d_model wide and ignored d_ff.",
    ),
    BlindCase(
        CHECK,
        "batch_norm_on_hidden",
        FFBatchNorm,
        "mistake",
        "I added a BatchNorm1d on the hidden layer, whose statistics mix the positions.",
    ),
    BlindCase(
        CHECK,
        "no_bias",
        FFNoBias,
        "mistake",
        "I made both layers bias=False.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_positions",
        FFSoftmaxOverPositions,
        "mistake",
        "I weighted the hidden units by a softmax over the positions.",
    ),
    BlindCase(
        CHECK,
        "centred_over_sentence",
        FFMeanPooled,
        "mistake",
        "I centred each output on its sentence's mean, so positions affect each other.",
    ),
    BlindCase(
        CHECK,
        "in_place_relu_on_x",
        FFInPlaceReLUOnInput,
        "mistake",
        "I called F.relu(x, inplace=True) on the input instead of the hidden layer, which also "
        "changes the caller's x.",
    ),
    BlindCase(
        CHECK,
        "functional_clamp",
        FFFunctional,
        "correct",
        "F.linear with the layers' weights and clamp_min(0) for the ReLU.",
    ),
    BlindCase(
        CHECK,
        "loop_over_positions",
        FFLoopOverPositions,
        "correct",
        "The network applied to one position at a time, stacked back along T.",
    ),
    BlindCase(
        CHECK,
        "addmm_flat_with_dropout_arg",
        FFAddmmFlat,
        "correct",
        "x flattened to (B*T, D), torch.addmm for both layers, an nn.ReLU module and a dropout "
        "argument that defaults to 0.",
    ),
    BlindCase(
        CHECK,
        "relu_in_place_on_hidden",
        FFReluInPlaceOnHidden,
        "correct",
        "relu_() in place on the hidden layer, which is a fresh tensor.",
    ),
]
