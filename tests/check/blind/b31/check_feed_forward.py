"""Blind set B31, check_feed_forward (chapter 11): the position-wise FFN, linear2(relu(linear1(x)))."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_feed_forward"


class _Base(nn.Module):
    """The right layers; the mistakes below change only forward (unless said otherwise)."""

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)


# ---------------------------------------------------------------- mistakes


class FFNNoReLU(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(x))


class FFNReLUAtTheEnd(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(self.linear1(x)))  # activation after the last layer


class FFNReLUTwice(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(torch.relu(self.linear1(x))))


class FFNReLUOnInput(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(torch.relu(x)))


class FFNGELU(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.gelu(self.linear1(x)))  # as in BERT and GPT


class FFNResidual(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return x + self.linear2(torch.relu(self.linear1(x)))  # the Add of Add & Norm


class FFNWithLayerNorm(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = self.linear2(torch.relu(self.linear1(x)))
        return F.layer_norm(x + h, x.shape[-1:])  # the whole sublayer


class FFNTimeMajorReshape(_Base):
    def forward(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        flat = x.transpose(0, 1).reshape(B * T, D)  # all positions as rows
        out = self.linear2(torch.relu(self.linear1(flat)))
        return out.view(B, T, D)  # back to (B, T, D)


class FFNNoBias(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff, bias=False)  # the formula x W1 W2, as I read it
        self.linear2 = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFNDropoutOn(_Base):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__(d_model, d_ff)
        self.dropout = nn.Dropout(0.1)  # the paper's P_drop

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(torch.relu(self.linear1(x))))


class FFNLeakyReLU(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.leaky_relu(self.linear1(x), 0.1))


class FFNMixesPositions(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = torch.relu(self.linear1(x))
        h = h - h.mean(dim=1, keepdim=True)  # centre the hidden features
        return self.linear2(h)


class FFNReLUInPlaceOnInput(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = self.linear1(x)
        torch.relu_(x)  # meant h
        return self.linear2(torch.relu(h))


class FFNSigmoid(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.sigmoid(self.linear1(x)))


# ---------------------------------------------------------------- correct variants


class FFNClamp(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(x).clamp(min=0))


class FFNInPlaceReLU(_Base):
    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__(d_model, d_ff)
        self.act = nn.ReLU(inplace=True)  # in place on its own hidden tensor
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(self.act(self.linear1(x))))


class FFNFlattenPositions(_Base):
    def forward(self, x: Tensor) -> Tensor:
        shape = x.shape
        rows = x.reshape(-1, shape[-1])  # (B * T, D), in order
        out = F.linear(
            F.relu(F.linear(rows, self.linear1.weight, self.linear1.bias)),
            self.linear2.weight,
            self.linear2.bias,
        )
        return out.reshape(shape)


class FFNEinsum(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = torch.einsum("btd,fd->btf", x, self.linear1.weight) + self.linear1.bias
        h = torch.maximum(h, torch.zeros_like(h))
        return torch.einsum("btf,df->btd", h, self.linear2.weight) + self.linear2.bias


class FFNFloat64Inside(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = F.linear(x.double(), self.linear1.weight.double(), self.linear1.bias.double())
        out = F.linear(h.relu(), self.linear2.weight.double(), self.linear2.bias.double())
        return out.to(x.dtype)


CASES = [
    BlindCase(CHECK, "no_relu", FFNNoReLU, "mistake", "I forgot the ReLU between the layers."),
    BlindCase(
        CHECK,
        "relu_at_the_end",
        FFNReLUAtTheEnd,
        "mistake",
        "I applied the ReLU after linear2 instead of between the two layers.",
    ),
    BlindCase(
        CHECK,
        "relu_twice",
        FFNReLUTwice,
        "mistake",
        "I put a ReLU after both layers.",
    ),
    BlindCase(
        CHECK,
        "relu_on_input",
        FFNReLUOnInput,
        "mistake",
        "I applied the ReLU to x before linear1.",
    ),
    BlindCase(CHECK, "gelu", FFNGELU, "mistake", "I used GELU, as BERT and GPT do."),
    BlindCase(
        CHECK,
        "residual_inside",
        FFNResidual,
        "mistake",
        "I added the residual x inside the feed-forward module.",
    ),
    BlindCase(
        CHECK,
        "add_and_norm_inside",
        FFNWithLayerNorm,
        "mistake",
        "I wrote the whole sublayer, LayerNorm(x + FFN(x)), inside the module.",
    ),
    BlindCase(
        CHECK,
        "time_major_reshape",
        FFNTimeMajorReshape,
        "mistake",
        "I flattened the positions via transpose(0, 1) but reshaped back as (B, T, D), which "
        "scrambles batch and position.",
    ),
    BlindCase(
        CHECK,
        "no_bias",
        FFNNoBias,
        "mistake",
        "I made both layers bias-free.",
    ),
    BlindCase(
        CHECK,
        "dropout_0_1",
        FFNDropoutOn,
        "mistake",
        "I hard-coded the paper's dropout 0.1 on the hidden layer, so in training mode the "
        "output is random.",
    ),
    BlindCase(
        CHECK,
        "leaky_relu",
        FFNLeakyReLU,
        "mistake",
        "I used a leaky ReLU with slope 0.1.",
    ),
    BlindCase(
        CHECK,
        "hidden_centred_over_positions",
        FFNMixesPositions,
        "mistake",
        "I centred the hidden features over the positions (dim=1), so positions influence "
        "each other.",
    ),
    BlindCase(
        CHECK,
        "relu_in_place_on_input",
        FFNReLUInPlaceOnInput,
        "mistake",
        "I called torch.relu_ on x instead of on the hidden tensor, changing the caller's x.",
    ),
    BlindCase(CHECK, "sigmoid", FFNSigmoid, "mistake", "I used a sigmoid as the activation."),
    BlindCase(CHECK, "clamp", FFNClamp, "correct", "ReLU written as clamp(min=0)."),
    BlindCase(
        CHECK,
        "inplace_relu_and_dropout_arg",
        FFNInPlaceReLU,
        "correct",
        "nn.ReLU(inplace=True) on the hidden tensor; a dropout argument defaulting to 0.",
    ),
    BlindCase(
        CHECK,
        "flatten_positions",
        FFNFlattenPositions,
        "correct",
        "Positions flattened to rows in order with reshape, F.linear, reshaped back.",
    ),
    BlindCase(
        CHECK,
        "einsum",
        FFNEinsum,
        "correct",
        "Both layers with einsum on their weights, ReLU as torch.maximum with zeros.",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        FFNFloat64Inside,
        "correct",
        "Computed in float64, cast back to x's dtype.",
    ),
]
