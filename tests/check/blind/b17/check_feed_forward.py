"""Blind set B17, check_feed_forward (chapter 11): the position-wise feed-forward network as
readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_feed_forward"


class _Base(nn.Module):
    """The right layers; each mistake below changes only ``forward``."""

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)


# ---------------------------------------------------------------- mistakes


class FFNNoRelu(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(x))  # two linear layers make the MLP


class FFNReluAfterSecond(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(self.linear1(x)))  # activation at the end


class FFNReluTwice(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return F.relu(self.linear2(F.relu(self.linear1(x))))


class FFNReluOnInput(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(F.relu(x)))


class FFNGelu(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.gelu(self.linear1(x)))  # GELU, as in BERT and GPT


class FFNResidualInside(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return x + self.linear2(torch.relu(self.linear1(x)))  # with the residual connection


class FFNScrambledPositions(_Base):
    def forward(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        flat = x.transpose(0, 1).reshape(B * T, D)  # one row per token
        out = self.linear2(torch.relu(self.linear1(flat)))
        return out.view(B, T, D)  # back to the batch


class FFNNoBias(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff, bias=False)
        self.linear2 = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFNFunctionalDropout(_Base):
    def forward(self, x: Tensor) -> Tensor:
        hidden = F.dropout(torch.relu(self.linear1(x)), p=0.1)  # as in the paper
        return self.linear2(hidden)


class FFNMixesPositions(_Base):
    def forward(self, x: Tensor) -> Tensor:
        hidden = torch.relu(self.linear1(x))
        hidden = hidden - hidden.mean(dim=1, keepdim=True)  # centre the hidden units
        return self.linear2(hidden)


class FFNInPlaceReluOnInput(_Base):
    def forward(self, x: Tensor) -> Tensor:
        hidden = self.linear1(x)
        x.relu_()  # reuse x's memory for the activation... or so I thought
        return self.linear2(torch.relu(hidden))


# ---------------------------------------------------------------- correct variants


class FFNActivationModule(_Base):
    """The ReLU as a module attribute (no parameters) and a dropout argument defaulting to 0."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__(d_model, d_ff)
        self.activation = nn.ReLU()
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(self.activation(self.linear1(x))))


class FFNFunctionalClamp(_Base):
    """F.linear on the layers' weights, clamp(min=0) for the ReLU, in place on its own temporary."""

    def forward(self, x: Tensor) -> Tensor:
        h = F.linear(x, self.linear1.weight, self.linear1.bias)
        h.clamp_(min=0)
        return F.linear(h, self.linear2.weight, self.linear2.bias)


class FFNFlattenHelper(_Base):
    """Positions flattened to rows and back with the right order; torch.maximum for the ReLU."""

    def mlp(self, rows: Tensor) -> Tensor:
        h = self.linear1(rows)
        return self.linear2(torch.maximum(h, torch.zeros_like(h)))

    def forward(self, x: Tensor) -> Tensor:
        shape = x.shape
        return self.mlp(x.reshape(-1, shape[-1])).reshape(shape)


CASES = [
    BlindCase(CHECK, "no_relu", FFNNoRelu, "mistake", "I left out the ReLU between the layers."),
    BlindCase(
        CHECK,
        "relu_after_linear2",
        FFNReluAfterSecond,
        "mistake",
        "I put the ReLU after linear2 instead of between the two layers.",
    ),
    BlindCase(
        CHECK,
        "relu_after_both",
        FFNReluTwice,
        "mistake",
        "I put a ReLU after each linear layer.",
    ),
    BlindCase(
        CHECK,
        "relu_on_input",
        FFNReluOnInput,
        "mistake",
        "I applied the ReLU to x before linear1.",
    ),
    BlindCase(
        CHECK,
        "gelu",
        FFNGelu,
        "mistake",
        "I used GELU, as BERT and GPT do, instead of ReLU.",
    ),
    BlindCase(
        CHECK,
        "residual_inside",
        FFNResidualInside,
        "mistake",
        "I added the residual x inside the feed-forward module.",
    ),
    BlindCase(
        CHECK,
        "flatten_order_scrambles_positions",
        FFNScrambledPositions,
        "mistake",
        "I flattened with x.transpose(0, 1).reshape(B * T, D) and viewed back as (B, T, D) "
        "without the transpose, so outputs land on other positions.",
    ),
    BlindCase(
        CHECK,
        "no_bias",
        FFNNoBias,
        "mistake",
        "I made both linear layers without a bias.",
    ),
    BlindCase(
        CHECK,
        "functional_dropout_always_on",
        FFNFunctionalDropout,
        "mistake",
        "I added F.dropout(p=0.1), whose training flag defaults to True, so it drops units even "
        "in eval mode.",
    ),
    BlindCase(
        CHECK,
        "centred_over_positions",
        FFNMixesPositions,
        "mistake",
        "I centred the hidden units by subtracting their mean over the sequence, so positions "
        "influence each other.",
    ),
    BlindCase(
        CHECK,
        "relu_in_place_on_input",
        FFNInPlaceReluOnInput,
        "mistake",
        "I called x.relu_() to save memory, which overwrites the caller's input (and fails for an "
        "input that requires grad).",
    ),
    BlindCase(
        CHECK,
        "activation_module_dropout_arg",
        FFNActivationModule,
        "correct",
        "nn.ReLU as an attribute and an nn.Dropout with a dropout argument defaulting to 0.",
    ),
    BlindCase(
        CHECK,
        "functional_clamp",
        FFNFunctionalClamp,
        "correct",
        "F.linear with the layers' weights and an in-place clamp_(min=0) on its own hidden tensor.",
    ),
    BlindCase(
        CHECK,
        "flatten_helper",
        FFNFlattenHelper,
        "correct",
        "Positions flattened to rows by reshape and back, an mlp helper, torch.maximum as ReLU.",
    ),
]
