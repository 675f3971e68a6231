"""Blind set B10, check_feed_forward (chapter 11): the position-wise feed-forward network as
readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_feed_forward"


class _Base(nn.Module):
    """The two layers under the book's names; each mistake only changes ``forward``."""

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)


# ---------------------------------------------------------------- mistakes


class FFNNoRelu(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(x))


class FFNReluOnOutput(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(torch.relu(self.linear1(x))))  # a ReLU after each layer


class FFNReluFirst(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(torch.relu(x)))


class FFNGelu(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.gelu(self.linear1(x)))  # as in BERT and GPT


class FFNWithResidual(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return x + self.linear2(torch.relu(self.linear1(x)))  # Add


class FFNWithAddNorm(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x: Tensor) -> Tensor:
        return self.norm(x + self.linear2(torch.relu(self.linear1(x))))  # Add & Norm


class FFNTimeFirstFlatten(_Base):
    def forward(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        flat = x.transpose(0, 1).reshape(T * B, D)  # every position as one row
        out = self.linear2(torch.relu(self.linear1(flat)))
        return out.reshape(B, T, D)


class FFNPaperDropout(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(0.1)  # P_drop = 0.1, as in the paper

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(torch.relu(self.linear1(x))))


class FFNNoBias(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff, bias=False)  # as in recent LLMs
        self.linear2 = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFNMixesPositions(_Base):
    def forward(self, x: Tensor) -> Tensor:
        hidden = torch.relu(self.linear1(x))  # (B, T, d_ff)
        hidden = hidden - hidden.mean(dim=1, keepdim=True)  # centre the hidden features
        return self.linear2(hidden)


class FFNSoftmaxHidden(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.softmax(self.linear1(x), dim=-1))  # the nonlinearity


class FFNReluInputInPlace(_Base):
    def forward(self, x: Tensor) -> Tensor:
        hidden = self.linear1(x)
        x.relu_()  # meant hidden.relu_()
        return self.linear2(torch.relu(hidden))


# ---------------------------------------------------------------- correct variants


class FFNFunctional(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = F.linear(x, self.linear1.weight, self.linear1.bias).clamp(min=0)
        return F.linear(h, self.linear2.weight, self.linear2.bias)


class FFNInPlaceRelu(nn.Module):
    """An optional dropout (0 by default) and an activation chosen by name."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0, activation: str = "relu"):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)
        self.activation = activation

    def forward(self, x: Tensor) -> Tensor:
        h = self.linear1(x)
        h = h.relu_() if self.activation == "relu" else F.gelu(h)  # in place on my own tensor
        return self.linear2(self.dropout(h))


class FFNFlattenPositions(_Base):
    def forward(self, x: Tensor) -> Tensor:
        shape = x.shape
        rows = x.reshape(-1, shape[-1])  # (B*T, D): every position is independent
        out = self.linear2(F.relu(self.linear1(rows)))
        return out.view(shape)


class FFNEinsum(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = torch.einsum("btd,fd->btf", x, self.linear1.weight) + self.linear1.bias
        h = torch.maximum(h, torch.zeros_like(h))
        return torch.einsum("btf,df->btd", h, self.linear2.weight) + self.linear2.bias


CASES = [
    BlindCase(CHECK, "no_relu", FFNNoRelu, "mistake", "I forgot the ReLU between the two layers."),
    BlindCase(
        CHECK,
        "relu_on_output",
        FFNReluOnOutput,
        "mistake",
        "I put a ReLU after the second layer too.",
    ),
    BlindCase(
        CHECK,
        "relu_before_linear1",
        FFNReluFirst,
        "mistake",
        "I applied the ReLU to the input, before linear1, instead of between the layers.",
    ),
    BlindCase(CHECK, "gelu", FFNGelu, "mistake", "I used GELU instead of ReLU."),
    BlindCase(
        CHECK,
        "residual_inside",
        FFNWithResidual,
        "mistake",
        "I added the input back (the residual) inside the feed-forward module.",
    ),
    BlindCase(
        CHECK,
        "add_and_norm_inside",
        FFNWithAddNorm,
        "mistake",
        "I put the whole Add & Norm inside the module: LayerNorm(x + FFN(x)).",
    ),
    BlindCase(
        CHECK,
        "time_first_flatten",
        FFNTimeFirstFlatten,
        "mistake",
        "I flattened x.transpose(0, 1) to rows and reshaped the result straight to (B, T, D), "
        "so outputs land at other positions.",
    ),
    BlindCase(
        CHECK,
        "paper_dropout",
        FFNPaperDropout,
        "mistake",
        "I added dropout 0.1 on the hidden layer as in the paper; in training mode the output "
        "is random.",
    ),
    BlindCase(
        CHECK,
        "no_bias",
        FFNNoBias,
        "mistake",
        "I made both layers bias=False.",
    ),
    BlindCase(
        CHECK,
        "hidden_centred_over_positions",
        FFNMixesPositions,
        "mistake",
        "I centred the hidden features over the sequence (mean over dim=1), so positions "
        "influence each other.",
    ),
    BlindCase(
        CHECK,
        "softmax_hidden",
        FFNSoftmaxHidden,
        "mistake",
        "I used a softmax over the hidden features as the nonlinearity.",
    ),
    BlindCase(
        CHECK,
        "relu_in_place_on_input",
        FFNReluInputInPlace,
        "mistake",
        "I called x.relu_() by mistake, which zeroes the negative entries of the caller's input.",
    ),
    BlindCase(
        CHECK,
        "functional_clamp",
        FFNFunctional,
        "correct",
        "F.linear with the layers' weights, clamp(min=0) for the ReLU.",
    ),
    BlindCase(
        CHECK,
        "inplace_relu_options",
        FFNInPlaceRelu,
        "correct",
        "relu_ in place on the hidden tensor; extra dropout (0) and activation ('relu') "
        "arguments with defaults.",
    ),
    BlindCase(
        CHECK,
        "flatten_positions",
        FFNFlattenPositions,
        "correct",
        "Positions flattened to (B*T, D) rows and the result viewed back.",
    ),
    BlindCase(
        CHECK,
        "einsum",
        FFNEinsum,
        "correct",
        "einsum with the weight matrices, torch.maximum with zeros for the ReLU.",
    ),
]
