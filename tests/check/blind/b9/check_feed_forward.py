"""Blind set B9, check_feed_forward (chapter 11): the position-wise feed-forward network."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_feed_forward"


class _Base(nn.Module):
    """The two layers as the book names them; each mistake only changes ``forward``."""

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
        return torch.relu(self.linear2(torch.relu(self.linear1(x))))  # a ReLU after each layer


class FFReluOnInput(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(torch.relu(x)))


class FFGelu(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.gelu(self.linear1(x)))  # as in BERT and GPT


class FFResidualInside(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return x + self.linear2(torch.relu(self.linear1(x)))


class FFFunctionalDropout(_Base):
    def forward(self, x: Tensor) -> Tensor:
        hidden = F.dropout(torch.relu(self.linear1(x)), p=0.1)  # training=True by default
        return self.linear2(hidden)


class FFNoBiasSecond(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFLeakyRelu(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.leaky_relu(self.linear1(x), 0.2))


class FFSizesSwapped(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_ff, d_model)  # in/out mixed up
        self.linear2 = nn.Linear(d_model, d_ff)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFLayerNormInside(_Base):
    def forward(self, x: Tensor) -> Tensor:
        out = self.linear2(torch.relu(self.linear1(x)))
        return F.layer_norm(out, out.shape[-1:])  # the "& Norm" inside the sublayer


class FFNormOverPositions(_Base):
    def forward(self, x: Tensor) -> Tensor:
        hidden = torch.relu(self.linear1(x))
        hidden = hidden / hidden.sum(dim=1, keepdim=True).clamp_min(1e-6)  # rescale per feature
        return self.linear2(hidden)


# ---------------------------------------------------------------- correct variants


class FFFunctionalLinear(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = F.linear(x, self.linear1.weight, self.linear1.bias).clamp_min(0)
        return F.linear(h, self.linear2.weight, self.linear2.bias)


class FFWithDropoutModule(nn.Module):
    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.relu = nn.ReLU()
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(self.relu(self.linear1(x))))


class FFFlattenPositions(_Base):
    def forward(self, x: Tensor) -> Tensor:
        shape = x.shape
        flat = x.reshape(-1, shape[-1])  # every position is its own row
        out = self.linear2(torch.relu(self.linear1(flat)))
        return out.reshape(*shape[:-1], -1)


class FFEinsum(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = torch.einsum("...d,fd->...f", x, self.linear1.weight) + self.linear1.bias
        h = torch.where(h > 0, h, torch.zeros_like(h))
        return torch.einsum("...f,df->...d", h, self.linear2.weight) + self.linear2.bias


CASES = [
    BlindCase(CHECK, "no_relu", FFNoRelu, "mistake", "I forgot the ReLU between the two layers."),
    BlindCase(
        CHECK,
        "relu_after_linear2",
        FFReluAtEnd,
        "mistake",
        "I put a ReLU after linear2 as well, so the output is never negative.",
    ),
    BlindCase(
        CHECK,
        "relu_on_input",
        FFReluOnInput,
        "mistake",
        "I applied the ReLU to the input before linear1 instead of between the layers.",
    ),
    BlindCase(
        CHECK, "gelu", FFGelu, "mistake", "I used GELU (as BERT and GPT do) instead of ReLU."
    ),
    BlindCase(
        CHECK,
        "residual_inside",
        FFResidualInside,
        "mistake",
        "I added the residual x inside the feed-forward network.",
    ),
    BlindCase(
        CHECK,
        "functional_dropout_always_on",
        FFFunctionalDropout,
        "mistake",
        "I used F.dropout(h, p=0.1), which drops even in eval mode because training "
        "defaults to True.",
    ),
    BlindCase(
        CHECK, "linear2_without_bias", FFNoBiasSecond, "mistake", "I made linear2 without a bias."
    ),
    BlindCase(
        CHECK,
        "leaky_relu",
        FFLeakyRelu,
        "mistake",
        "I used leaky_relu with slope 0.2 (from a GAN tutorial) instead of ReLU.",
    ),
    BlindCase(
        CHECK,
        "layer_sizes_swapped",
        FFSizesSwapped,
        "mistake",
        "I wrote nn.Linear(d_ff, d_model) for linear1 and nn.Linear(d_model, d_ff) for "
        "linear2, the sizes swapped.",
    ),
    BlindCase(
        CHECK,
        "layer_norm_inside",
        FFLayerNormInside,
        "mistake",
        "I normalized the output with layer_norm inside the module (the Add & Norm "
        "belongs outside).",
    ),
    BlindCase(
        CHECK,
        "normalized_over_positions",
        FFNormOverPositions,
        "mistake",
        "I divided the hidden activations by their sum over dim=1 (the positions), so "
        "positions influence each other.",
    ),
    BlindCase(
        CHECK,
        "functional_linear_clamp",
        FFFunctionalLinear,
        "correct",
        "I used F.linear with the layers' weights and clamp_min(0) for the ReLU.",
    ),
    BlindCase(
        CHECK,
        "relu_and_dropout_modules",
        FFWithDropoutModule,
        "correct",
        "I added nn.ReLU and an nn.Dropout whose probability defaults to 0.",
    ),
    BlindCase(
        CHECK,
        "flatten_positions",
        FFFlattenPositions,
        "correct",
        "I flattened (B, T, D) to (B*T, D), applied the layers and reshaped back.",
    ),
    BlindCase(
        CHECK,
        "einsum",
        FFEinsum,
        "correct",
        "I wrote both layers with einsum on the weights and the ReLU with torch.where.",
    ),
]
