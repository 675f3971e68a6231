"""Blind set B11, check_feed_forward (chapter 11): the position-wise feed-forward network as
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


class FFNoReLU(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(x))


class FFReLUAtEnd(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(torch.relu(self.linear1(x))))  # a ReLU after each layer


class FFReLUFirst(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(torch.relu(x)))


class FFReLUOnlyAtEnd(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return F.relu(self.linear2(self.linear1(x)))


class FFGELU(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.gelu(self.linear1(x)))  # what BERT and GPT use


class FFResidual(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return x + self.linear2(torch.relu(self.linear1(x)))  # the residual of the sublayer


class FFAddNormInside(_Base):
    def forward(self, x: Tensor) -> Tensor:
        y = x + self.linear2(torch.relu(self.linear1(x)))
        return F.layer_norm(y, y.shape[-1:])


class FFNoSecondBias(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model, bias=False)  # one bias is enough

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFReturnsHidden(_Base):
    def forward(self, x: Tensor) -> Tensor:
        hidden = torch.relu(self.linear1(x))
        self.linear2(hidden)
        return hidden


class FFMixesPositions(_Base):
    def forward(self, x: Tensor) -> Tensor:
        hidden = torch.relu(self.linear1(x))  # (B, T, d_ff)
        hidden = hidden - hidden.mean(dim=1, keepdim=True)  # center each unit over the sentence
        return self.linear2(hidden)


class FFSoftmaxHidden(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.softmax(self.linear1(x), dim=1))


class FFDropoutTraining(_Base):
    def forward(self, x: Tensor) -> Tensor:
        hidden = F.dropout(torch.relu(self.linear1(x)), p=0.1)  # training=True by default
        return self.linear2(hidden)


# ---------------------------------------------------------------- correct variants


class FFSequentialView(nn.Module):
    """The two layers also held in an nn.Sequential (the same modules, shared)."""

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.net = nn.Sequential(self.linear1, nn.ReLU(), self.linear2)

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)


class FFFlattenClamp(_Base):
    def forward(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        flat = x.reshape(B * T, D)  # every position is one row
        hidden = self.linear1(flat).clamp(min=0)
        return self.linear2(hidden).reshape(B, T, D)


class FFDropoutInPlace(nn.Module):
    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        h = self.linear1(x)
        h.relu_()  # in place on my own activation
        return self.linear2(self.dropout(h))


class FFEinsum(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = torch.einsum("btd,fd->btf", x, self.linear1.weight) + self.linear1.bias
        h = torch.maximum(h, torch.zeros_like(h))
        return torch.einsum("btf,df->btd", h, self.linear2.weight) + self.linear2.bias


CASES = [
    BlindCase(CHECK, "no_relu", FFNoReLU, "mistake", "I forgot the ReLU between the layers."),
    BlindCase(
        CHECK,
        "relu_after_both",
        FFReLUAtEnd,
        "mistake",
        "I put a ReLU after linear2 as well as after linear1.",
    ),
    BlindCase(
        CHECK,
        "relu_on_input",
        FFReLUFirst,
        "mistake",
        "I applied the ReLU to the input before linear1.",
    ),
    BlindCase(
        CHECK,
        "relu_only_at_end",
        FFReLUOnlyAtEnd,
        "mistake",
        "I applied the ReLU once, after linear2.",
    ),
    BlindCase(
        CHECK, "gelu", FFGELU, "mistake", "I used GELU, as in BERT and GPT, instead of ReLU."
    ),
    BlindCase(
        CHECK,
        "residual_inside",
        FFResidual,
        "mistake",
        "I added the residual x inside the feed-forward network.",
    ),
    BlindCase(
        CHECK,
        "add_and_norm_inside",
        FFAddNormInside,
        "mistake",
        "I put the whole sublayer inside: LayerNorm(x + FFN(x)).",
    ),
    BlindCase(
        CHECK,
        "linear2_without_bias",
        FFNoSecondBias,
        "mistake",
        "I left out the bias of linear2.",
    ),
    BlindCase(
        CHECK,
        "returns_hidden",
        FFReturnsHidden,
        "mistake",
        "I returned the hidden layer (B, T, d_ff) instead of linear2's output.",
    ),
    BlindCase(
        CHECK,
        "centers_over_positions",
        FFMixesPositions,
        "mistake",
        "I centered each hidden unit over the sentence (mean over dim=1), so positions "
        "influence each other.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_positions",
        FFSoftmaxHidden,
        "mistake",
        "I used a softmax as the nonlinearity and took it over dim=1, the positions.",
    ),
    BlindCase(
        CHECK,
        "functional_dropout_always_on",
        FFDropoutTraining,
        "mistake",
        "I added F.dropout(p=0.1) without training=self.training, so it drops even in eval.",
    ),
    BlindCase(
        CHECK,
        "sequential_of_the_layers",
        FFSequentialView,
        "correct",
        "linear1 and linear2 also wrapped, with nn.ReLU, in an nn.Sequential that forward calls.",
    ),
    BlindCase(
        CHECK,
        "flatten_and_clamp",
        FFFlattenClamp,
        "correct",
        "Positions flattened to (B*T, D) rows, clamp(min=0) as the ReLU, reshaped back.",
    ),
    BlindCase(
        CHECK,
        "dropout_and_relu_in_place",
        FFDropoutInPlace,
        "correct",
        "A dropout argument (default 0) and relu_ in place on the hidden activations.",
    ),
    BlindCase(
        CHECK,
        "einsum_with_weights",
        FFEinsum,
        "correct",
        "einsum with the layers' weights and biases, torch.maximum for the ReLU.",
    ),
]
