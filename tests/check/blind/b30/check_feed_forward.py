"""Blind set B30, check_feed_forward (chapter 11): the position-wise feed-forward network, as
readers write the module."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_feed_forward"


class _Layers(nn.Module):
    """linear1 and linear2 as the docstring asks; the mistakes below change forward only."""

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)


# ---------------------------------------------------------------- mistakes


class FFNNoReLU(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(x))


class FFNReLUAtTheEnd(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(self.linear1(x)))


class FFNReLUTwice(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return F.relu(self.linear2(F.relu(self.linear1(x))))


class FFNReLUOnInput(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(torch.relu(x)))


class FFNGELU(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.gelu(self.linear1(x)))  # as in BERT and GPT


class FFNResidualInside(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return x + self.linear2(torch.relu(self.linear1(x)))  # Add belongs to the sublayer


class FFNNormInside(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        y = x + self.linear2(torch.relu(self.linear1(x)))
        return F.layer_norm(y, y.shape[-1:])  # Add & Norm


class FFNDropoutAlwaysOn(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.dropout(torch.relu(self.linear1(x)), p=0.1))


class FFNNoBias(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff, bias=False)
        self.linear2 = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFNSizesSwapped(nn.Module):
    def __init__(self, d_ff: int, d_model: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFNFlattenMismatch(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        rows = x.transpose(0, 1).reshape(T * B, D)  # one row per position
        out = self.linear2(torch.relu(self.linear1(rows)))
        return out.reshape(B, T, D)  # back to the batch


class FFNReturnsHidden(_Layers):
    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        hidden = torch.relu(self.linear1(x))
        return self.linear2(hidden), hidden  # the hidden layer too, to look at


class FFNMixesPositions(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        hidden = torch.relu(self.linear1(x))
        hidden = hidden - hidden.mean(dim=1, keepdim=True)  # centred over the sentence
        return self.linear2(hidden)


# ---------------------------------------------------------------- correct variants


class FFNInPlaceReLU(_Layers):
    """ReLU done in place on linear1's output, with an extra dropout argument (default 0)."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__(d_model, d_ff)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        h = self.linear1(x)
        h.relu_()
        return self.linear2(self.dropout(h))


class FFNFlatAddmm(_Layers):
    """All positions flattened into rows for addmm, then reshaped back to x's shape."""

    def forward(self, x: Tensor) -> Tensor:
        rows = x.reshape(-1, x.shape[-1])  # (B*T, D), batch first like x
        h = torch.addmm(self.linear1.bias, rows, self.linear1.weight.t()).relu()
        out = torch.addmm(self.linear2.bias, h, self.linear2.weight.t())
        return out.reshape(*x.shape[:-1], out.shape[-1])


class FFNEinsumClamp(_Layers):
    """einsum with the weight matrices, clamp(min=0) as the ReLU."""

    def forward(self, x: Tensor) -> Tensor:
        h = torch.einsum("...d,fd->...f", x, self.linear1.weight) + self.linear1.bias
        h = h.clamp(min=0)
        return torch.einsum("...f,df->...d", h, self.linear2.weight) + self.linear2.bias


CASES = [
    BlindCase(CHECK, "no_relu", FFNNoReLU, "mistake", "I forgot the ReLU between the layers."),
    BlindCase(
        CHECK,
        "relu_after_linear2",
        FFNReLUAtTheEnd,
        "mistake",
        "I put the ReLU after linear2 instead of between the two layers.",
    ),
    BlindCase(
        CHECK,
        "relu_after_both",
        FFNReLUTwice,
        "mistake",
        "I applied a ReLU after each linear layer, so the output cannot be negative.",
    ),
    BlindCase(
        CHECK,
        "relu_on_input",
        FFNReLUOnInput,
        "mistake",
        "I applied the ReLU to x before linear1.",
    ),
    BlindCase(
        CHECK,
        "gelu",
        FFNGELU,
        "mistake",
        "I used GELU as BERT and GPT do, not the ReLU of the paper.",
    ),
    BlindCase(
        CHECK,
        "residual_inside",
        FFNResidualInside,
        "mistake",
        "I added x back inside the network: the residual belongs to the sublayer around it.",
    ),
    BlindCase(
        CHECK,
        "add_and_norm_inside",
        FFNNormInside,
        "mistake",
        "I did the Add & Norm inside the feed-forward module.",
    ),
    BlindCase(
        CHECK,
        "dropout_always_on",
        FFNDropoutAlwaysOn,
        "mistake",
        "I added F.dropout(p=0.1) on the hidden layer; F.dropout drops even in eval mode.",
    ),
    BlindCase(
        CHECK,
        "no_biases",
        FFNNoBias,
        "mistake",
        "I made both layers with bias=False.",
    ),
    BlindCase(
        CHECK,
        "constructor_sizes_swapped",
        FFNSizesSwapped,
        "mistake",
        "My __init__ takes (d_ff, d_model), the other order.",
    ),
    BlindCase(
        CHECK,
        "flattened_time_first",
        FFNFlattenMismatch,
        "mistake",
        "I flattened the positions time first and reshaped back batch first, so the outputs "
        "land on the wrong positions.",
    ),
    BlindCase(
        CHECK,
        "returns_hidden_too",
        FFNReturnsHidden,
        "mistake",
        "I return (output, hidden) instead of the output alone.",
    ),
    BlindCase(
        CHECK,
        "hidden_centred_over_positions",
        FFNMixesPositions,
        "mistake",
        "I centred the hidden layer over the positions of the sentence, so positions "
        "influence each other.",
    ),
    BlindCase(
        CHECK,
        "in_place_relu_with_dropout_arg",
        FFNInPlaceReLU,
        "correct",
        "relu_ in place on linear1's output; an extra dropout argument defaulting to 0.",
    ),
    BlindCase(
        CHECK,
        "flattened_rows_addmm",
        FFNFlatAddmm,
        "correct",
        "All positions flattened into (B*T, D) rows for addmm and reshaped back.",
    ),
    BlindCase(
        CHECK,
        "einsum_clamp",
        FFNEinsumClamp,
        "correct",
        "einsum with the weight matrices plus the biases, clamp(min=0) as the ReLU.",
    ),
]
