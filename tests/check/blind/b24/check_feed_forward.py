"""Blind set B24, check_feed_forward (chapter 11): the position-wise FFN as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_feed_forward"


class _FFN(nn.Module):
    """The book's two layers; each case below changes only ``forward``."""

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)


# ---------------------------------------------------------------- mistakes


class FFNNoReLU(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(x))


class FFNReLUAtBothEnds(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(torch.relu(self.linear1(x))))


class FFNReLUAfterLinear2(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        return F.relu(self.linear2(self.linear1(x)))


class FFNReLUOnInput(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(torch.relu(x)))


class FFNGELU(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.gelu(self.linear1(x)))


class FFNResidualInside(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        return x + self.linear2(torch.relu(self.linear1(x)))


class FFNNormInside(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        x = F.layer_norm(x, x.shape[-1:])  # pre-norm
        return self.linear2(torch.relu(self.linear1(x)))


class FFNDropoutAlwaysOn(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        hidden = F.dropout(torch.relu(self.linear1(x)), p=0.1)
        return self.linear2(hidden)


class FFNReshapedBackWrong(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        flat = self.linear2(torch.relu(self.linear1(x.reshape(B * T, D))))  # (B*T, D)
        return flat.reshape(T, B, D).transpose(0, 1)  # back to (B, T, D)


class FFNReturnsHidden(_FFN):
    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        hidden = torch.relu(self.linear1(x))
        return self.linear2(hidden), hidden  # the hidden layer, to look at


class FFNSigmoid(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.sigmoid(self.linear1(x)))


# ---------------------------------------------------------------- correct variants


class FFNFunctionalClamp(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        hidden = F.linear(x, self.linear1.weight, self.linear1.bias).clamp(min=0)
        return F.linear(hidden, self.linear2.weight, self.linear2.bias)


class FFNInPlaceReLUDropoutArg(nn.Module):
    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(F.relu(self.linear1(x), inplace=True)))


class FFNSequentialFlat(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.net = nn.Sequential(self.linear1, nn.ReLU(), self.linear2)  # the same two layers

    def forward(self, x: Tensor) -> Tensor:
        shape = x.shape
        return self.net(x.reshape(-1, shape[-1])).reshape(shape)


class FFNEinsum(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        hidden = torch.einsum("...d,fd->...f", x, self.linear1.weight) + self.linear1.bias
        hidden = torch.where(hidden > 0, hidden, torch.zeros_like(hidden))
        return torch.einsum("...f,df->...d", hidden, self.linear2.weight) + self.linear2.bias


CASES = [
    BlindCase(CHECK, "no_relu", FFNNoReLU, "mistake", "I left out the ReLU."),
    BlindCase(
        CHECK,
        "relu_at_both_ends",
        FFNReLUAtBothEnds,
        "mistake",
        "I put a ReLU after linear2 as well.",
    ),
    BlindCase(
        CHECK,
        "relu_after_linear2_only",
        FFNReLUAfterLinear2,
        "mistake",
        "I put the ReLU after linear2 instead of between the layers.",
    ),
    BlindCase(
        CHECK,
        "relu_on_input",
        FFNReLUOnInput,
        "mistake",
        "I applied the ReLU to x before linear1.",
    ),
    BlindCase(CHECK, "gelu", FFNGELU, "mistake", "I used GELU instead of ReLU."),
    BlindCase(CHECK, "sigmoid", FFNSigmoid, "mistake", "I used a sigmoid instead of ReLU."),
    BlindCase(
        CHECK,
        "residual_inside",
        FFNResidualInside,
        "mistake",
        "I added the residual x inside the feed-forward block.",
    ),
    BlindCase(
        CHECK,
        "layer_norm_inside",
        FFNNormInside,
        "mistake",
        "I normalised x (pre-norm) inside the feed-forward block.",
    ),
    BlindCase(
        CHECK,
        "dropout_always_on",
        FFNDropoutAlwaysOn,
        "mistake",
        "I used F.dropout(hidden, p=0.1), which drops even in eval mode.",
    ),
    BlindCase(
        CHECK,
        "reshaped_back_wrong",
        FFNReshapedBackWrong,
        "mistake",
        "I flattened to (B*T, D) and reshaped back as (T, B, D) then transposed, which mixes up "
        "the rows.",
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
        "functional_clamp",
        FFNFunctionalClamp,
        "correct",
        "F.linear with the layers' weights and clamp(min=0) for the ReLU.",
    ),
    BlindCase(
        CHECK,
        "inplace_relu_dropout_arg",
        FFNInPlaceReLUDropoutArg,
        "correct",
        "F.relu(..., inplace=True) on linear1's output; an extra dropout argument (default 0).",
    ),
    BlindCase(
        CHECK,
        "sequential_on_flat_rows",
        FFNSequentialFlat,
        "correct",
        "An nn.Sequential of the same two layers, run on the rows flattened to (-1, D).",
    ),
    BlindCase(
        CHECK,
        "einsum_where",
        FFNEinsum,
        "correct",
        "einsum with the weight matrices and torch.where for the ReLU.",
    ),
]
