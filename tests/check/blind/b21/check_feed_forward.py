"""Blind set B21, check_feed_forward (chapter 11): the position-wise feed-forward network."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_feed_forward"


class _Base(nn.Module):
    """The two layers under the book's names; subclasses write forward."""

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)


# ---------------------------------------------------------------- mistakes


class FFNoRelu(_Base):
    def forward(self, x):
        return self.linear2(self.linear1(x))


class FFReluAtOutputToo(_Base):
    def forward(self, x):
        return torch.relu(self.linear2(torch.relu(self.linear1(x))))


class FFReluOnInput(_Base):
    def forward(self, x):
        return self.linear2(self.linear1(torch.relu(x)))


class FFGelu(_Base):
    def forward(self, x):
        return self.linear2(F.gelu(self.linear1(x)))


class FFTanh(_Base):
    def forward(self, x):
        return self.linear2(torch.tanh(self.linear1(x)))


class FFScrambledReshape(_Base):
    def forward(self, x):
        B, T, D = x.shape
        h = torch.relu(self.linear1(x.reshape(B * T, D)))  # one row per position
        return self.linear2(h).reshape(T, B, D).transpose(0, 1)  # back to (B, T, D)


class FFResidual(_Base):
    def forward(self, x):
        return x + self.linear2(torch.relu(self.linear1(x)))


class FFNoBias(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff, bias=False)
        self.linear2 = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x):
        return self.linear2(torch.relu(self.linear1(x)))


class FFReturnsHidden(_Base):
    def forward(self, x):
        hidden = torch.relu(self.linear1(x))
        self.linear2(hidden)
        return hidden


class FFArgsSwapped(nn.Module):
    def __init__(self, d_ff: int, d_model: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.linear2(torch.relu(self.linear1(x)))


class FFMixesPositions(_Base):
    def forward(self, x):
        hidden = torch.relu(self.linear1(x))
        hidden = hidden - hidden.mean(dim=1, keepdim=True)  # centre the hidden units
        return self.linear2(hidden)


class FFReluBetweenBiasAndMatmul(_Base):
    def forward(self, x):
        h = torch.relu(x @ self.linear1.weight.T) + self.linear1.bias  # relu before the bias
        return self.linear2(h)


# ---------------------------------------------------------------- correct variants


class FFFunctional(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = F.linear(x, self.linear1.weight, self.linear1.bias).clamp(min=0)
        return F.linear(h, self.linear2.weight, self.linear2.bias)


class FFFlatten(nn.Module):
    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)
        self.act = nn.ReLU()

    def forward(self, x: Tensor) -> Tensor:
        flat = x.reshape(-1, x.shape[-1])  # (B * T, D)
        out = self.linear2(self.dropout(self.act(self.linear1(flat))))
        return out.reshape(x.shape)


class FFEinsum(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = torch.einsum("btd,fd->btf", x, self.linear1.weight) + self.linear1.bias
        h = torch.maximum(h, torch.zeros_like(h))
        return torch.einsum("btf,df->btd", h, self.linear2.weight) + self.linear2.bias


class FFLoopPositions(_Base):
    def forward(self, x: Tensor) -> Tensor:
        outs = [self.linear2(F.relu(self.linear1(x[:, t]))) for t in range(x.shape[1])]
        return torch.stack(outs, dim=1) if outs else self.linear2(F.relu(self.linear1(x)))


CASES = [
    BlindCase(CHECK, "no_relu", FFNoRelu, "mistake", "I forgot the ReLU between the layers."),
    BlindCase(
        CHECK,
        "relu_at_output_too",
        FFReluAtOutputToo,
        "mistake",
        "I put a ReLU after linear2 as well.",
    ),
    BlindCase(
        CHECK,
        "relu_on_input",
        FFReluOnInput,
        "mistake",
        "I applied the ReLU to x before linear1 instead of between the layers.",
    ),
    BlindCase(CHECK, "gelu", FFGelu, "mistake", "I used GELU instead of ReLU."),
    BlindCase(CHECK, "tanh", FFTanh, "mistake", "I used tanh as the activation."),
    BlindCase(
        CHECK,
        "scrambled_reshape",
        FFScrambledReshape,
        "mistake",
        "I flattened to (B*T, D) and unflattened as (T, B, D) then transposed, which puts "
        "outputs at the wrong positions.",
    ),
    BlindCase(
        CHECK,
        "residual_added",
        FFResidual,
        "mistake",
        "I added the residual x inside the feed-forward block.",
    ),
    BlindCase(CHECK, "no_bias", FFNoBias, "mistake", "I made both layers bias=False."),
    BlindCase(
        CHECK,
        "returns_hidden",
        FFReturnsHidden,
        "mistake",
        "I returned the hidden activations instead of linear2's output.",
    ),
    BlindCase(
        CHECK,
        "constructor_args_swapped",
        FFArgsSwapped,
        "mistake",
        "I wrote __init__(self, d_ff, d_model), the two sizes in the other order.",
    ),
    BlindCase(
        CHECK,
        "mixes_positions",
        FFMixesPositions,
        "mistake",
        "I centred the hidden units over the positions (mean over dim 1).",
    ),
    BlindCase(
        CHECK,
        "relu_before_bias",
        FFReluBetweenBiasAndMatmul,
        "mistake",
        "Writing linear1 by hand, I applied the ReLU before adding its bias.",
    ),
    BlindCase(
        CHECK,
        "functional_clamp",
        FFFunctional,
        "correct",
        "F.linear with the layers' weights, clamp(min=0) as the ReLU.",
    ),
    BlindCase(
        CHECK,
        "flatten_dropout_arg",
        FFFlatten,
        "correct",
        "Flattened to (B*T, D) and reshaped back; nn.ReLU module; a dropout argument (0).",
    ),
    BlindCase(CHECK, "einsum", FFEinsum, "correct", "einsum with the weights, torch.maximum."),
    BlindCase(
        CHECK,
        "loop_over_positions",
        FFLoopPositions,
        "correct",
        "A loop over the positions, stacked back.",
    ),
]
