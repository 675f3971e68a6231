"""Blind set B28, check_feed_forward (chapter 11): the position-wise feed-forward network as
readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_feed_forward"


class _Layers(nn.Module):
    """linear1 (d_model -> d_ff) and linear2 (d_ff -> d_model), both with a bias."""

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)


# ---------------------------------------------------------------- mistakes


class FFNGelu(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.gelu(self.linear1(x)))  # GELU, as modern models do


class FFNReluAtBothEnds(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(torch.relu(self.linear1(x))))


class FFNReluOnInput(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(torch.relu(x)))


class FFNClampMax(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(x).clamp(max=0))  # max(0, .)


class FFNResidualInside(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return x + self.linear2(torch.relu(self.linear1(x)))  # Add: x + Sublayer(x)


class FFNAddNormInside(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        y = x + self.linear2(torch.relu(self.linear1(x)))
        return F.layer_norm(y, y.shape[-1:])  # the whole "Add & Norm" block


class FFNDropoutDefault(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(0.1)  # where nn.TransformerEncoderLayer has it

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(torch.relu(self.linear1(x))))


class FFNSizesSwapped(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_ff, d_model)  # W_1 is d x d_ff
        self.linear2 = nn.Linear(d_model, d_ff)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFNSequentialNames(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)


class FFNNoBias(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff, bias=False)  # x W_1, x W_2
        self.linear2 = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFNWeightsNotTransposed(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        # FFN(x) = max(0, x W_1 + b_1) W_2 + b_2, with the layers' weights as W_1, W_2
        h = torch.relu(x @ self.linear1.weight.T + self.linear1.bias)
        return h @ self.linear2.weight + self.linear2.bias


class FFNInputReluInPlace(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        h = self.linear1(x)
        out = self.linear2(F.relu(h, inplace=True))
        x.relu_()  # (left over from trying the ReLU on the input first)
        return out


class FFNSoftplus(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.softplus(self.linear1(x)))  # a smooth max(0, .)


# ---------------------------------------------------------------- correct variants


class FFNInplaceRelu(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        hidden = self.linear1(x)
        hidden.relu_()  # a fresh tensor, safe to overwrite
        return self.linear2(hidden)


class FFNFunctionalClamp(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        h = F.linear(x, self.linear1.weight, self.linear1.bias).clamp(min=0)
        return F.linear(h, self.linear2.weight, self.linear2.bias)


class FFNConvOneByOne(_Layers):
    """The paper's two 1x1 convolutions, with the linear layers' weights as kernels."""

    def forward(self, x: Tensor) -> Tensor:
        xt = x.transpose(1, 2)  # (B, D, T)
        h = F.conv1d(xt, self.linear1.weight.unsqueeze(-1), self.linear1.bias)
        out = F.conv1d(torch.relu(h), self.linear2.weight.unsqueeze(-1), self.linear2.bias)
        return out.transpose(1, 2)


class FFNWithDropoutArg(nn.Module):
    """An extra dropout argument with default 0, as the book's module has."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)
        self.act = nn.ReLU()

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(self.act(self.linear1(x))))


CASES = [
    BlindCase(
        CHECK,
        "gelu_not_relu",
        FFNGelu,
        "mistake",
        "I used GELU between the layers instead of ReLU.",
    ),
    BlindCase(
        CHECK,
        "relu_after_both_layers",
        FFNReluAtBothEnds,
        "mistake",
        "I applied ReLU after linear2 as well as after linear1.",
    ),
    BlindCase(
        CHECK,
        "relu_on_input",
        FFNReluOnInput,
        "mistake",
        "I put the ReLU on the input, before linear1, and none in between.",
    ),
    BlindCase(
        CHECK,
        "clamp_max_zero",
        FFNClampMax,
        "mistake",
        "I wrote max(0, .) as clamp(max=0), which keeps the negative part.",
    ),
    BlindCase(
        CHECK,
        "residual_inside",
        FFNResidualInside,
        "mistake",
        "I added the residual x inside the feed-forward network.",
    ),
    BlindCase(
        CHECK,
        "add_and_norm_inside",
        FFNAddNormInside,
        "mistake",
        "I put the whole Add & Norm inside the module: layer_norm(x + FFN(x)).",
    ),
    BlindCase(
        CHECK,
        "dropout_on_by_default",
        FFNDropoutDefault,
        "mistake",
        "I added nn.Dropout(0.1) on the hidden layer, so in training mode the output is random.",
    ),
    BlindCase(
        CHECK,
        "linear_sizes_swapped",
        FFNSizesSwapped,
        "mistake",
        "Since W_1 is d x d_ff I wrote nn.Linear(d_ff, d_model) for linear1, and the reverse "
        "for linear2.",
    ),
    BlindCase(
        CHECK,
        "sequential_names",
        FFNSequentialNames,
        "mistake",
        "I used an nn.Sequential called net, so there are no linear1 and linear2.",
    ),
    BlindCase(
        CHECK,
        "no_bias",
        FFNNoBias,
        "mistake",
        "I made both layers bias-free, reading the formula as x W_1 and x W_2.",
    ),
    BlindCase(
        CHECK,
        "second_weight_not_transposed",
        FFNWeightsNotTransposed,
        "mistake",
        "I wrote the formula with the layers' weights and transposed only the first, "
        "h @ linear2.weight; it runs only when d_ff = d_model.",
    ),
    BlindCase(
        CHECK,
        "input_relu_in_place",
        FFNInputReluInPlace,
        "mistake",
        "A leftover x.relu_() from an experiment overwrites the caller's input.",
    ),
    BlindCase(
        CHECK,
        "softplus",
        FFNSoftplus,
        "mistake",
        "I used softplus, a smooth max(0, .), instead of ReLU.",
    ),
    BlindCase(
        CHECK,
        "in_place_relu_on_hidden",
        FFNInplaceRelu,
        "correct",
        "An in-place relu_() on the hidden activations, a fresh tensor of mine.",
    ),
    BlindCase(
        CHECK,
        "functional_clamp",
        FFNFunctionalClamp,
        "correct",
        "F.linear on the layers' weights and clamp(min=0) for the ReLU.",
    ),
    BlindCase(
        CHECK,
        "conv1d_kernel_one",
        FFNConvOneByOne,
        "correct",
        "Two 1x1 convolutions (F.conv1d) with the linear layers' weights as kernels.",
    ),
    BlindCase(
        CHECK,
        "dropout_argument",
        FFNWithDropoutArg,
        "correct",
        "nn.ReLU as a module and an extra dropout argument that defaults to 0.",
    ),
]
