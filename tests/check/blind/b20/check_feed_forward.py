"""Blind set B20, check_feed_forward (chapter 11): the position-wise feed-forward network as
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


class FFReluAtEnd(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(self.linear1(x)))


class FFReluTwice(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return F.relu(self.linear2(F.relu(self.linear1(x))))


class FFReluFirst(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(torch.relu(x)))


class FFGelu(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.gelu(self.linear1(x)))  # what BERT and GPT use


class FFTanh(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.tanh(self.linear1(x)))


class FFResidual(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return x + self.linear2(torch.relu(self.linear1(x)))  # the sublayer keeps its input


class FFLayerNormInside(_Base):
    def forward(self, x: Tensor) -> Tensor:
        out = self.linear2(torch.relu(self.linear1(x)))
        return F.layer_norm(out, out.shape[-1:])  # Add & Norm comes with it


class FFNoBiasSecond(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model, bias=False)  # a bias before the residual is moot

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFMixesPositions(_Base):
    def forward(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        h = torch.relu(self.linear1(x.reshape(B * T, D)))
        out = self.linear2(h)
        return out.view(T, B, D).transpose(0, 1)  # back to (B, T, D)


class FFCentredHidden(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = torch.relu(self.linear1(x))
        h = h - h.mean(dim=1, keepdim=True)  # centre the hidden units
        return self.linear2(h)


class FFInplaceInput(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(x.relu_()))  # ReLU in place to save memory


# ---------------------------------------------------------------- correct variants


class FFModules(nn.Module):
    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.act = nn.ReLU()
        self.drop = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.drop(self.act(self.linear1(x))))


class FFInplaceHidden(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = self.linear1(x)
        h.relu_()  # in place on my own hidden tensor
        return self.linear2(h)


class FFEinsum(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = torch.einsum("btd,fd->btf", x, self.linear1.weight) + self.linear1.bias
        h = h.clamp(min=0)
        return torch.einsum("btf,df->btd", h, self.linear2.weight) + self.linear2.bias


class FFPerPosition(_Base):
    def forward(self, x: Tensor) -> Tensor:
        outs = [self.linear2(F.relu(self.linear1(x[:, t]))) for t in range(x.shape[1])]
        return torch.stack(outs, dim=1)


CASES = [
    BlindCase(CHECK, "no_relu", FFNoRelu, "mistake", "I forgot the ReLU."),
    BlindCase(CHECK, "relu_at_end", FFReluAtEnd, "mistake", "I put the ReLU after linear2."),
    BlindCase(CHECK, "relu_twice", FFReluTwice, "mistake", "A ReLU after each of the two layers."),
    BlindCase(CHECK, "relu_before_linear1", FFReluFirst, "mistake", "I applied ReLU to x first."),
    BlindCase(CHECK, "gelu", FFGelu, "mistake", "I used GELU instead of ReLU."),
    BlindCase(CHECK, "tanh", FFTanh, "mistake", "I used tanh as the activation."),
    BlindCase(
        CHECK, "residual", FFResidual, "mistake", "I added x back (the residual) in the FFN."
    ),
    BlindCase(
        CHECK,
        "layer_norm_inside",
        FFLayerNormInside,
        "mistake",
        "I normalized the FFN's output with layer_norm.",
    ),
    BlindCase(
        CHECK,
        "linear2_without_bias",
        FFNoBiasSecond,
        "mistake",
        "I built linear2 without a bias.",
    ),
    BlindCase(
        CHECK,
        "reshape_back_wrong",
        FFMixesPositions,
        "mistake",
        "I flattened to (B*T, D) and came back with view(T, B, D).transpose(0, 1).",
    ),
    BlindCase(
        CHECK,
        "hidden_centred_over_positions",
        FFCentredHidden,
        "mistake",
        "I centred the hidden units over dim=1 (the positions).",
    ),
    BlindCase(
        CHECK,
        "relu_inplace_on_x",
        FFInplaceInput,
        "mistake",
        "I wrote x.relu_() in place, before linear1.",
    ),
    BlindCase(
        CHECK,
        "modules_dropout",
        FFModules,
        "correct",
        "nn.ReLU and nn.Dropout modules, dropout 0 by default.",
    ),
    BlindCase(
        CHECK,
        "inplace_relu_hidden",
        FFInplaceHidden,
        "correct",
        "relu_ in place on the hidden tensor.",
    ),
    BlindCase(
        CHECK, "einsum_clamp", FFEinsum, "correct", "einsum with the layers' weights and clamp(0)."
    ),
    BlindCase(
        CHECK,
        "loop_positions",
        FFPerPosition,
        "correct",
        "A loop over positions, stacked back on dim 1.",
    ),
]
