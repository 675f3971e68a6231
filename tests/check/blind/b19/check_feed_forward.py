"""Blind set B19, check_feed_forward (chapter 11): the position-wise feed-forward network."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_feed_forward"


class _Base(nn.Module):
    """The book's two layers; the mistakes below differ only in ``forward``."""

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
        return torch.relu(self.linear2(self.linear1(x)))  # the ReLU after the last layer


class FFReLUBoth(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(torch.relu(self.linear1(x))))


class FFReLUFirst(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(torch.relu(x)))  # activation on the input


class FFGELU(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.gelu(self.linear1(x)))  # GELU, as in BERT and GPT


class FFResidual(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return x + self.linear2(torch.relu(self.linear1(x)))  # with its residual connection


class FFAddNorm(_Base):
    def forward(self, x: Tensor) -> Tensor:
        y = x + self.linear2(torch.relu(self.linear1(x)))
        return F.layer_norm(y, y.shape[-1:])  # the whole sublayer, add and norm


class FFReshapeBack(_Base):
    def forward(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        h = x.transpose(1, 2)  # (B, D, T), channels first as for a 1x1 convolution
        h = h.reshape(B, T, D)  # back to (B, T, D)
        return self.linear2(torch.relu(self.linear1(h)))


class FFDropoutOn(_Base):
    def forward(self, x: Tensor) -> Tensor:
        hidden = F.dropout(torch.relu(self.linear1(x)), p=0.1)  # dropout where PyTorch puts it
        return self.linear2(hidden)


class FFMixesPositions(_Base):
    def forward(self, x: Tensor) -> Tensor:
        hidden = torch.relu(self.linear1(x))  # (B, T, d_ff)
        hidden = hidden - hidden.mean(dim=1, keepdim=True)  # centered over the sequence
        return self.linear2(hidden)


class FFReturnsHidden(_Base):
    def forward(self, x: Tensor) -> Tensor:
        hidden = torch.relu(self.linear1(x))
        self.linear2(hidden)
        return hidden  # returned the wrong variable


# ---------------------------------------------------------------- correct variants


class FFSequentialAliases(nn.Module):
    """An nn.Sequential whose layers are also kept as linear1 and linear2."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.net = nn.Sequential(self.linear1, nn.ReLU(), nn.Dropout(dropout), self.linear2)

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)


class FFFlattenPositions(_Base):
    """All positions flattened into one batch of vectors, clamp for the ReLU."""

    def forward(self, x: Tensor) -> Tensor:
        shape = x.shape
        flat = x.reshape(-1, shape[-1])  # (B * T, D)
        out = self.linear2(self.linear1(flat).clamp(min=0))
        return out.view(shape)


class FFFunctionalInplace(_Base):
    """F.linear with the weights, an in-place ReLU on the hidden temporary."""

    def forward(self, x: Tensor) -> Tensor:
        hidden = F.linear(x, self.linear1.weight, self.linear1.bias)
        hidden.relu_()
        return F.linear(hidden, self.linear2.weight, self.linear2.bias)


CASES = [
    BlindCase(CHECK, "no_relu", FFNoReLU, "mistake", "I forgot the ReLU between the layers."),
    BlindCase(
        CHECK,
        "relu_at_end",
        FFReLUAtEnd,
        "mistake",
        "I put the ReLU after linear2 instead of between the layers.",
    ),
    BlindCase(CHECK, "relu_twice", FFReLUBoth, "mistake", "I applied a ReLU after each layer."),
    BlindCase(
        CHECK, "relu_on_input", FFReLUFirst, "mistake", "I applied the ReLU to the input first."
    ),
    BlindCase(CHECK, "gelu", FFGELU, "mistake", "I used GELU instead of ReLU."),
    BlindCase(
        CHECK,
        "adds_residual",
        FFResidual,
        "mistake",
        "I added the input back (the residual) inside the network.",
    ),
    BlindCase(
        CHECK,
        "includes_add_norm",
        FFAddNorm,
        "mistake",
        "I wrote the whole sublayer: residual and LayerNorm included.",
    ),
    BlindCase(
        CHECK,
        "reshape_instead_of_transpose",
        FFReshapeBack,
        "mistake",
        "I transposed to (B, D, T) as for a convolution and went back with reshape, which "
        "scrambles the positions.",
    ),
    BlindCase(
        CHECK,
        "functional_dropout",
        FFDropoutOn,
        "mistake",
        "I added F.dropout(hidden, p=0.1), which stays on since F.dropout defaults to "
        "training=True.",
    ),
    BlindCase(
        CHECK,
        "centers_over_positions",
        FFMixesPositions,
        "mistake",
        "I centered the hidden activations over the sequence, so positions affect each other.",
    ),
    BlindCase(
        CHECK,
        "returns_hidden",
        FFReturnsHidden,
        "mistake",
        "I returned the hidden activations (d_ff wide) instead of linear2's output.",
    ),
    BlindCase(
        CHECK,
        "sequential_with_aliases",
        FFSequentialAliases,
        "correct",
        "nn.Sequential of the same layers (kept as linear1/linear2); dropout argument, default 0.",
    ),
    BlindCase(
        CHECK,
        "flatten_positions",
        FFFlattenPositions,
        "correct",
        "Positions flattened to (B*T, D) and back; clamp(min=0) as the ReLU.",
    ),
    BlindCase(
        CHECK,
        "functional_inplace_relu",
        FFFunctionalInplace,
        "correct",
        "F.linear with the layers' weights; relu_ in place on the hidden temporary.",
    ),
]
